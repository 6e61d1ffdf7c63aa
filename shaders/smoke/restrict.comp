#version 430
// SmokeGrid._restrict: the coarse level's right-hand side is the sum of the residuals of its 2 x 2
// children (children past an odd edge count as 0); the coarse iterate starts at 0.
// u_size is the fine level; one invocation per coarse cell.
#include "smoke/poisson.glsl"

layout(binding = B_SMOKE_Q) uniform sampler2D u_q;
layout(binding = B_SMOKE_RHS) uniform sampler2D u_rhs;
layout(binding = B_SMOKE_RHS_OUT, r32f) uniform restrict writeonly image2D u_coarse_rhs_out;
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict writeonly image2D u_coarse_q_out;
uniform ivec2 u_coarse_size;

float q_at(ivec2 c) { return texelFetch(u_q, c, 0).r; }

void main() {
    ivec2 cc = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(cc, u_coarse_size))) return;
    float r = 0.0;
    for (int k = 0; k < 4; ++k) {
        ivec2 c = 2 * cc + ivec2(k & 1, k >> 1);
        if (inside(c)) r += residual_at(c, texelFetch(u_rhs, c, 0).r);
    }
    imageStore(u_coarse_rhs_out, cc, vec4(r));
    imageStore(u_coarse_q_out, cc, vec4(0.0));
}
