#version 430
// SmokeGrid._prolong: q += bilinear interpolation of the coarse correction (cell-centred weights
// 9/16, 3/16, 3/16, 1/16); coarse cells outside the grid or without fluid are left out and the
// weights renormalised. u_size is the fine level.
#include "smoke/poisson.glsl"

layout(binding = B_SMOKE_COARSE_Q) uniform sampler2D u_coarse_q;
layout(binding = B_SMOKE_COARSE_COEF) uniform sampler2D u_coarse_coef;
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict image2D u_q_io;     // own texel only
uniform ivec2 u_coarse_size;

float q_at(ivec2 c) { return imageLoad(u_q_io, c).r; }

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c) || coef(c).w <= 0.0) return;
    ivec2 base = c / 2;
    ivec2 dir = ivec2(c.x % 2 == 0 ? -1 : 1, c.y % 2 == 0 ? -1 : 1);
    float total = 0.0, weight = 0.0;
    for (int k = 0; k < 4; ++k) {
        ivec2 o = ivec2(k & 1, k >> 1);
        float w = (o.x == 0 ? 3.0 : 1.0) * (o.y == 0 ? 3.0 : 1.0);
        ivec2 cc = base + o * dir;
        if (any(lessThan(cc, ivec2(0))) || any(greaterThanEqual(cc, u_coarse_size))) continue;
        if (texelFetch(u_coarse_coef, cc, 0).w <= 0.0) continue;
        total += w * texelFetch(u_coarse_q, cc, 0).r;
        weight += w;
    }
    if (weight > 0.0) imageStore(u_q_io, c, vec4(q_at(c) + total / weight));
}
