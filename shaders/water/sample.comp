#version 430
// Sampler's own pass (hydro/water_probes.py): one invocation a point of common/sample.glsl; what is
// read back is u_sample_count vec4s, never the grid.
#include "common/cells.glsl"
#include "common/water.glsl"
#define GROUP 64
layout(local_size_x = GROUP) in;

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
#include "common/velocity.glsl"
#include "common/sample.glsl"

void main() {
    int i = int(gl_GlobalInvocationID.x);
    if (i < u_sample_count) sample_point(i);
}
