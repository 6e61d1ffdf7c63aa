#version 430
// WaterGrid._stats, pass 1 of 2: one Stats record per 16x16 tile.
#include "common/grid.glsl"
#include "common/bindings.glsl"
#include "common/stats.glsl"

layout(binding = B_TERRAIN, r32f) uniform restrict readonly image2D u_terrain;
layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(std430, binding = B_PARTIALS) restrict writeonly buffer Partials { Stats u_partials[]; };

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    uint i = gl_LocalInvocationIndex;
    bool valid = inside(c);
    float h = valid ? imageLoad(u_water, c).r : 0.0;
    s_sum[i] = double(h);
    s_max[i] = h;
    bool edge = c.x == 0 || c.y == 0 || c.x == u_size.x - 1 || c.y == u_size.y - 1;
    s_min[i] = valid && edge ? imageLoad(u_terrain, c).r : 3.0e38;      // where level faces are
    reduce_shared(i);
    if (i == 0) u_partials[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = Stats(s_sum[0], s_max[0], s_min[0]);
}
