#version 430
// SmokeGrid._reduce, pass 2 of 2: one group folds the tile records of residual.comp into u_norms.
#include "common/bindings.glsl"
#include "smoke/norms.glsl"
layout(local_size_x = NORMS_GROUP) in;

layout(std430, binding = B_SMOKE_NORMS) restrict writeonly buffer Result { Norms u_norms; };
uniform int u_count;

void main() {
    uint i = gl_LocalInvocationIndex;
    fold_partials(i, NORMS_GROUP, u_count);
    if (i == 0) u_norms = Norms(s_r2[0], s_b2[0], s_rmax[0], s_bmax[0]);
}
