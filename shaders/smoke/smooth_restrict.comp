#version 430
// Pressure.smooth_restrict: a V-cycle's pre-smoothing and restriction of one level in one pass. Per
// TILE x TILE block: SWEEPS red-black SOR sweeps (tile.glsl; hydro.reference.smoke.smooth), the
// block's q to u_q_out, and the coarse right-hand side, the sum of the residuals of each coarse cell's
// 2 x 2 children (children past an odd edge count as 0), to u_coarse_rhs_out. The coarse iterate is
// not written: the next pass starts it at 0. u_size is the fine level.
#include "smoke/tile.glsl"
#include "smoke/warm.glsl"

layout(binding = B_SMOKE_RHS_OUT, r32f) uniform restrict writeonly image2D u_coarse_rhs_out;
uniform ivec2 u_coarse_size;
uniform int u_from_zero;         // 1: q starts at 0 (every level but the finest), u_q is not read

void main() {
    float scale = warm_scale();  // the finest level: q as it is, or a warm start's alpha q0
    tile_cells();                // the sweeps' operator, fetched while q loads
    for (int i = int(gl_LocalInvocationIndex); i < SPAN * SPAN; i += GROUP_CELLS) {
        ivec2 c = tile_corner() + ivec2(i % SPAN, i / SPAN);
        s_q[i] = u_from_zero == 0 && inside(c) ? scale * texelFetch(u_q, c, 0).r : 0.0;
    }
    barrier();
    tile_smooth();
    tile_store();
    for (int i = int(gl_LocalInvocationIndex); i < TILE * TILE / 4; i += GROUP_CELLS) {
        ivec2 cc = ivec2(gl_WorkGroupID.xy) * (TILE / 2) + ivec2(i % (TILE / 2), i / (TILE / 2));
        if (any(greaterThanEqual(cc, u_coarse_size))) continue;
        float r = 0.0;
        for (int k = 0; k < 4; ++k) {
            ivec2 c = 2 * cc + ivec2(k & 1, k >> 1);
            if (inside(c)) r += residual_at(c, texelFetch(u_rhs, c, 0).r);
        }
        imageStore(u_coarse_rhs_out, cc, vec4(r));
    }
}
