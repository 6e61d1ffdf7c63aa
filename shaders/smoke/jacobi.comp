#version 430
// SmokeGrid._jacobi: the popular demos' pressure sweep (Harris, GPU Gems ch. 38; PavelDoGreat):
// q = (sum of the 4 neighbours - b) / 4 with clamp-to-edge at walls and solids (their ghost is the
// cell itself) and q = 0 past open sides. Offered for comparison: it does not converge in 20-40 sweeps.
#include "smoke/poisson.glsl"

layout(binding = B_SMOKE_Q) uniform sampler2D u_q;
layout(binding = B_SMOKE_RHS) uniform sampler2D u_rhs;
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict writeonly image2D u_q_out;

float q_at(ivec2 c) { return texelFetch(u_q, c, 0).r; }

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    vec4 k = coef(c);
    float q = 0.0;
    if (k.w > 0.0) {
        float walls = 4.0 - k.w;                 // sides that are neither fluid nor open
        q = (neighbour_sum(c) + walls * q_at(c) - texelFetch(u_rhs, c, 0).r) * 0.25;
    }
    imageStore(u_q_out, c, vec4(q));
}
