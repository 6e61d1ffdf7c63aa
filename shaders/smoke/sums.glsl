// Sums over a pass's cells in fp64 (the scalars' totals), reduced on the GPU in two steps, as
// norms.glsl and fold_last.glsl do for the pressure's norms: each group folds its invocations'
// SUMS dvec4 values in shared memory and stores them in u_sum_partials; the group that finishes last
// folds every group's record, in a fixed order (the same sums whichever group that is), into
// s_sums[k][0]. Define SUMS before including this; the pass's groups are LOCAL_SIZE x LOCAL_SIZE.
#define SUM_GROUP (LOCAL_SIZE * LOCAL_SIZE)       // a power of 4
layout(std430, binding = B_SMOKE_SUM_PARTIALS) coherent buffer SumPartials { dvec4 u_sum_partials[]; };
layout(std430, binding = B_SMOKE_SUMS) coherent buffer Sums {
    uint u_sum_groups_done;         // groups that wrote their record; the last one resets it to 0
    dvec4 u_sums[SUMS];             // at offset 32 whatever SUMS is (conserve.comp reads them)
};
shared dvec4 s_sums[SUMS][SUM_GROUP];
shared bool s_sums_last;

// s_sums[k][0] = the sum of s_sums[k][*], folding four entries into one a round (half the barriers
// of a pairwise tree: a software rasteriser pays for each by splitting the shader there), in a fixed
// order.
void reduce_sums(uint i) {
    barrier();
    for (uint quarter = SUM_GROUP / 4; quarter > 0; quarter /= 4) {
        if (i < quarter)
            for (int k = 0; k < SUMS; ++k)
                s_sums[k][i] += (s_sums[k][i + quarter] + s_sums[k][i + 2 * quarter]) + s_sums[k][i + 3 * quarter];
        barrier();
    }
}

// Every invocation i of every group calls this with its values. Returns true in the group that
// finishes last, whose s_sums[k][0] then hold the sums over the whole grid (its invocation 0 stores
// what it needs and resets u_sum_groups_done); false in the others.
bool sum_over_grid(uint i, dvec4 v[SUMS]) {
    for (int k = 0; k < SUMS; ++k) s_sums[k][i] = v[k];
    reduce_sums(i);
    uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    if (i == 0) {
        uint g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
        for (int k = 0; k < SUMS; ++k) u_sum_partials[g * SUMS + k] = s_sums[k][0];
        memoryBarrierBuffer();                          // the record is visible before the count says so
        s_sums_last = atomicAdd(u_sum_groups_done, 1u) == groups - 1u;
    }
    barrier();
    if (!s_sums_last) return false;
    memoryBarrierBuffer();
    for (int k = 0; k < SUMS; ++k) {
        dvec4 total = dvec4(0.0);
        for (uint r = i; r < groups; r += SUM_GROUP) total += u_sum_partials[r * SUMS + k];
        s_sums[k][i] = total;
    }
    reduce_sums(i);
    return true;
}
