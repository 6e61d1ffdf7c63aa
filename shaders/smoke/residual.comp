#version 430
// SmokeGrid._residual, pass 1 of 2: per 16 x 16 tile, the norms of r = b - L q and of b on level 0
// (u_with_operator 0: r = b, to measure a divergence field alone). Pass 2 is reduce.comp.
#include "smoke/poisson.glsl"
#include "smoke/norms.glsl"

layout(binding = B_SMOKE_Q) uniform sampler2D u_q;
layout(binding = B_SMOKE_RHS) uniform sampler2D u_rhs;
uniform int u_with_operator;

float q_at(ivec2 c) { return texelFetch(u_q, c, 0).r; }

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    uint i = gl_LocalInvocationIndex;
    float b = 0.0, r = 0.0;
    if (inside(c) && coef(c).w > 0.0) {
        b = texelFetch(u_rhs, c, 0).r;
        r = u_with_operator != 0 ? residual_at(c, b) : b;
    }
    s_r2[i] = double(r) * double(r);
    s_b2[i] = double(b) * double(b);
    s_rmax[i] = abs(r);
    s_bmax[i] = abs(b);
    reduce_norms(i);
    if (i == 0) u_partials[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = Norms(s_r2[0], s_b2[0], s_rmax[0], s_bmax[0]);
}
