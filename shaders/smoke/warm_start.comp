#version 430
// Pressure.warm_start, pass 1 of 2: per 16 x 16 tile, the sums a warm start needs from the last
// solve's q0 (in u_q) and this one's b on level 0: |L q0|^2 (into the record's r2) and <b, L q0>
// (into b2; rmax, bmax unused). Pass 2 is reduce.comp into the record warm.glsl reads.
#include "smoke/poisson.glsl"
#include "smoke/norms.glsl"

layout(binding = B_SMOKE_Q) uniform sampler2D u_q;
layout(binding = B_SMOKE_RHS) uniform sampler2D u_rhs;

float q_at(ivec2 c) { return texelFetch(u_q, c, 0).r; }

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    uint i = gl_LocalInvocationIndex;
    double lq = 0.0, b = 0.0;
    if (inside(c) && coef(c).w > 0.0) {
        b = double(texelFetch(u_rhs, c, 0).r);
        lq = double(neighbour_sum(c) - coef(c).w * q_at(c));       // (L q0)_c, as poisson.glsl's residual_at
    }
    s_r2[i] = lq * lq;
    s_b2[i] = b * lq;
    s_rmax[i] = 0.0;
    s_bmax[i] = 0.0;
    reduce_norms(i);
    if (i == 0) u_partials[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = Norms(s_r2[0], s_b2[0], 0.0, 0.0);
}
