#version 430
// Renderer._velocity: depth-averaged water velocity at each cell (world units/s) from the face flows
// (common/velocity.glsl's cell_velocity), zero where the column is shallower than u_min_depth.
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/velocity.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_OUT_IMAGE, rg32f) uniform restrict writeonly image2D u_velocity_out;

uniform float u_face_width;             // world units
uniform float u_min_depth;              // world units

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    vec2 v = cell_velocity(c, imageLoad(u_water_in, c).r, u_face_width, u_min_depth);
    imageStore(u_velocity_out, c, vec4(v, 0.0, 0.0));
}
