// Norms of the residual and the right-hand side, reduced on the GPU in two passes (tiles, then one
// group), sums in fp64: |r|^2, |b|^2, max |r|, max |b| over the cells.
struct Norms { double r2; double b2; float rmax; float bmax; };
#define NORMS_GROUP 256
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
