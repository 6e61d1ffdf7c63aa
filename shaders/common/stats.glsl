// Totals and extremes of the water state, reduced on the GPU in two passes (tiles, then one group).
// volume: sum of depths in fp64 (times the cell area on the CPU); max_depth and min_terrain (the lowest
// bed on the grid's edge, where level faces are) feed the stable-substep bound.
// max_speed (SPEED): the fastest water, world units/s, an upper bound of each cell's speed (the sum over
// the lattice's axes of its mean face velocity) in cells deeper than SPEED_DEPTH; films are left out
// (the model caps their momentum's speed, params.speed_cap).
// taken (CYCLE): the depth the water cycle took to evaporation and drains since the last pass, which
// the pass adds to the ledger and clears (common/cycle.glsl's record).
struct Stats { double depth_sum; float max_depth; float min_terrain; float max_speed; float unused; dvec2 taken; };
#define STATS_GROUP 256
shared double s_sum[STATS_GROUP];
shared float s_max[STATS_GROUP];
shared float s_min[STATS_GROUP];
shared float s_speed[STATS_GROUP];
#if CYCLE
shared dvec2 s_taken[STATS_GROUP];
#endif

// Tree reduction of the shared arrays into slot 0; every invocation of the group must call it.
void reduce_shared(uint i) {
    barrier();
    for (uint stride = STATS_GROUP / 2; stride > 0; stride >>= 1) {
        if (i < stride) {
            s_sum[i] += s_sum[i + stride];
            s_max[i] = max(s_max[i], s_max[i + stride]);
            s_min[i] = min(s_min[i], s_min[i + stride]);
            s_speed[i] = max(s_speed[i], s_speed[i + stride]);
#if CYCLE
            s_taken[i] += s_taken[i + stride];
#endif
        }
        barrier();
    }
}
