#version 430
// Pressure.coarse_cycle: the rest of a V(2,2) cycle from the first level with both sides <= COARSE_SIDE
// down to the coarsest, in ONE workgroup: smooth, restrict, recurse, prolong, smooth and the coarsest
// level's exact solve are sub-steps separated by barrier(), on q and b held in shared memory (27 KB for
// COARSE_SIDE 64). The arithmetic is that of smooth.comp, smooth_restrict.comp and prolong_smooth.comp
// (hydro.reference.smoke.v_cycle), so it replaces ~50 dispatches with one, not with an approximation.
// Level k of this pass is level first + k of the solver; u_size is the first one's. Its q starts at
// 0 when it was restricted into (u_from_zero), else from the image (a grid that small has no finer level),
// scaled on a warm solve's first cycle (warm.glsl).
#include "common/bindings.glsl"
#include "smoke/warm.glsl"

#define GROUP 1024
layout(local_size_x = GROUP) in;

#define MAX_LEVELS 8
const int B_CELLS = (COARSE_SIDE * COARSE_SIDE - 16) / 3;     // levels below the first: sides <= COARSE_SIDE / 2
const int Q_CELLS = COARSE_SIDE * COARSE_SIDE + B_CELLS;
shared float s_q[Q_CELLS];
shared float s_b[B_CELLS];

// every level's (W_right, W_top, D, diagonal) side by side: level k starts at x = sum of the widths before it
layout(binding = B_SMOKE_COEF) uniform sampler2D u_coef;
layout(binding = B_SMOKE_RHS) uniform sampler2D u_rhs;                // the first level's b
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict image2D u_q_io;  // the first level's q
uniform ivec2 u_size;
uniform int u_levels;            // levels in this pass, the coarsest included
// the coarsest level's (<= 4 x 4 cells) solve as a matrix, row-major over its cells in row-major order
// (hydro.reference.smoke.coarse_inverse)
uniform float u_coarsest[256];
shared float s_r[16];
uniform int u_from_zero;

ivec2 g_size[MAX_LEVELS];
int g_x0[MAX_LEVELS], g_q0[MAX_LEVELS], g_b0[MAX_LEVELS];

vec4 coef(int l, ivec2 c) { return texelFetch(u_coef, ivec2(g_x0[l] + c.x, c.y), 0); }
float q_at(int l, ivec2 c) { return s_q[g_q0[l] + c.y * g_size[l].x + c.x]; }
float b_at(int l, ivec2 c) { return l == 0 ? texelFetch(u_rhs, c, 0).r : s_b[g_b0[l] + c.y * g_size[l].x + c.x]; }

float neighbour_sum(int l, ivec2 c) {            // as poisson.glsl
    vec4 k = coef(l, c);
    float s = 0.0;
    if (c.x + 1 < g_size[l].x) s += k.x * q_at(l, c + ivec2(1, 0));
    if (c.y + 1 < g_size[l].y) s += k.y * q_at(l, c + ivec2(0, 1));
    if (c.x > 0) s += coef(l, c - ivec2(1, 0)).x * q_at(l, c - ivec2(1, 0));
    if (c.y > 0) s += coef(l, c - ivec2(0, 1)).y * q_at(l, c - ivec2(0, 1));
    return s;
}

void sweep(int l, int parity) {
    ivec2 n = g_size[l];
    for (int i = int(gl_LocalInvocationIndex); i < n.x * n.y; i += GROUP) {
        ivec2 c = ivec2(i % n.x, i / n.x);
        if ((c.x + c.y) % 2 != parity) continue;
        float diag = coef(l, c).w;
        s_q[g_q0[l] + i] = diag > 0.0 ? (neighbour_sum(l, c) - b_at(l, c)) / diag : 0.0;
    }
    barrier();
}

void sweeps(int l, int count) {
    for (int k = 0; k < count; ++k) {
        sweep(l, 0);
        sweep(l, 1);
    }
}

float residual_at(int l, ivec2 c) {              // b - L q; 0 in a solid cell (diag 0)
    float diag = coef(l, c).w;
    return diag > 0.0 ? b_at(l, c) - (neighbour_sum(l, c) - diag * q_at(l, c)) : 0.0;
}

void coarsest_solve(int l) {                     // q += M (b - L q): exact (hydro.reference.smoke.coarse_solve)
    ivec2 n = g_size[l];
    int cells = n.x * n.y;
    for (int i = int(gl_LocalInvocationIndex); i < cells; i += GROUP) {
        ivec2 c = ivec2(i % n.x, i / n.x);
        s_r[i] = residual_at(l, c);
    }
    barrier();
    for (int i = int(gl_LocalInvocationIndex); i < cells; i += GROUP) {
        float dq = 0.0;
        for (int j = 0; j < cells; ++j) dq += u_coarsest[i * cells + j] * s_r[j];
        s_q[g_q0[l] + i] += dq;
    }
    barrier();
}

void restrict_to(int l) {                        // b[l+1] = sum of the children's residuals, q[l+1] = 0
    ivec2 n = g_size[l + 1];
    for (int i = int(gl_LocalInvocationIndex); i < n.x * n.y; i += GROUP) {
        ivec2 cc = ivec2(i % n.x, i / n.x);
        float r = 0.0;
        for (int k = 0; k < 4; ++k) {
            ivec2 c = 2 * cc + ivec2(k & 1, k >> 1);
            if (any(greaterThanEqual(c, g_size[l]))) continue;
            r += residual_at(l, c);
        }
        s_b[g_b0[l + 1] + i] = r;
        s_q[g_q0[l + 1] + i] = 0.0;
    }
    barrier();
}

void prolong_from(int l) {                       // q[l] += bilinear correction from q[l+1], as prolong_smooth.comp
    ivec2 n = g_size[l], nc = g_size[l + 1];
    for (int i = int(gl_LocalInvocationIndex); i < n.x * n.y; i += GROUP) {
        ivec2 c = ivec2(i % n.x, i / n.x);
        if (coef(l, c).w <= 0.0) continue;
        ivec2 base = c / 2;
        ivec2 dir = ivec2(c.x % 2 == 0 ? -1 : 1, c.y % 2 == 0 ? -1 : 1);
        float total = 0.0, weight = 0.0;
        for (int k = 0; k < 4; ++k) {
            ivec2 o = ivec2(k & 1, k >> 1);
            float w = (o.x == 0 ? 3.0 : 1.0) * (o.y == 0 ? 3.0 : 1.0);
            ivec2 cc = base + o * dir;
            if (any(lessThan(cc, ivec2(0))) || any(greaterThanEqual(cc, nc))) continue;
            if (coef(l + 1, cc).w <= 0.0) continue;
            total += w * q_at(l + 1, cc);
            weight += w;
        }
        if (weight > 0.0) s_q[g_q0[l] + i] += total / weight;
    }
    barrier();
}

void main() {
    g_size[0] = u_size;
    g_x0[0] = g_q0[0] = g_b0[0] = 0;
    for (int l = 1; l < u_levels; ++l) {
        g_size[l] = (g_size[l - 1] + 1) / 2;                      // hydro.reference.smoke.coarse_shape
        g_x0[l] = g_x0[l - 1] + g_size[l - 1].x;
        g_q0[l] = g_q0[l - 1] + g_size[l - 1].x * g_size[l - 1].y;
        g_b0[l] = l == 1 ? 0 : g_b0[l - 1] + g_size[l - 1].x * g_size[l - 1].y;
    }
    float scale = warm_scale();  // the finest level (u_from_zero 0): q as it is, or a warm start's alpha q0
    for (int i = int(gl_LocalInvocationIndex); i < u_size.x * u_size.y; i += GROUP)
        s_q[i] = u_from_zero != 0 ? 0.0 : scale * imageLoad(u_q_io, ivec2(i % u_size.x, i / u_size.x)).r;
    barrier();
    int last = u_levels - 1;
    for (int l = 0; l < last; ++l) {
        sweeps(l, 2);
        restrict_to(l);
    }
    coarsest_solve(last);
    for (int l = last - 1; l >= 0; --l) {
        prolong_from(l);
        sweeps(l, 2);
    }
    for (int i = int(gl_LocalInvocationIndex); i < u_size.x * u_size.y; i += GROUP)
        imageStore(u_q_io, ivec2(i % u_size.x, i / u_size.x), vec4(s_q[i]));
}
