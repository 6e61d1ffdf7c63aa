#version 430
// Pressure.coarse_cycle: the rest of a V-cycle from the first level with both sides <= COARSE_SIDE
// down to the coarsest, in ONE workgroup: smooth, restrict, recurse, prolong, smooth and the coarsest
// level's exact solve are sub-steps separated by barrier(), on q, b and every level's operator held in
// shared memory (32 KB for COARSE_SIDE 32), loaded once, so no sub-step fetches a texel. The arithmetic
// is that of smooth_restrict.comp and prolong_smooth.comp (SWEEPS red-black SOR sweeps with OMEGA;
// hydro.reference.smoke.v_cycle), so it replaces ~40 dispatches with one, not with an approximation.
// Level k of this pass is level first + k of the solver; u_size is the first one's. Its q starts at
// 0 when it was restricted into (u_from_zero), else from the image (a grid that small has no finer level),
// scaled on a warm solve's first cycle (warm.glsl).
#include "common/bindings.glsl"
#include "smoke/warm.glsl"

#define GROUP 1024
layout(local_size_x = GROUP) in;

#define MAX_LEVELS 8
#if COARSE_SIDE > 32
#error "coarse_cycle.comp: COARSE_SIDE > 32 needs more than the 32 KB of shared memory GL guarantees"
#endif                           // (and more cells a level than GROUP: lane_cell())
// every level's cells one after another, row-major: COARSE_SIDE^2 and at most a third more below
const int CELLS = COARSE_SIDE * COARSE_SIDE + (COARSE_SIDE * COARSE_SIDE - 16) / 3;
shared float s_q[CELLS];
shared float s_b[CELLS];
shared vec4 s_coef[CELLS];      // (W_right, W_top, D, diagonal) as in poisson.glsl

// every level's operator side by side: level k starts at x = sum of the widths before it
layout(binding = B_SMOKE_COEF) uniform sampler2D u_coef;
layout(binding = B_SMOKE_RHS) uniform sampler2D u_rhs;                // the first level's b
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict image2D u_q_io;  // the first level's q
uniform ivec2 u_size;
uniform int u_levels;            // levels in this pass, the coarsest included
// the coarsest level's (<= 4 x 4 cells) solve as a matrix, row-major over its cells in row-major order
// (hydro.smoke_levels.coarse_inverse)
uniform float u_coarsest[256];
shared float s_r[16];
uniform int u_from_zero;

// A level: its size and where its cells start in the shared arrays; passed by value, so a sub-step
// keeps it in registers.
struct Level { ivec2 n; int at; };
Level g_levels[MAX_LEVELS];

int at(Level L, ivec2 c) { return L.at + c.y * L.n.x + c.x; }

float neighbour_sum(Level L, ivec2 c) {          // as poisson.glsl
    int i = at(L, c);
    vec4 k = s_coef[i];
    float s = 0.0;
    if (c.x + 1 < L.n.x) s += k.x * s_q[i + 1];
    if (c.y + 1 < L.n.y) s += k.y * s_q[i + L.n.x];
    if (c.x > 0) s += s_coef[i - 1].x * s_q[i - 1];
    if (c.y > 0) s += s_coef[i - L.n.x].y * s_q[i - L.n.x];
    return s;
}

// Each sub-step gives invocation i the cell (i % 32, i / 32) of its level (levels are at most 32 x 32):
// no loop over a level's cells and no division by its width.
ivec2 lane_cell() { return ivec2(gl_LocalInvocationIndex & 31u, gl_LocalInvocationIndex >> 5u); }
bool on(Level L, ivec2 c) { return c.x < L.n.x && c.y < L.n.y; }

void sweep(Level L, int parity) {
    ivec2 c = lane_cell();
    if (on(L, c) && (c.x + c.y) % 2 == parity) {
        int i = at(L, c);
        float diag = s_coef[i].w, q = s_q[i];
        s_q[i] = diag > 0.0 ? q + OMEGA * ((neighbour_sum(L, c) - s_b[i]) / diag - q) : 0.0;
    }
    barrier();
}

void sweeps(Level L) {                          // one smoothing: SWEEPS red-black SOR sweeps (tile.glsl)
    for (int k = 0; k < SWEEPS; ++k) {
        sweep(L, 0);
        sweep(L, 1);
    }
}

float residual_at(Level L, ivec2 c) {            // b - L q; 0 in a solid cell (diag 0)
    int i = at(L, c);
    float diag = s_coef[i].w;
    return diag > 0.0 ? s_b[i] - (neighbour_sum(L, c) - diag * s_q[i]) : 0.0;
}

void coarsest_solve(Level L) {                   // q += M (b - L q): exact (hydro.reference.smoke.coarse_solve)
    int cells = L.n.x * L.n.y;
    for (int i = int(gl_LocalInvocationIndex); i < cells; i += GROUP)
        s_r[i] = residual_at(L, ivec2(i % L.n.x, i / L.n.x));
    barrier();
    for (int i = int(gl_LocalInvocationIndex); i < cells; i += GROUP) {
        float dq = 0.0;
        for (int j = 0; j < cells; ++j) dq += u_coarsest[i * cells + j] * s_r[j];
        s_q[L.at + i] += dq;
    }
    barrier();
}

void restrict_to(Level L, Level C) {             // b of C = sum of the children's residuals, q of C = 0
    ivec2 cc = lane_cell();
    if (on(C, cc)) {
        float r = 0.0;
        for (int k = 0; k < 4; ++k) {
            ivec2 c = 2 * cc + ivec2(k & 1, k >> 1);
            if (any(greaterThanEqual(c, L.n))) continue;
            r += residual_at(L, c);
        }
        int i = at(C, cc);
        s_b[i] = r;
        s_q[i] = 0.0;
    }
    barrier();
}

void prolong_from(Level L, Level C) {            // q of L += bilinear correction from C, as prolong_smooth.comp
    ivec2 c = lane_cell();
    int i = at(L, c);
    if (on(L, c) && s_coef[i].w > 0.0) {
        ivec2 base = c / 2;
        ivec2 dir = ivec2(c.x % 2 == 0 ? -1 : 1, c.y % 2 == 0 ? -1 : 1);
        float total = 0.0, weight = 0.0;
        for (int k = 0; k < 4; ++k) {
            ivec2 o = ivec2(k & 1, k >> 1);
            float w = (o.x == 0 ? 3.0 : 1.0) * (o.y == 0 ? 3.0 : 1.0);
            ivec2 cc = base + o * dir;
            if (any(lessThan(cc, ivec2(0))) || any(greaterThanEqual(cc, C.n))) continue;
            int j = at(C, cc);
            if (s_coef[j].w <= 0.0) continue;
            total += w * s_q[j];
            weight += w;
        }
        if (weight > 0.0) s_q[i] += total / weight;
    }
    barrier();
}

void main() {
    g_levels[0] = Level(u_size, 0);
    int x0[MAX_LEVELS];          // where each level starts in u_coef
    x0[0] = 0;
    for (int l = 1; l < u_levels; ++l) {
        Level P = g_levels[l - 1];
        g_levels[l] = Level((P.n + 1) / 2, P.at + P.n.x * P.n.y);       // hydro.smoke_levels.coarse_shape
        x0[l] = x0[l - 1] + P.n.x;
    }
    Level last = g_levels[u_levels - 1];
    int cells = last.at + last.n.x * last.n.y;
    float scale = warm_scale();  // the finest level (u_from_zero 0): q as it is, or a warm start's alpha q0
    for (int i = int(gl_LocalInvocationIndex); i < cells; i += GROUP) {
        int l = 0;
        while (l + 1 < u_levels && i >= g_levels[l + 1].at) ++l;
        Level L = g_levels[l];
        ivec2 c = ivec2((i - L.at) % L.n.x, (i - L.at) / L.n.x);
        s_coef[i] = texelFetch(u_coef, ivec2(x0[l] + c.x, c.y), 0);
        if (l == 0) {
            s_b[i] = texelFetch(u_rhs, c, 0).r;
            s_q[i] = u_from_zero != 0 ? 0.0 : scale * imageLoad(u_q_io, c).r;
        }
    }
    barrier();
    for (int l = 0; l + 1 < u_levels; ++l) {
        Level L = g_levels[l];
        sweeps(L);
        restrict_to(L, g_levels[l + 1]);
    }
    coarsest_solve(last);
    for (int l = u_levels - 2; l >= 0; --l) {
        Level L = g_levels[l];
        prolong_from(L, g_levels[l + 1]);
        sweeps(L);
    }
    for (int i = int(gl_LocalInvocationIndex); i < u_size.x * u_size.y; i += GROUP)
        imageStore(u_q_io, ivec2(i % u_size.x, i / u_size.x), vec4(s_q[i]));
}
