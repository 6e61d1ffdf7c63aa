#version 430
// Blocked._launch, its tile program: STEPS whole substeps in one dispatch on the blocked kernel's
// state (pack.comp): one rgba32f texel per cell and outer face, (depth, flow_x[y, x], flow_y[y, x], bed
// or HEX flow_z[y, x]) for cell (x, y), x <= nx, y <= ny, at texel (x, y) + MARGIN, ghost columns
// around (HEX: the beds in a texture laid out alike, at B_TERRAIN). A launch reads one 16-byte texel a
// cell and writes one: GL moves rgba32f texels at about twice the rate of 4-byte accesses.
//
// A workgroup takes a tile of TILE_X x TILE_Y texels and advances it STEPS substeps (temporal
// blocking: the state goes through memory once a launch, not once a substep), one invocation per
// texel of the tile grown by a halo of two cells a substep, so every phase is one round:
//   1. its texel: depth and bed (the INTERIOR program: surface and bed) into shared memory;
//   then for each substep, on a region two cells narrower on each side than the last's:
//   2. the accelerated flows of its texel's faces;
//   3. the outflow scale K of its cell (the region the move settles and one cell around it), which
//      scales the cell's outgoing faces in shared memory (each face by its upwind cell's K);
//   4. the texels it settles: the cell moved by the four (hex six) scaled faces around it; the last
//      substep's are the tile's, written out.
// Each halo cell is worked out by every workgroup whose region holds it. The owner of a boundary face
// stores what crossed it at each substep and adds what the launch before stored to the ledger as the
// launch starts (common/booked.glsl; the unpack adds the last launch's).
// EROSION: erosion after each substep (common/erosion.glsl), the schedule water/erode_mix.comp,
// erode.comp and slump.comp are for the cell-wise kernel: on the region the move settled,
//   E1. its cell's sediment concentration, from the faces it just scaled;
//   E2. on a region a cell narrower, its sediment carried by those faces and exchanged with its bed;
//   E3. on one narrower still, the bed slumped by the faces around it;
// from a second state laid out alike (pack_erosion.comp); a substep then narrows the region by two
// cells more.
// The ring's owners book the sediment that crosses the grid's sides as erode.comp does, in place.
// SLEEP: a workgroup a tile of the plan's list (common/sleep.glsl; SLEEP_TILE = TILE_X = TILE_Y), which it
// flags where one of its texels, or with CYCLE one of its cells' records, changed in any bit at any
// substep of the launch (hydro/water_sleep.py).
#include "common/cells.glsl"
#include "common/water.glsl"
#include "common/model.glsl"
#include "common/sleep.glsl"

// A launch reads the state bound to image unit B_PACKED_IN and writes the one at B_PACKED_OUT; the
// two states swap units between launches.
layout(binding = B_PACKED_IN, rgba32f) uniform restrict readonly image2D u_state_in;
layout(binding = B_PACKED_OUT, rgba32f) uniform restrict writeonly image2D u_state_out;
#if !INTERIOR
#include "common/booked.glsl"
#endif

// A substep narrows the region a workgroup works out correctly by REACH cells on each side: two (a
// face needs its two cells, the move its neighbours' K), three with inertia (a face also needs the faces
// beside it and their cells), two more with erosion (E2 reads its neighbours' concentrations, E3 their
// beds after E2).
#define REACH (2 + INERTIA + 2 * EROSION)
#define HALO (REACH * STEPS)
#define W2 (TILE_X + 2 * HALO)      // texels per row of the tile with its halo
#define H2 (TILE_Y + 2 * HALO)
#define THREADS (W2 * H2)
layout(local_size_x = GROUP_X, local_size_y = GROUP_Y) in;     // W2, H2

// INTERIOR: the tiles whose halo lies inside the grid (nearly every tile of a large grid), a rectangle
// from u_first_tile, or (walled calls) every tile against the ghost columns; this program has none of
// the boundary tests. Otherwise the ring of tiles around that rectangle, one workgroup each
// (common/ring.glsl); on small grids the rectangle is empty and the ring every tile.
#if INTERIOR
uniform ivec2 u_first_tile;
#else
#include "common/ring.glsl"
#endif

// Indexed like the invocations: texel (x, y) of the tile's region at y * W2 + x. Flows are of the
// texel's faces (x: from the left cell, y: from the cell below, hex z: from (x, y-1) to (x-1, y)).
// Single floats where a phase reads one member of a pair at a time: a pair's stride would split each
// such read in two (docs/benchmarks-log.md); s_hz's pairs are read whole.
shared vec2 s_hz[THREADS];          // depth, bed (SURFACE: surface, bed)
shared float s_qx[THREADS];         // accelerated flow_x
shared float s_qy[THREADS];         // accelerated flow_y
#if HEX
shared float s_qz[THREADS];
#endif
#if INERTIA
shared float s_q0x[THREADS];        // the texel's faces' flows at the substep's start (x, y)
shared float s_q0y[THREADS];
shared float s_ux[THREADS];         // and their velocities
shared float s_uy[THREADS];
#if HEX
shared float s_q0z[THREADS];        // the same of its z face
shared float s_uz[THREADS];
#endif
#endif
// The INTERIOR program keeps each column's surface in shared memory, added once rather than once per
// face (the same sum, the same bits); inertia needs the depth.
#define SURFACE (INTERIOR && !INERTIA)

#if EROSION
// the erosion state (pack_erosion.comp): hex (sediment, owed, bed, bedrock); square (sediment, owed), the
// beds in the water's texels and the bedrock, which never changes, read from the grid's own texture
#if HEX
layout(binding = B_EROSION_IN, rgba32f) uniform restrict readonly image2D u_erosion_in;
layout(binding = B_EROSION_OUT, rgba32f) uniform restrict writeonly image2D u_erosion_out;
#else
layout(binding = B_EROSION_IN, rg32f) uniform restrict readonly image2D u_erosion_in;
layout(binding = B_EROSION_OUT, rg32f) uniform restrict writeonly image2D u_erosion_out;
layout(binding = B_BEDROCK) uniform sampler2D u_bedrock;
#endif
#if !INTERIOR
layout(std430, binding = B_SEDIMENT_LEDGER) restrict buffer SedimentLedger { double u_sediment_ledger[]; };
#endif
uniform float u_pipe_length;
uniform float u_speed_depth;        // velocities only in water deeper than this
// Each texel's cell's bedrock (NO_FLOOR outside the grid), and its concentration (E1's); E2 puts the
// beds after it in s_qx, which the next substep writes after a barrier.
shared float s_rock[THREADS];
shared float s_conc[THREADS];
#define NO_FLOOR -3.0e38
// the region index of the texel at p (g_base: the region index of texel (0, 0), this workgroup's)
int g_base;
#define AT(p) (g_base + (p).x + (p).y * W2)
// erosion.glsl's reads of a neighbour: its bed (the cell's own off the grid), its bed after E2, its bedrock
#define BED_AT(p, own) (inside(p) ? s_hz[AT(p)].y : (own))
#define ERODED_AT(p) s_qx[AT(p)]
#define BEDROCK_AT(p) s_rock[AT(p)]
#include "common/erosion.glsl"
#include "common/flow_velocity.glsl"
#endif

#define DX 1                        // index steps to the texel at x + 1 and at y + 1
#define DY W2

#if INTERIOR
const bool g_interior = true;
#else
bool g_interior;
#endif

// The accelerated flow of a face from cell `from` (column a as s_hz holds it) to `to` (column b),
// boundary table entry bi.
float accelerate(float q, ivec2 from, ivec2 to, vec2 a, vec2 b, int bi) {
#if SURFACE
    return surface_flow(q, a.x, b.x, a.y, b.y);     // each column adds its surface once, not once a face
#elif INTERIOR
    return interior_flow(q, a.y, a.x, b.y, b.x);
#else
    if (g_interior) return interior_flow(q, a.y, a.x, b.y, b.x);
    return face_flow(q, inside(from), inside(to), bi, a.y, a.x, b.y, b.x);
#endif
}

#if INERTIA
int step_of(ivec2 d) { return d.x * DX + d.y * DY; }

// Texel i's face of axis k: its flow at the substep's start, and its velocity.
float q0_of(int i, int k) {
#if HEX
    if (k == 2) return s_q0z[i];
#endif
    return k == 0 ? s_q0x[i] : s_q0y[i];
}

float u_of(int i, int k) {
#if HEX
    if (k == 2) return s_uz[i];
#endif
    return k == 0 ? s_ux[i] : s_uy[i];
}

// The velocity of texel c's face of axis k (region index i).
float face_speed(int i, ivec2 c, int k) {
    ivec2 a = c + from_cell(k), b = a + axis(k);
    return columns_velocity(q0_of(i, k), s_hz[i + step_of(from_cell(k))],
                            s_hz[i + step_of(from_cell(k) + axis(k))], g_interior || inside(a),
                            g_interior || inside(b));
}

// The velocities of texel c's faces into s_ux, s_uy (and s_uz).
void store_speeds(int i, ivec2 c) {
    s_ux[i] = face_speed(i, c, 0);
    s_uy[i] = face_speed(i, c, 1);
#if HEX
    s_uz[i] = face_speed(i, c, 2);
#endif
}

// What the faces of axis m do beside texel i's face of axis k (cells at region indices a, b).
Across across(int i, int k, int m, int a, int b) {
    int ahead = step_of(leaving_face(m)), behind = step_of(entering_face(m)), side = step_of(axis(m));
    return Across(q0_of(a + ahead, m), q0_of(b + ahead, m), q0_of(a + behind, m), q0_of(b + behind, m),
                  u_of(i - side, k), u_of(i + side, k));
}

// The accelerated flow of texel i's interior face of axis k with inertia, from shared memory.
float inertial_face(int i, int k) {
    int a = i + step_of(from_cell(k)), b = a + step_of(axis(k));
    int before = a + step_of(entering_face(k)), after = b + step_of(leaving_face(k));
    FaceStencil st;
    st.q = q0_of(i, k);
    st.u = u_of(i, k);
    st.q_before = q0_of(before, k);
    st.u_before = u_of(before, k);
    st.q_after = q0_of(after, k);
    st.u_after = u_of(after, k);
    st.first = across(i, k, first_across(k), a, b);
#if HEX
    st.second = across(i, k, second_across(k), a, b);
#endif
    vec2 ca = s_hz[a], cb = s_hz[b];
    return inertial_flow(st, columns_depth(ca, cb), ca.y + ca.x, cb.y + cb.x);
}

// Whether the face of axis k at texel c joins two cells of the grid.
bool interior_face(int k, ivec2 c) {
    ivec2 a = c + from_cell(k);
    return g_interior || (inside(a) && inside(a + axis(k)));
}
#endif

// Whether texel c has an x, y (and z) face: one of the grid's (ghosts in walled calls have theirs).
bool has_x(ivec2 c) { return g_interior || (c.x >= 0 && c.x <= u_size.x && c.y >= 0 && c.y < u_size.y); }
bool has_y(ivec2 c) { return g_interior || (c.x >= 0 && c.x < u_size.x && c.y >= 0 && c.y <= u_size.y); }
bool has_z(ivec2 c) { return g_interior || (all(greaterThanEqual(c, ivec2(0))) && all(lessThanEqual(c, u_size))); }

#if !INTERIOR
// Books what crossed boundary face bi (from -> to) at substep s; its owner calls this.
void book_face(float q, ivec2 from, ivec2 to, int bi, int s) {
    if (booked_face(from, to, bi)) store_booked(bi, s, entering(q, inside(to)));
}
#endif

// Shares texel i's column (depth h over bed z) and, with inertia, its faces' flows at the substep's
// start (t as the state holds it) with the workgroup; returns the column as s_hz holds it.
vec2 share_texel(int i, float h, float z, vec4 t) {
#if SURFACE
    vec2 own = vec2(z + h, z);
#else
    vec2 own = vec2(h, z);
#endif
    s_hz[i] = own;
#if INERTIA
    s_q0x[i] = t.y;
    s_q0y[i] = t.z;
#if HEX
    s_q0z[i] = t.w;
#endif
#endif
    return own;
}

#if EROSION
// The sediment a face carries from -> to, its flow q times the upwind cell's concentration (E1's; 0 off
// the grid: clear water comes in through the sides); the ring's owner books what crosses a side
// (erode.comp's carried).
float carried(float q, ivec2 from, ivec2 to, int b, bool enters, bool owner) {
    float g = sediment_flow(q, s_conc[AT(from)], s_conc[AT(to)]);
#if !INTERIOR
    if (owner && b >= 0 && !(inside(from) && inside(to)))
        u_sediment_ledger[b] += double(u_dt) * double(entering(g, enters));
#endif
    return g;
}

// Erosion's E2 and E3 after substep s of texel c (region index i, local l), once phase 4 has stored E1's
// concentrations: the cell moved to depth h by the scaled faces f; its sediment, what rounding owes its
// bed and its bed z updated where the phases reach.
void erode(int s, ivec2 l, ivec2 c, int i, bool cell, bool owned, float h, Faces f,
           inout float sediment, inout float owed, inout float z) {
    int m = REACH * s + 2 + INERTIA;        // phase 4 settled the texels at least m from the region's edge
    barrier();
    // E2. transport and exchange, a cell inside the moving region
    bool carrying = all(greaterThanEqual(l, ivec2(m + 1))) && l.x < W2 - m - 1 && l.y < H2 - m - 1;
    float eroded = z;
    if (carrying && cell) {
        ivec2 dx = ivec2(1, 0), dy = ivec2(0, 1);
        bool owner = owned && !g_interior;
        Faces g;
        g.left = carried(f.left, c - dx, c, boundary_x(c), true, owner);
        g.right = carried(f.right, c, c + dx, boundary_x(c + dx), false, owner);
        g.bottom = carried(f.bottom, c - dy, c, boundary_y(c), true, owner);
        g.top = carried(f.top, c, c + dy, boundary_y(c + dy), false, owner);
#if HEX
        g.z_in = carried(f.z_in, c + dx - dy, c, boundary_z(c + dx), true, owner);
        g.z_out = carried(f.z_out, c, c - dx + dy, boundary_z(c + dy), false, owner);
        vec3 mean = vec3(0.5 * (f.left + f.right), 0.5 * (f.bottom + f.top), 0.5 * (f.z_in + f.z_out));
#else
        vec3 mean = vec3(0.5 * (f.left + f.right), 0.5 * (f.bottom + f.top), 0.0);
#endif
        vec2 after = eroded_cell(sediment, g, c, h, flow_velocity(mean, h, u_face_width, u_speed_depth), z,
                                 s_rock[i], owed, u_pipe_length);
        eroded = after.x;
        sediment = after.y;
    }
    if (carrying) s_qx[i] = eroded;
    barrier();
    // E3. slumping, a cell inside that
    bool slumping = all(greaterThanEqual(l, ivec2(m + 2))) && l.x < W2 - m - 2 && l.y < H2 - m - 2;
    if (slumping && cell) z = terrain_changed(eroded, net_inflow(slumped_faces(c)), owed);
}
#endif

void main() {
    ivec2 n = u_size;
    int i = int(gl_LocalInvocationIndex);
    ivec2 l = ivec2(gl_LocalInvocationID.xy);
#if SLEEP
    ivec2 tile = listed_tile();
    ivec2 origin = tile * ivec2(TILE_X, TILE_Y);
    bool change = false;            // one of the tile's texels changed
#endif
#if INTERIOR
    const bool interior = true;
#if !SLEEP
    ivec2 origin = (ivec2(gl_WorkGroupID.xy) + u_first_tile) * ivec2(TILE_X, TILE_Y);
#endif
#else
#if !SLEEP
    int k_ring = ring_workgroup();
    if (k_ring < 0) return;
    ivec2 origin = ring_tile(k_ring) * ivec2(TILE_X, TILE_Y);
#endif
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
#if EROSION
    vec4 e = cell ? imageLoad(u_erosion_in, c + MARGIN) : vec4(0.0);
    float sediment = e.x, owed = e.y;
#if HEX
    float z = e.z;                                  // the beds in the erosion state
    s_rock[i] = cell ? e.w : NO_FLOOR;
#else
    float z = cell ? t.w : 0.0;
    s_rock[i] = cell ? texelFetch(u_bedrock, c, 0).r : NO_FLOOR;
#endif
    g_base = i - (c.x + c.y * W2);
#elif HEX
    float z = cell ? terrain_at(c + MARGIN) : 0.0;   // the beds as the state is laid out (pack.comp)
#else
    float z = cell ? t.w : 0.0;
#endif
    vec2 own = share_texel(i, h, z, t);
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
#if CYCLE
    // the water cycle's rates of this texel's cell (0 for ghosts) and its record, brought up to date
    // at each substep as cells_move.comp does, stored at the end where the tile owns the cell
    vec3 rates = cycle_rates(c);
    vec4 record = cycle_record(c);
#endif

    // Substep s reads the texels at least m = REACH s from the region's edge (all of it for the first)
    // and settles those at least m + REACH from it: the last substep, the tile's.
    float rate = move_rate();
    for (int s = 0; s < STEPS; s++) {
        int m = REACH * s, lo = m + 1 + INERTIA, hi = m + INERTIA;
        bool faces = all(greaterThanEqual(l, ivec2(lo))) && l.x < W2 - hi && l.y < H2 - hi;
        bool halo1 = all(greaterThanEqual(l, ivec2(lo))) && l.x < W2 - 1 - hi && l.y < H2 - 1 - hi;
        bool moving = all(greaterThanEqual(l, ivec2(lo + 1))) && l.x < W2 - 2 - hi && l.y < H2 - 2 - hi;
#if INERTIA
        // 1b. the velocities of this texel's faces (those the faces' stencils read)
        if (all(greaterThanEqual(l, ivec2(m + 1))) && l.x < W2 - m && l.y < H2 - m) store_speeds(i, c);
        barrier();
#endif
        // 2. the accelerated flows of this texel's faces (every face of the region the move reads)
        vec2 q = vec2(0.0);             // this texel's faces: x (from the left), y (from below)
        if (faces) {
            q.x = has_x(c) ? accelerate(t.y, left, c, s_hz[i - DX], own, boundary_x(c)) : 0.0;
            q.y = has_y(c) ? accelerate(t.z, below, c, s_hz[i - DY], own, boundary_y(c)) : 0.0;
#if INERTIA
            if (interior_face(0, c)) q.x = inertial_face(i, 0);
            if (interior_face(1, c)) q.y = inertial_face(i, 1);
#endif
            s_qx[i] = q.x;
            s_qy[i] = q.y;
#if HEX
            s_qz[i] = has_z(c) ? accelerate(t.w, below, left, s_hz[i - DY], s_hz[i - DX], boundary_z(c)) : 0.0;
#if INERTIA
            if (interior_face(2, c)) s_qz[i] = inertial_face(i, 2);
#endif
#endif
        }
        barrier();

        // 3. the outflow scale of this cell (the moved region and one cell around it), which scales the
        // cell's outgoing faces in shared memory (upwind_scaled, this cell upwind): a face is outgoing for
        // one cell only and scaling keeps its sign, so a neighbour reading it in this phase counts it as
        // incoming (0) whether it sees it scaled or not. K = 1 leaves a face as q * 1 would.
        Faces f;
        if (halo1) {
            f.left = q.x;
            f.right = s_qx[i + DX];
            f.bottom = q.y;
            f.top = s_qy[i + DY];
#if HEX
            f.z_in = s_qz[i + DX];
            f.z_out = s_qz[i + DY];
#endif
            float k = cell ? outflow_scale(h, outgoing(f)) : 1.0;
            if (k < 1.0) {
                if (f.left < 0.0) s_qx[i] = upwind_scaled(f.left, 1.0, k);
                if (f.right > 0.0) s_qx[i + DX] = upwind_scaled(f.right, k, 1.0);
                if (f.bottom < 0.0) s_qy[i] = upwind_scaled(f.bottom, 1.0, k);
                if (f.top > 0.0) s_qy[i + DY] = upwind_scaled(f.top, k, 1.0);
#if HEX
                if (f.z_in < 0.0) s_qz[i + DX] = upwind_scaled(f.z_in, 1.0, k);
                if (f.z_out > 0.0) s_qz[i + DY] = upwind_scaled(f.z_out, k, 1.0);
#endif
            }
        }
        barrier();

        // 4. the moved region's texels: the cell moved by its scaled faces
        bool last = s == STEPS - 1;
#if SLEEP
        vec4 t_before = t;
#endif
        if (moving && (EROSION != 0 || !last || (owned && texel))) {
            f.left = s_qx[i];
            f.right = s_qx[i + DX];
            f.bottom = s_qy[i];
            f.top = s_qy[i + DY];
#if HEX
            f.z_in = s_qz[i + DX];
            f.z_out = s_qz[i + DY];
            float qz = s_qz[i];         // this texel's z face
#endif
#if !INTERIOR
            if (!interior && owned && texel) {
                if (c.y < n.y) book_face(f.left, left, c, boundary_x(c), s);
                if (c.x < n.x) book_face(f.bottom, below, c, boundary_y(c), s);
#if HEX
                book_face(qz, below, left, boundary_z(c), s);
#endif
            }
#endif
            if (cell) {
                float before = h, net = net_inflow(f);
                h = moved(before, rate, net);
#if CYCLE
                vec4 kept = record;
                h = cycle_step(h, moved_error(before, rate, net, h), rates, record);
#if SLEEP
                change = change || owned && texel && changed(kept, record);    // what the cell is owed, too
#endif
#endif
            }
#if HEX
            t = vec4(h, f.left, f.bottom, qz);
#else
            t = vec4(h, f.left, f.bottom, cell ? z : t.w);     // an outer face's texel keeps its ghost bed
#endif
#if EROSION
            // E1. the cell's concentration (0 outside the grid), for erode()
            s_conc[i] = cell ? concentration(sediment, h, outgoing(f)) : 0.0;
#endif
#if SLEEP
            change = change || owned && texel && changed(t_before, t);
#endif
        }
#if EROSION
        erode(s, l, c, i, cell, owned, h, f, sediment, owed, z);
#if !HEX
        if (cell) t.w = z;
#endif
#endif
        if (!last) {
            // the next substep's columns: phase 2 read s_hz before the last two barriers
            if (moving) {
                own = share_texel(i, h, z, t);
            }
            barrier();
        } else if (owned && texel) {
            imageStore(u_state_out, c + MARGIN, t);
#if EROSION
#if HEX
            if (cell) imageStore(u_erosion_out, c + MARGIN, vec4(sediment, owed, z, s_rock[i]));
#else
            if (cell) imageStore(u_erosion_out, c + MARGIN, vec4(sediment, owed, 0.0, 0.0));
#endif
#endif
#if SLEEP
            if (change) sleep_flag(tile);
#endif
#if CYCLE
            if (inside(c)) store_record(c, record);
#endif
        }
    }
}
