// Overlapped tiling for the fused red-black passes (smooth_restrict.comp, prolong_smooth.comp): a
// workgroup owns a TILE x TILE block of one level and loads q on the block grown by HALO cells into
// shared memory. Each half-sweep updates its colour on a region one cell narrower than the last, so
// after the 2 sweeps (4 half-sweeps) of V(2,2) smoothing q is final on the block grown by 1: exactly
// the numbers of 4 global half-sweeps (smooth.comp), not a block-Jacobi approximation, plus the
// ring the residual's neighbour sum needs. Cells outside the grid hold 0 and are never updated.
#include "smoke/poisson.glsl"

// TILE and GROUP_SIDE (defines from hydro.smoke_pressure.TILE_SHAPE or SMALL_TILE_SHAPE) are the block side and the
// workgroup side; TILE is even, so the 2 x 2 children of a coarse cell never straddle two blocks
#if TILE % 2 != 0
#error "tile.glsl: TILE must be even"
#endif
#define HALO 5                   // 4 half-sweeps + the residual's ring
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

// One colour of red-black Gauss-Seidel on the block grown by `grow` cells.
void tile_sweep(int parity, int grow) {
    int n = TILE + 2 * grow;
    ivec2 corner = tile_corner() + (HALO - grow);
    for (int i = int(gl_LocalInvocationIndex); i < n * n; i += GROUP_CELLS) {
        ivec2 c = corner + ivec2(i % n, i / n);
        if (!inside(c) || (c.x + c.y) % 2 != parity) continue;
        float diag = coef(c).w;
        ivec2 l = c - tile_corner();
        s_q[l.y * SPAN + l.x] = diag > 0.0 ? (neighbour_sum(c) - texelFetch(u_rhs, c, 0).r) / diag : 0.0;
    }
    barrier();
}

// V(2,2)'s two red-black sweeps; q is then final on the block grown by HALO - 4 = 1.
void tile_smooth() {
    tile_sweep(0, HALO - 1);
    tile_sweep(1, HALO - 2);
    tile_sweep(0, HALO - 3);
    tile_sweep(1, HALO - 4);
}

// Writes the block's final q (its cells inside the grid) to u_q_out.
void tile_store() {
    for (int i = int(gl_LocalInvocationIndex); i < TILE * TILE; i += GROUP_CELLS) {
        ivec2 c = tile_corner() + HALO + ivec2(i % TILE, i / TILE);
        if (inside(c)) imageStore(u_q_out, c, vec4(q_at(c)));
    }
}
