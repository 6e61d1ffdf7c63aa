// Norms of the residual and the right-hand side, reduced on the GPU in two steps (one record per tile
// in u_partials, then one group folds them), sums in fp64: |r|^2, |b|^2, max |r|, max |b| over the cells.
struct Norms { double r2; double b2; float rmax; float bmax; };
#define NORMS_GROUP 256
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

// Invocation i of a NORMS_GROUP group: the first `count` records of u_partials folded into s_*[0].
void fold_partials(uint i, int count) {
    double r2 = 0.0, b2 = 0.0;
    float rmax = 0.0, bmax = 0.0;
    for (int k = int(i); k < count; k += NORMS_GROUP) {
        Norms n = u_partials[k];
        r2 += n.r2; b2 += n.b2;
        rmax = max(rmax, n.rmax); bmax = max(bmax, n.bmax);
    }
    s_r2[i] = r2; s_b2[i] = b2; s_rmax[i] = rmax; s_bmax[i] = bmax;
    reduce_norms(i);
}
