#version 430
// StatsReduction.queue (hydro/water_stats.py), pass 1 of 2: partial Stats records.
// STATS_ROWS 0 (GPUs): a 16x16 workgroup walks u_walk tiles up the grid, each invocation summing one
// cell of each, and reduces its sums in shared memory into one record (u_walk keeps the records few,
// so the one group of stats_final.comp folds them quickly).
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
uniform int u_walk;                 // tiles each workgroup walks up the grid

void main() {
    uint i = gl_LocalInvocationIndex;
    ivec2 c = ivec2(gl_GlobalInvocationID.x, int(gl_WorkGroupID.y) * LOCAL_SIZE * u_walk + int(gl_LocalInvocationID.y));
    double total = 0.0;
    float hi = 0.0, lo = 3.0e38;
    for (int k = 0; k < u_walk; ++k, c.y += LOCAL_SIZE) {
        if (!inside(c)) continue;
        float h = imageLoad(u_water, c).r;
        total += double(h);
        hi = max(hi, h);
        if (on_edge(c)) lo = min(lo, imageLoad(u_terrain, c).r);      // where level faces are
    }
    s_sum[i] = total;
    s_max[i] = hi;
    s_min[i] = lo;
    reduce_shared(i);
    if (i == 0) u_partials[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = Stats(s_sum[0], s_max[0], s_min[0]);
}
#endif
