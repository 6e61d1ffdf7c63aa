#version 430
// StatsReduction.queue (hydro/water_stats.py), pass 2 of 2: one group folds the tile records into u_stats.
#include "common/bindings.glsl"
#include "common/stats.glsl"
layout(local_size_x = STATS_GROUP) in;

layout(std430, binding = B_PARTIALS) restrict readonly buffer Partials { Stats u_partials[]; };
layout(std430, binding = B_STATS) restrict writeonly buffer Result { Stats u_stats; };
uniform int u_count;                // number of tile records
#if CYCLE
// what the water cycle took goes to the ledger (common/ledger.glsl), as volume taken
#include "common/ledger.glsl"
uniform int u_evaporation_slot;
uniform int u_drain_slot;
uniform float u_cell_area;
#endif

void main() {
    uint i = gl_LocalInvocationIndex;
    double total = 0.0;
    dvec2 taken = dvec2(0.0);
    float hi = 0.0, lo = 3.0e38, fast = 0.0;
    for (int k = int(i); k < u_count; k += STATS_GROUP) {
        Stats s = u_partials[k];
        total += s.depth_sum;
        hi = max(hi, s.max_depth);
        lo = min(lo, s.min_terrain);
        fast = max(fast, s.max_speed);
        taken += s.taken;
    }
    s_sum[i] = total;
    s_max[i] = hi;
    s_min[i] = lo;
    s_speed[i] = fast;
#if CYCLE
    s_taken[i] = taken;
#endif
    reduce_shared(i);
    if (i > 0) return;
#if CYCLE
    u_ledger[u_evaporation_slot] -= s_taken[0].x * double(u_cell_area);
    u_ledger[u_drain_slot] -= s_taken[0].y * double(u_cell_area);
    u_stats = Stats(s_sum[0], s_max[0], s_min[0], s_speed[0], 0.0, s_taken[0]);
#else
    u_stats = Stats(s_sum[0], s_max[0], s_min[0], s_speed[0], 0.0, dvec2(0.0));
#endif
}
