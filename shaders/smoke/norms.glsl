// Norms of the residual and the right-hand side, reduced on the GPU in two steps (one record per tile
// in u_partials, then one group folds them), sums in fp64: |r|^2, |b|^2, max |r|, max |b| over the cells.
struct Norms { double r2; double b2; float rmax; float bmax; };
#define NORMS_GROUP 256          // entries of the shared arrays; a group may have more invocations
#if defined(GROUP_CELLS) && GROUP_CELLS % NORMS_GROUP != 0
#error "norms.glsl: a group must be a multiple of NORMS_GROUP invocations"
#endif
layout(std430, binding = B_SMOKE_PARTIALS) coherent buffer Partials { Norms u_partials[]; };
shared double s_r2[NORMS_GROUP];
shared double s_b2[NORMS_GROUP];
shared float s_rmax[NORMS_GROUP];
shared float s_bmax[NORMS_GROUP];

void reduce_norms(uint i) {
    barrier();
    for (uint stride = NORMS_GROUP / 2; stride > 0; stride >>= 1) {
        if (i < stride) {
            s_r2[i] += s_r2[i + stride];
            s_b2[i] += s_b2[i + stride];
            s_rmax[i] = max(s_rmax[i], s_rmax[i + stride]);
            s_bmax[i] = max(s_bmax[i], s_bmax[i + stride]);
        }
        barrier();
    }
}

// Every invocation i of a group of `group` (a multiple of NORMS_GROUP) calls this with its values: they
// are folded into s_*[0], NORMS_GROUP invocations at a time, then reduced.
void group_norms(uint i, uint group, double r2, double b2, float rmax, float bmax) {
    for (uint k = 0u; k < group / NORMS_GROUP; ++k) {
        if (i / NORMS_GROUP == k) {
            uint j = i % NORMS_GROUP;
            if (k > 0u) {
                r2 += s_r2[j]; b2 += s_b2[j];
                rmax = max(rmax, s_rmax[j]); bmax = max(bmax, s_bmax[j]);
            }
            s_r2[j] = r2; s_b2[j] = b2; s_rmax[j] = rmax; s_bmax[j] = bmax;
        }
        barrier();
    }
    reduce_norms(i);
}

// Invocation i of a group of `group` (a multiple of NORMS_GROUP): the first `count` records of
// u_partials folded into s_*[0].
void fold_partials(uint i, uint group, int count) {
    double r2 = 0.0, b2 = 0.0;
    float rmax = 0.0, bmax = 0.0;
    for (int k = int(i); k < count; k += int(group)) {
        Norms n = u_partials[k];
        r2 += n.r2; b2 += n.b2;
        rmax = max(rmax, n.rmax); bmax = max(bmax, n.bmax);
    }
    group_norms(i, group, r2, b2, rmax, bmax);
}
