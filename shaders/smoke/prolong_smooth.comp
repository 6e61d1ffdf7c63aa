#version 430
// Pressure.prolong_smooth: a V-cycle's prolongation and post-smoothing of one level in one pass. Per
// TILE x TILE block (tile.glsl): load q + the bilinear interpolation of the coarse correction
// (cell-centred weights 9/16, 3/16, 3/16, 1/16; coarse cells outside the grid or without fluid are
// left out and the weights renormalised), SWEEPS red-black SOR sweeps, the block's q to u_q_out. With
// u_with_norms (the finest level) also the block's norms of r = b - L q and of b (as residual.comp) to
// u_partials, and the last group to finish folds them into u_norms (as reduce.comp): the residual
// check of a cycle costs no pass of its own.
#include "smoke/tile.glsl"
#include "smoke/norms.glsl"

layout(binding = B_SMOKE_COARSE_Q) uniform sampler2D u_coarse_q;
layout(binding = B_SMOKE_COARSE_COEF) uniform sampler2D u_coarse_coef;
layout(std430, binding = B_SMOKE_NORMS) coherent buffer Result {
    Norms u_norms;
    uint u_groups_done;          // groups that wrote their record; the last one resets it to 0
};
#include "smoke/fold_last.glsl"
uniform ivec2 u_coarse_size;
uniform int u_with_norms;

float correction(ivec2 c) {
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
    return weight > 0.0 ? total / weight : 0.0;
}

void main() {
    tile_cells();                // the sweeps' operator, fetched while q loads
    for (int i = int(gl_LocalInvocationIndex); i < SPAN * SPAN; i += GROUP_CELLS) {
        ivec2 c = tile_corner() + ivec2(i % SPAN, i / SPAN);
        float q = 0.0;
        if (inside(c)) {
            q = texelFetch(u_q, c, 0).r;
            if (coef(c).w > 0.0) q += correction(c);
        }
        s_q[i] = q;
    }
    barrier();
    tile_smooth();
    tile_store();
    if (u_with_norms == 0) return;
    double r2 = 0.0, b2 = 0.0;
    float rmax = 0.0, bmax = 0.0;
    for (int i = int(gl_LocalInvocationIndex); i < TILE * TILE; i += GROUP_CELLS) {
        ivec2 c = tile_corner() + HALO + ivec2(i % TILE, i / TILE);
        if (!inside(c) || coef(c).w <= 0.0) continue;
        float b = texelFetch(u_rhs, c, 0).r;
        float r = residual_at(c, b);
        r2 += double(r) * double(r);
        b2 += double(b) * double(b);
        rmax = max(rmax, abs(r));
        bmax = max(bmax, abs(b));
    }
    uint i = gl_LocalInvocationIndex;
    group_norms(i, GROUP_CELLS, r2, b2, rmax, bmax);
    if (!fold_if_last(i, GROUP_CELLS)) return;
    if (i == 0) {
        u_norms = Norms(s_r2[0], s_b2[0], s_rmax[0], s_bmax[0]);
        u_groups_done = 0u;
    }
}
