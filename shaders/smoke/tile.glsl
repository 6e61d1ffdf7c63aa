// Overlapped tiling for the fused red-black passes (smooth_restrict.comp, prolong_smooth.comp): a
// workgroup owns a TILE x TILE block of one level and loads q on the block grown by HALO cells into
// shared memory. Each half-sweep updates its colour on a region one cell narrower than the last, so
// after the SWEEPS sweeps (2 SWEEPS half-sweeps) of one V(SWEEPS, SWEEPS) smoothing q is final on the
// block grown by 1: exactly the numbers of 2 SWEEPS global half-sweeps, not a block-Jacobi
// approximation, plus the ring the residual's neighbour sum needs. A half-sweep is red-black SOR,
// q_c += OMEGA ((sum W q_nb - b) / diag - q_c) (hydro.reference.smoke.smooth). Cells outside the
// grid hold 0 and are never updated.
#include "smoke/poisson.glsl"

// TILE and GROUP_SIDE (defines from hydro.smoke_pressure.TILE_SHAPE or SMALL_TILE_SHAPE) are the block side and the
// workgroup side; TILE is even, so the 2 x 2 children of a coarse cell never straddle two blocks.
// SWEEPS and OMEGA: hydro.smoke_pressure.SWEEPS, OMEGA.
#if TILE % 2 != 0
#error "tile.glsl: TILE must be even"
#endif
#define HALO (2 * SWEEPS + 1)    // 2 SWEEPS half-sweeps + the residual's ring
#define SPAN (TILE + 2 * HALO)
#define GROUP_CELLS (GROUP_SIDE * GROUP_SIDE)

layout(binding = B_SMOKE_Q) uniform sampler2D u_q;                       // q before the pass
layout(binding = B_SMOKE_RHS) uniform sampler2D u_rhs;
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict writeonly image2D u_q_out;   // a different texture
shared float s_q[SPAN * SPAN];

ivec2 tile_corner() { return ivec2(gl_WorkGroupID.xy) * TILE - HALO; }    // grid cell of s_q[0]

float q_at(ivec2 c) {
    ivec2 l = c - tile_corner();
    return s_q[l.y * SPAN + l.x];
}

// One colour of red-black SOR on the block grown by `grow` cells.
void tile_sweep(int parity, int grow) {
    int n = TILE + 2 * grow;
    ivec2 corner = tile_corner() + (HALO - grow);
    for (int i = int(gl_LocalInvocationIndex); i < n * n; i += GROUP_CELLS) {
        ivec2 c = corner + ivec2(i % n, i / n);
        if (!inside(c) || (c.x + c.y) % 2 != parity) continue;
        float diag = coef(c).w;
        ivec2 l = c - tile_corner();
        float q = 0.0;                                    // solid cells (diag 0) hold 0
        if (diag > 0.0) {
            float gs = (neighbour_sum(c) - texelFetch(u_rhs, c, 0).r) / diag;    // the Gauss-Seidel value
            q = s_q[l.y * SPAN + l.x] + OMEGA * (gs - s_q[l.y * SPAN + l.x]);
        }
        s_q[l.y * SPAN + l.x] = q;
    }
    barrier();
}

// One smoothing of the V-cycle: SWEEPS red-black sweeps; q is then final on the block grown by 1.
void tile_smooth() {
    for (int k = 0; k < 2 * SWEEPS; ++k) tile_sweep(k % 2, HALO - 1 - k);
}

// Writes the block's final q (its cells inside the grid) to u_q_out.
void tile_store() {
    for (int i = int(gl_LocalInvocationIndex); i < TILE * TILE; i += GROUP_CELLS) {
        ivec2 c = tile_corner() + HALO + ivec2(i % TILE, i / TILE);
        if (inside(c)) imageStore(u_q_out, c, vec4(q_at(c)));
    }
}
