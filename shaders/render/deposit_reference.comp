#version 430
// Renderer.track_deposits: the terrain in a rectangle of cells becomes the reference that fresh
// deposits are measured from (a copy on the GPU, no readback).
#include "common/bindings.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = B_TERRAIN, r32f) uniform restrict readonly image2D u_terrain_in;
layout(binding = B_DEPOSIT_REFERENCE, r32f) uniform restrict writeonly image2D u_reference_out;

uniform ivec2 u_origin;                 // first cell of the rectangle
uniform ivec2 u_extent;                 // its width and height, cells

void main() {
    ivec2 k = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(k, u_extent))) return;
    ivec2 c = u_origin + k;
    imageStore(u_reference_out, c, imageLoad(u_terrain_in, c));
}
