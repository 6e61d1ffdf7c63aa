// Totals and extremes of the water state, reduced on the GPU in two passes (tiles, then one group).
// volume: sum of depths in fp64 (times the cell area on the CPU); max_depth and min_terrain (the lowest
// bed on the grid's edge, where level faces are) feed the stable-substep bound.
struct Stats { double depth_sum; float max_depth; float min_terrain; };
#ifndef STATS_GROUP                 // invocations reducing together; STATS_HALF: half the power of two >= it
#define STATS_GROUP 256
#define STATS_HALF 128
#endif
shared double s_sum[STATS_GROUP];
shared float s_max[STATS_GROUP];
shared float s_min[STATS_GROUP];

// Tree reduction of the shared arrays into slot 0; every invocation of the group must call it.
void reduce_shared(uint i) {
    barrier();
    for (uint stride = STATS_HALF; stride > 0; stride >>= 1) {
        if (i < stride && i + stride < STATS_GROUP) {
            s_sum[i] += s_sum[i + stride];
            s_max[i] = max(s_max[i], s_max[i + stride]);
            s_min[i] = min(s_min[i], s_min[i + stride]);
        }
        barrier();
    }
}

// Fold the values of `threads` invocations into the shared arrays, invocation i into slot
// i % STATS_GROUP, then reduce them into slot 0; every invocation of the group must call it.
void reduce_values(uint i, uint threads, double total, float hi, float lo) {
    for (uint base = 0u; base < threads; base += uint(STATS_GROUP)) {
        if (i >= base && i < base + uint(STATS_GROUP)) {
            uint j = i - base;
            s_sum[j] = base == 0u ? total : s_sum[j] + total;
            s_max[j] = base == 0u ? hi : max(s_max[j], hi);
            s_min[j] = base == 0u ? lo : min(s_min[j], lo);
        }
        barrier();
    }
    reduce_shared(i);
}
