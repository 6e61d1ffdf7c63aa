#version 430
// WaterGrid._step_packed: STEPS whole substeps (accelerate, scale outflow, move) in one dispatch, as
// step_fused.comp does one, on the packed state of water/pack.comp: one rgba32f texel per cell and outer face,
// (depth, flow_x[y, x], flow_y[y, x], bed or HEX flow_z[y, x]) for cell (x, y), x <= nx, y <= ny, at
// texel (x, y) + MARGIN, ghost columns around (HEX: the beds in a texture laid out alike, at B_TERRAIN).
// Walled calls run every tile through the INTERIOR program against the ghosts (hydro.water_passes).
//
// A launch reads one 16-byte texel per cell (hex: and the bed) and writes one: GL moves rgba32f
// texels at about twice the rate of 4-byte image or storage-buffer accesses (bench/bandwidth.py).
// WaterGrid packs the grid into this state at the start of a step() call and unpacks it at the end
// (pack.comp), so it takes this kernel for calls of PACKED_MIN_SUBSTEPS substeps and more.
// The shared arrays hold pairs (docs/benchmarks-log.md). The input texels are read with imageLoad:
// texelFetch measured 2-3 % faster on the H200, but would bind texture units, which the water grids
// leave to the game.
// A workgroup takes a tile of TILE_X x TILE_Y texels and advances it STEPS substeps (temporal
// blocking: the state goes through memory once per launch, not once per substep), with one invocation
// per texel of the tile grown by a halo of two cells a substep, so every phase is one round:
//   1. its texel: depth and bed (interior program: surface and bed) into shared memory;
//   then for each substep, on a region two cells narrower on each side than the last's:
//   2. the accelerated flows of its texel's faces (common/pipes.glsl);
//   3. the outflow scale K of its cell (the region the move settles and one cell around it), which
//      scales the cell's outgoing faces in shared memory: a face is outgoing for one cell only and
//      scaling keeps its sign, so a neighbour reading it in the same phase counts it as incoming
//      (0) whether it sees it scaled or not, as in the three passes;
//   4. the texels it settles: the cell moved by what its four (hex: six) scaled faces carried, as
//      move.comp; the last substep's are the tile's, written out.
// Each halo cell is worked out by every workgroup whose region holds it; a larger tile shares that
// work among more cells, and two substeps a launch let the region reach the largest workgroup (1024
// invocations) with a tile of 24 x 24 for 32 x 32 invocations (docs/benchmarks-log.md).
// The move is not left pending as in step_fused.comp: every texel of the state is settled after each
// launch. The arithmetic is that of accelerate.comp, scale_outflow.comp and move.comp, in the same
// order, so the paths agree to the last bit on llvmpipe (to rounding on the H200, whose compiler may
// fuse the unchanged arithmetic differently per program). The owner of a boundary face stores what
// crossed it at each substep, and adds what the launch before stored to the ledger as the launch
// starts (common/booked.glsl; the unpack adds the last launch's).
#include "common/cells.glsl"
#include "common/water.glsl"
#include "common/pipes.glsl"

// A launch reads the state bound to image unit B_PACKED_IN and writes the one at B_PACKED_OUT; the
// two states swap units between launches (hydro/water_passes.py _step_packed).
layout(binding = B_PACKED_IN, rgba32f) uniform restrict readonly image2D u_state_in;
layout(binding = B_PACKED_OUT, rgba32f) uniform restrict writeonly image2D u_state_out;
// STEPS substeps a launch (temporal blocking): the tile's halo is two cells a substep.
#ifndef STEPS
#define STEPS 1
#endif
#if !INTERIOR
#include "common/booked.glsl"
#endif

#define HALO (2 * STEPS)
#define W2 (TILE_X + 2 * HALO)      // texels per row of the tile with its halo
#define H2 (TILE_Y + 2 * HALO)
#define THREADS (W2 * H2)
layout(local_size_x = GROUP_X, local_size_y = GROUP_Y) in;     // W2, H2

// INTERIOR: the tiles whose halo lies inside the grid (nearly every tile of a large grid),
// a rectangle from u_first_tile; they have no boundary face and no cell outside, and this program
// has none of those tests (which cost the general one registers: 8 % of a substep at 4096^2, hex
// 25 %). Otherwise the ring of tiles around that rectangle, one workgroup each (common/ring.glsl).
// On grids too small for the second dispatch to pay, the rectangle is empty and the ring every tile
// (WaterGrid._ready_packed).
#if INTERIOR
uniform ivec2 u_first_tile;
#else
#include "common/ring.glsl"
#endif

// Indexed like the invocations: texel (x, y) of the tile's region at y * W2 + x. Flows are of the
// texel's faces (x: from the left cell, y: from the cell below, hex z: from (x, y-1) to (x-1, y)).
shared vec2 s_hz[THREADS];          // depth, bed (interior program: surface, bed)
shared vec2 s_qxy[THREADS];         // accelerated flow_x, flow_y; scaled in place by phase 3
#if HEX
shared float s_qz[THREADS];
#endif

#define DX 1                        // index steps to the texel at x + 1 and at y + 1
#define DY W2

// The accelerated flow of a face from cell `from` (column a: depth, bed) to `to` (column b), boundary
// table entry bi (common/pipes.glsl).
float accelerate(float q, ivec2 from, ivec2 to, vec2 a, vec2 b, int bi) {
    return face_flow(q, inside(from), inside(to), bi, a.y, a.x, b.y, b.x);
}

#if INTERIOR
const bool g_interior = true;
#else
bool g_interior;
#endif

// The flow between two interior columns a -> b as the shared arrays hold them: (surface, bed) in the
// interior program, whose columns so add their surface once rather than once per face (the same
// sum, the same bits); (depth, bed) in the general one.
float column_flow(float q, vec2 a, vec2 b) {
#if INTERIOR
    return surface_flow(q, a.x, b.x, a.y, b.y);
#else
    return interior_flow(q, a.y, a.x, b.y, b.x);
#endif
}

// The accelerated flows of the faces of texel c (region index j, its own column hz as s_hz holds it,
// held by the invocation), input flow q.
float face_x(int j, ivec2 c, float q, vec2 hz) {
    vec2 a = s_hz[j - DX];
    if (g_interior) return column_flow(q, a, hz);
    bool x_face = c.x >= 0 && c.x <= u_size.x && c.y >= 0 && c.y < u_size.y;
    return x_face ? accelerate(q, c - ivec2(1, 0), c, a, hz, boundary_x(c)) : 0.0;
}

float face_y(int j, ivec2 c, float q, vec2 hz) {
    vec2 a = s_hz[j - DY];
    if (g_interior) return column_flow(q, a, hz);
    bool y_face = c.x >= 0 && c.x < u_size.x && c.y >= 0 && c.y <= u_size.y;
    return y_face ? accelerate(q, c - ivec2(0, 1), c, a, hz, boundary_y(c)) : 0.0;
}

#if HEX
float face_z(int j, ivec2 c, float q) {
    vec2 a = s_hz[j - DY], b = s_hz[j - DX];
    if (g_interior) return column_flow(q, a, b);
    bool texel = all(greaterThanEqual(c, ivec2(0))) && all(lessThanEqual(c, u_size));
    return texel ? accelerate(q, c - ivec2(0, 1), c - ivec2(1, 0), a, b, boundary_z(c)) : 0.0;
}
#endif

#if !INTERIOR
// Books what crossed boundary face bi (from -> to) at substep s; its owner calls this.
void book(float q, ivec2 from, ivec2 to, int bi, int s) {
    if (booked_face(from, to, bi)) store_booked(bi, s, inside(to) ? q : -q);
}
#endif

void main() {
    ivec2 n = u_size;
    int i = int(gl_LocalInvocationIndex);
    ivec2 l = ivec2(gl_LocalInvocationID.xy);
#if INTERIOR
    const bool interior = true;
    ivec2 origin = (ivec2(gl_WorkGroupID.xy) + u_first_tile) * ivec2(TILE_X, TILE_Y);
#else
    int k = ring_workgroup();
    if (k < 0) return;
    ivec2 origin = ring_tile(k) * ivec2(TILE_X, TILE_Y);
    // where the ring is every tile (grids too small to split), the interior ones say so
    bool interior = all(greaterThanEqual(origin, ivec2(HALO)))
                 && all(lessThanEqual(origin + ivec2(TILE_X, TILE_Y) + HALO, n));
    g_interior = interior;
#endif
    ivec2 c = origin - HALO + l;                    // this invocation's texel (and cell)

    // 1. the texel; depth and bed of its cell (0 outside the grid)
    bool texel = interior || (all(greaterThanEqual(c, ivec2(0))) && all(lessThanEqual(c, n)));
    vec4 t = texel ? imageLoad(u_state_in, c + MARGIN) : vec4(0.0);
    bool cell = interior || inside(c);
    float h = cell ? t.x : 0.0;
#if HEX
    float z = cell ? terrain_at(c + MARGIN) : 0.0;   // the beds as the state is laid out (pack.comp)
#else
    float z = cell ? t.w : 0.0;
#endif
#if INTERIOR
    vec2 own = vec2(z + h, z);
#else
    vec2 own = vec2(h, z);
#endif
    s_hz[i] = own;
    ivec2 left = c - ivec2(1, 0), below = c - ivec2(0, 1);
    bool owned = all(greaterThanEqual(l, ivec2(HALO))) && l.x < TILE_X + HALO && l.y < TILE_Y + HALO;
#if !INTERIOR
    // the boundary faces of the tile's texels: what the last launch booked there, into the ledger
    // (its loads wait beside the texel's)
    if (!interior && owned && texel) {
        if (c.y < n.y) fold_booked(left, c, boundary_x(c), false);
        if (c.x < n.x) fold_booked(below, c, boundary_y(c), false);
#if HEX
        fold_booked(below, left, boundary_z(c), false);
#endif
    }
#endif
    barrier();

    // Substep s reads the texels at least m = 2 s from the region's edge (all of it for the first)
    // and settles those at least m + 2 from it: the last substep, the tile's.
    for (int s = 0; s < STEPS; s++) {
        int m = 2 * s;
        // 2. the accelerated flows of this texel's faces (every face of the region the move reads)
        // The invocation keeps its own faces in a register for phase 3.
        bool faces = all(greaterThanEqual(l, ivec2(m + 1))) && l.x < W2 - m && l.y < H2 - m;
        bool halo1 = all(greaterThanEqual(l, ivec2(m + 1))) && l.x < W2 - 1 - m && l.y < H2 - 1 - m;
        bool moving = all(greaterThanEqual(l, ivec2(m + 2))) && l.x < W2 - 2 - m && l.y < H2 - 2 - m;
        vec2 q = vec2(0.0);             // this texel's faces: x (from the left), y (from below)
        if (faces) {
            q = vec2(face_x(i, c, t.y, own), face_y(i, c, t.z, own));
            s_qxy[i] = q;
#if HEX
            s_qz[i] = face_z(i, c, t.w);
#endif
        }
        barrier();

        // 3. the outflow scale of this cell (the moved region and one cell around it), in the order of
        // scale_outflow.comp, and its outgoing faces scaled by it where the cell is in the grid (a face
        // whose upwind cell is outside is not scaled). K = 1 leaves a face as it is, as q * 1 would.
        if (halo1) {
            float q_r = s_qxy[i + DX].x;        // the x face of the texel at its right
            float q_t = s_qxy[i + DY].y;        // the y face of the texel above
            float outgoing = max(-q.x, 0.0) + max(q_r, 0.0) + max(-q.y, 0.0) + max(q_t, 0.0);
#if HEX
            float qz_right = s_qz[i + DX];      // the z faces of the texels at its right and above
            float qz_above = s_qz[i + DY];
            outgoing += max(-qz_right, 0.0) + max(qz_above, 0.0);
#endif
            float k = outflow_scale(h, outgoing);
            if (k < 1.0 && outgoing > 0.0 && cell) {   // a dry cell with no outflow has K 0 and nothing to scale
                // precise: each scaled flow is rounded once, as when the three passes store it
                precise vec4 scaled = vec4(q, q_r, q_t) * k;
                if (q.x < 0.0) s_qxy[i].x = scaled.x;
                if (q.y < 0.0) s_qxy[i].y = scaled.y;
                if (q_r > 0.0) s_qxy[i + DX].x = scaled.z;
                if (q_t > 0.0) s_qxy[i + DY].y = scaled.w;
#if HEX
                precise vec2 scaled_z = vec2(qz_right, qz_above) * k;
                if (qz_right < 0.0) s_qz[i + DX] = scaled_z.x;
                if (qz_above > 0.0) s_qz[i + DY] = scaled_z.y;
#endif
            }
        }
        barrier();

        // 4. the moved region's texels: the cell moved by its scaled faces, as move.comp
        bool last = s == STEPS - 1;
        if (moving && (!last || (owned && texel))) {
            vec2 q_own = s_qxy[i];
            float qx = q_own.x, qy = q_own.y, qx_r = s_qxy[i + DX].x, qy_t = s_qxy[i + DY].y;
#if HEX
            float qz = s_qz[i], qz_r = s_qz[i + DX], qz_t = s_qz[i + DY];
#endif
#if !INTERIOR
            if (!interior && owned && texel) {
                if (c.y < n.y) book(qx, left, c, boundary_x(c), s);
                if (c.x < n.x) book(qy, below, c, boundary_y(c), s);
#if HEX
                book(qz, below, left, boundary_z(c), s);
#endif
            }
#endif
            if (cell) {
                precise float net = qx - qx_r + qy - qy_t;
#if HEX
                net += qz_r - qz_t;
#endif
                h = moved(h, u_dt, u_cell_area, net);
            }
#if HEX
            t = vec4(h, qx, qy, qz);
#else
            t = vec4(h, qx, qy, z);
#endif
        }
        if (!last) {
            // the next substep's columns: phase 2 read s_hz before the last two barriers
            if (moving) {
#if INTERIOR
                own = vec2(z + h, z);
#else
                own = vec2(h, z);
#endif
                s_hz[i] = own;
            }
            barrier();
        } else if (owned && texel) {
            imageStore(u_state_out, c + MARGIN, t);
        }
    }
}
