// Overlapped tiling for the fused red-black passes (smooth_restrict.comp, prolong_smooth.comp): a
// workgroup owns a TILE x TILE block of one level and loads q on the block grown by HALO cells into
// shared memory. Each half-sweep's numbers hold on a region one cell narrower than the last's, so
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

// The cells a half-sweep updates: every cell of s_q but its outer ring, SWEEP_SIDE on a side (even,
// as TILE is), the same region at every half-sweep. Only the block grown by HALO - 1 - k holds the
// numbers of the global half-sweeps after half-sweep k (a cell's neighbours hold them on the block
// grown by one more), so the cells further out compute what is never read: cheaper than shrinking
// the region, as a fixed region gives each invocation the same cells at every half-sweep, whose
// operator it then holds in registers (SweepCell) instead of fetching it each time. An invocation
// takes cell j = invocation + GROUP_CELLS r (round r) of a colour's COLOUR_CELLS, so no lane idles on
// the other colour's cells.
#define SWEEP_SIDE (SPAN - 2)
#define COLOUR_CELLS (SWEEP_SIDE * SWEEP_SIDE / 2)
#define ROUNDS ((COLOUR_CELLS + GROUP_CELLS - 1) / GROUP_CELLS)

// A cell of the sweep region: its place in s_q (-1: outside the grid or past the colour's cells; never
// updated), the weights of its right, top, left and bottom faces (0 where the neighbour lies outside the
// grid: s_q holds 0 there, so its term adds +0, which leaves the sum's bits as skipping it would), its
// diagonal and right-hand side.
struct SweepCell { int l; float wr, wt, wl, wb, diag, b; };
SweepCell g_cells[2][ROUNDS];

// Fills g_cells: cell j of colour p lies in row j / (SWEEP_SIDE / 2) of the region, in the column of
// the pair j % (SWEEP_SIDE / 2) whose grid parity (x + y) % 2 is p.
void tile_cells() {
    ivec2 corner = tile_corner();
    for (int p = 0; p < 2; ++p) {
        for (int r = 0; r < ROUNDS; ++r) {
            int j = int(gl_LocalInvocationIndex) + r * GROUP_CELLS;
            SweepCell cell = SweepCell(-1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            ivec2 l = ivec2(1 + 2 * (j % (SWEEP_SIDE / 2)), 1 + j / (SWEEP_SIDE / 2));
            l.x += (p - corner.x - corner.y - l.x - l.y) & 1;
            ivec2 c = corner + l;
            if (j < COLOUR_CELLS && inside(c)) {
                vec4 k = coef(c);
                cell.l = l.y * SPAN + l.x;
                cell.wr = c.x + 1 < u_size.x ? k.x : 0.0;
                cell.wt = c.y + 1 < u_size.y ? k.y : 0.0;
                cell.wl = c.x > 0 ? coef(c - ivec2(1, 0)).x : 0.0;
                cell.wb = c.y > 0 ? coef(c - ivec2(0, 1)).y : 0.0;
                cell.diag = k.w;
                cell.b = texelFetch(u_rhs, c, 0).r;
            }
            g_cells[p][r] = cell;
        }
    }
}

// One colour of red-black SOR on the sweep region (neighbour_sum's terms in its order).
void tile_sweep(int parity) {
    for (int r = 0; r < ROUNDS; ++r) {
        SweepCell cell = g_cells[parity][r];
        if (cell.l < 0) continue;
        float q = 0.0;                                    // solid cells (diag 0) hold 0
        if (cell.diag > 0.0) {
            float s = 0.0;
            s += cell.wr * s_q[cell.l + 1];
            s += cell.wt * s_q[cell.l + SPAN];
            s += cell.wl * s_q[cell.l - 1];
            s += cell.wb * s_q[cell.l - SPAN];
            float gs = (s - cell.b) / cell.diag;              // the Gauss-Seidel value
            q = s_q[cell.l] + OMEGA * (gs - s_q[cell.l]);
        }
        s_q[cell.l] = q;
    }
    barrier();
}

// One smoothing of the V-cycle: SWEEPS red-black sweeps; q is then final on the block grown by 1.
// Needs tile_cells() (the load of s_q may come before or after it, before the barrier that ends it).
void tile_smooth() {
    for (int k = 0; k < 2 * SWEEPS; ++k) tile_sweep(k % 2);
}

// Writes the block's final q (its cells inside the grid) to u_q_out.
void tile_store() {
    for (int i = int(gl_LocalInvocationIndex); i < TILE * TILE; i += GROUP_CELLS) {
        ivec2 c = tile_corner() + HALO + ivec2(i % TILE, i / TILE);
        if (inside(c)) imageStore(u_q_out, c, vec4(q_at(c)));
    }
}
