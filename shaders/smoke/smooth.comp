#version 430
// SmokeGrid._smooth: one colour of red-black Gauss-Seidel on one multigrid level,
// q_c = (sum W q_nb - b) / diagonal on cells with (i + j) % 2 == u_parity. In place: a sweep writes
// one colour and reads only the other, so the result does not depend on the order of invocations.
#include "smoke/poisson.glsl"

layout(binding = B_SMOKE_RHS) uniform sampler2D u_rhs;
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict image2D u_q_io;
uniform int u_parity;

float q_at(ivec2 c) { return imageLoad(u_q_io, c).r; }

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c) || (c.x + c.y) % 2 != u_parity) return;
    float diag = coef(c).w;
    float q = diag > 0.0 ? (neighbour_sum(c) - texelFetch(u_rhs, c, 0).r) / diag : 0.0;
    imageStore(u_q_io, c, vec4(q));
}
