#version 430
// SmokeGrid._reduce, pass 2 of 2: one group folds the tile records of residual.comp into u_norms.
#include "common/bindings.glsl"
#include "smoke/norms.glsl"
layout(local_size_x = NORMS_GROUP) in;

layout(std430, binding = B_SMOKE_PARTIALS) restrict readonly buffer Partials { Norms u_partials[]; };
layout(std430, binding = B_SMOKE_NORMS) restrict writeonly buffer Result { Norms u_norms; };
uniform int u_count;

void main() {
    uint i = gl_LocalInvocationIndex;
    double r2 = 0.0, b2 = 0.0;
    float rmax = 0.0, bmax = 0.0;
    for (int k = int(i); k < u_count; k += NORMS_GROUP) {
        Norms n = u_partials[k];
        r2 += n.r2; b2 += n.b2;
        rmax = max(rmax, n.rmax); bmax = max(bmax, n.bmax);
    }
    s_r2[i] = r2; s_b2[i] = b2; s_rmax[i] = rmax; s_bmax[i] = bmax;
    reduce_norms(i);
    if (i == 0) u_norms = Norms(s_r2[0], s_b2[0], s_rmax[0], s_bmax[0]);
}
