#version 430
// WaterGrid._stats, pass 1 of 2: partial Stats records.
// STATS_ROWS 0 (GPUs): one record per 16x16 tile, reduced in shared memory.
// STATS_ROWS n (CPU rasterisers, where a barrier is dear): one record per invocation, which walks
// n cells up a column; no shared memory, no barrier.
#include "common/grid.glsl"
#include "common/bindings.glsl"
#include "common/stats.glsl"

layout(binding = B_TERRAIN, r32f) uniform restrict readonly image2D u_terrain;
layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(std430, binding = B_PARTIALS) restrict writeonly buffer Partials { Stats u_partials[]; };

bool on_edge(ivec2 c) { return c.x == 0 || c.y == 0 || c.x == u_size.x - 1 || c.y == u_size.y - 1; }

#if STATS_ROWS
void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.x, gl_GlobalInvocationID.y * STATS_ROWS);
    double total = 0.0;
    float hi = 0.0, lo = 3.0e38;
    if (inside(c)) {
        int stop = min(c.y + STATS_ROWS, u_size.y);
        for (; c.y < stop; ++c.y) {
            float h = imageLoad(u_water, c).r, z = imageLoad(u_terrain, c).r;
            total += double(h);
            hi = max(hi, h);
            lo = min(lo, on_edge(c) ? z : 3.0e38);      // where level faces are
        }
    }
    uint width = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    u_partials[gl_GlobalInvocationID.y * width + gl_GlobalInvocationID.x] = Stats(total, hi, lo);
}
#else
void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    uint i = gl_LocalInvocationIndex;
    bool valid = inside(c);
    float h = valid ? imageLoad(u_water, c).r : 0.0;
    s_sum[i] = double(h);
    s_max[i] = h;
    s_min[i] = valid && on_edge(c) ? imageLoad(u_terrain, c).r : 3.0e38;      // where level faces are
    reduce_shared(i);
    if (i == 0) u_partials[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = Stats(s_sum[0], s_max[0], s_min[0]);
}
#endif
