#version 430
// WaterGrid._step_fused, single substep: copies the scratch depth back into the water texture.
#include "common/grid.glsl"
#include "common/bindings.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_OUT_IMAGE, r32f) uniform restrict writeonly image2D u_water_out;

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (inside(c)) imageStore(u_water_out, c, imageLoad(u_water_in, c));
}
