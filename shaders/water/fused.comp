#version 430
// Fused._run: a whole substep (the pending move, accelerate, outflow scale) in one dispatch.
//
// The move of the previous substep is applied lazily: the input depth is the depth *before* that
// move and u_pending says it is (false on the first substep of a call), so a substep reads terrain,
// depth and flows once and writes depth and flows once, 28 B a cell on the square grid (the floor of
// docs/design.md, "Kernels"). A workgroup of THREADS invocations takes a tile of TILE_X x TILE_Y cells
// and works in shared memory:
//   1. depth after the pending move (and the water cycle), and bed, for the tile and a two-cell halo;
//   2. accelerated flow of every face of the tile and a one-cell halo;
//   3. outflow scale K of every cell of the tile and a one-cell halo;
//   4. each cell writes its depth (before this substep's move) and its own faces (left, bottom; hex:
//      z face [y, x]; the last column and row also the outer faces), each scaled by its upwind K.
// After the last substep Fused settles the pending move into the water texture (settle.comp).
#include "common/cells.glsl"
#include "common/water.glsl"
#include "common/model.glsl"
#include "common/ledger.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_OUT_IMAGE, r32f) uniform restrict writeonly image2D u_water_out;
#include "common/flows_stored.glsl"
layout(std430, binding = B_FLOW_X_TMP) restrict writeonly buffer FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict writeonly buffer FlowYOut { float u_flow_y_out[]; };
#if HEX
layout(std430, binding = B_FLOW_Z_TMP) restrict writeonly buffer FlowZOut { float u_flow_z_out[]; };
#endif

uniform bool u_pending;             // the input flows are not yet moved into u_water_in

layout(local_size_x = THREADS) in;
#define W2 (TILE_X + 4)             // cells per row of the tile with a two-cell halo
#define H2 (TILE_Y + 4)             // rows of it
#define W1 (TILE_X + 2)             // cells per row of the tile with a one-cell halo
#define H1 (TILE_Y + 2)
#define WF (TILE_X + 3)             // x (and z) faces per row across the one-cell halo
#define HF (TILE_Y + 3)             // rows of y (and z) faces across it
shared float s_h[W2 * H2];
shared float s_z[W2 * H2];
shared float s_qx[WF * H1];
shared float s_qy[W1 * HF];
#if HEX
shared float s_qz[WF * HF];
#endif
shared float s_k[W1 * H1];

// for (i = tid; i < COUNT; i += THREADS); with UNROLLED as a loop of a trip count the compiler knows,
// so a GPU's can unroll it and issue every load of a phase before waiting on the first (CPU
// rasterisers run the plain loop faster)
#if UNROLLED
#define FOR_EACH(i, COUNT) for (uint k_ = 0u; k_ < uint(((COUNT) + THREADS - 1) / THREADS); ++k_) \
    for (uint i = gl_LocalInvocationIndex + k_ * THREADS; i < uint(COUNT); i = uint(COUNT))
#else
#define FOR_EACH(i, COUNT) for (uint i = gl_LocalInvocationIndex; i < uint(COUNT); i += THREADS)
#endif

ivec2 g_origin;                     // first cell of this tile

int at2(ivec2 c) { ivec2 l = c - g_origin + 2; return l.y * W2 + l.x; }
int at1(ivec2 c) { ivec2 l = c - g_origin + 1; return l.y * W1 + l.x; }
int atx(ivec2 f) { ivec2 l = f - g_origin + 1; return l.y * WF + l.x; }
int aty(ivec2 f) { ivec2 l = f - g_origin + 1; return l.y * W1 + l.x; }
#if HEX
int atz(ivec2 f) { ivec2 l = f - g_origin + 1; return l.y * WF + l.x; }
#endif

// The accelerated flow of face from -> to (boundary table entry b), its columns as shared memory holds them.
float accelerate(float q, ivec2 from, ivec2 to, int b) {
    int i = at2(from), j = at2(to);
    return face_flow(q, inside(from), inside(to), b, s_z[i], s_h[i], s_z[j], s_h[j]);
}

// The outflow scale of cell c as phase 3 left it; 1 outside the grid.
float k_at(ivec2 c) { return inside(c) ? s_k[at1(c)] : 1.0; }

// The scaled flow of a face from -> to; the owner of a boundary face books what crossed it.
float scaled(float q, ivec2 from, ivec2 to, int b) {
    q = upwind_scaled(q, k_at(from), k_at(to));
    if (b >= 0 && (inside(from) || inside(to))) book(b, u_dt, entering(q, inside(to)));
    return q;
}

void store_x(ivec2 f) { u_flow_x_out[index_x(f)] = scaled(s_qx[atx(f)], f - ivec2(1, 0), f, boundary_x(f)); }
void store_y(ivec2 f) { u_flow_y_out[index_y(f)] = scaled(s_qy[aty(f)], f - ivec2(0, 1), f, boundary_y(f)); }
#if HEX
void store_z(ivec2 f) { u_flow_z_out[index_z(f)] = scaled(s_qz[atz(f)], f - ivec2(0, 1), f - ivec2(1, 0), boundary_z(f)); }
#endif

// Cell c's depth and its own faces (left, bottom; hex: z face [y, x]; the last column and row also the
// outer faces), each scaled by its upwind cell's K.
void store_cell(ivec2 c, bool interior) {
    ivec2 n = u_size;
    imageStore(u_water_out, c, vec4(s_h[at2(c)]));
    if (interior) {                                                   // no boundary faces here
        float k = s_k[at1(c)];
        u_flow_x_out[index_x(c)] = upwind_scaled(s_qx[atx(c)], s_k[at1(c - ivec2(1, 0))], k);
        u_flow_y_out[index_y(c)] = upwind_scaled(s_qy[aty(c)], s_k[at1(c - ivec2(0, 1))], k);
#if HEX
        u_flow_z_out[index_z(c)] = upwind_scaled(s_qz[atz(c)], s_k[at1(c - ivec2(0, 1))], s_k[at1(c - ivec2(1, 0))]);
#endif
        return;
    }
    bool last_x = c.x == n.x - 1, last_y = c.y == n.y - 1;
    store_x(c);
    if (last_x) store_x(c + ivec2(1, 0));
    store_y(c);
    if (last_y) store_y(c + ivec2(0, 1));
#if HEX
    store_z(c);
    if (last_x) store_z(c + ivec2(1, 0));
    if (last_y) store_z(c + ivec2(0, 1));
    if (last_x && last_y) store_z(c + ivec2(1, 1));            // the unused corner face: 0
#endif
}

void main() {
    g_origin = ivec2(gl_WorkGroupID.xy) * ivec2(TILE_X, TILE_Y);
    ivec2 n = u_size;
    // A tile whose two-cell halo lies inside the grid (nearly every tile of a large grid) has no
    // boundary face and no cell outside: it skips those tests; the arithmetic is the same.
    bool interior = all(greaterThanEqual(g_origin, ivec2(2))) && all(lessThanEqual(g_origin + ivec2(TILE_X, TILE_Y) + 2, n));

    FOR_EACH(i, W2 * H2) {
        ivec2 c = g_origin - 2 + ivec2(i % W2, i / W2);
        bool valid = interior || inside(c);
        float h = valid ? imageLoad(u_water_in, c).r : 0.0;
        if (valid && u_pending) {
            float before = h, rate = move_rate(), net = net_inflow(stored_faces(c));
            h = moved(before, rate, net);
#if CYCLE
            // every tile works out its halo's cycle too; a cell's own tile books what it took
            bool own = all(greaterThanEqual(c, g_origin)) && all(lessThan(c, g_origin + ivec2(TILE_X, TILE_Y)));
            h = cycle_cell(c, h, moved_error(before, rate, net, h), own);
#endif
        }
        s_h[i] = h;
        s_z[i] = valid ? terrain_at(c) : 0.0;
    }
    barrier();

    // Face i of each loop is face g_origin - 1 + (i % width, i / width); a and b index its two cells in s_h.
    FOR_EACH(i, WF * H1) {
        ivec2 l = ivec2(i % WF, i / WF), f = g_origin - 1 + l;
        int a = (l.y + 1) * W2 + l.x, b = a + 1;                            // (x-1, y), (x, y)
        float q = 0.0;
        if (interior)
            q = interior_flow(FLOW_X_IN(index_x(f)), s_z[a], s_h[a], s_z[b], s_h[b]);
        else if (f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y < n.y)
            q = accelerate(FLOW_X_IN(index_x(f)), f - ivec2(1, 0), f, boundary_x(f));
        s_qx[i] = q;
    }
    FOR_EACH(i, W1 * HF) {
        ivec2 l = ivec2(i % W1, i / W1), f = g_origin - 1 + l;
        int a = l.y * W2 + l.x + 1, b = a + W2;                             // (x, y-1), (x, y)
        float q = 0.0;
        if (interior)
            q = interior_flow(FLOW_Y_IN(index_y(f)), s_z[a], s_h[a], s_z[b], s_h[b]);
        else if (f.x >= 0 && f.x < n.x && f.y >= 0 && f.y <= n.y)
            q = accelerate(FLOW_Y_IN(index_y(f)), f - ivec2(0, 1), f, boundary_y(f));
        s_qy[i] = q;
    }
#if HEX
    FOR_EACH(i, WF * HF) {
        ivec2 l = ivec2(i % WF, i / WF), f = g_origin - 1 + l;
        int a = l.y * W2 + l.x + 1, b = (l.y + 1) * W2 + l.x;               // (x, y-1), (x-1, y)
        float q = 0.0;
        if (interior)
            q = interior_flow(FLOW_Z_IN(index_z(f)), s_z[a], s_h[a], s_z[b], s_h[b]);
        else if (f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y <= n.y)
            q = accelerate(FLOW_Z_IN(index_z(f)), f - ivec2(0, 1), f - ivec2(1, 0), boundary_z(f));
        s_qz[i] = q;
    }
#endif
    barrier();

    FOR_EACH(i, W1 * H1) {
        ivec2 c = g_origin - 1 + ivec2(i % W1, i / W1);
        Faces f;
        f.left = s_qx[atx(c)];
        f.right = s_qx[atx(c + ivec2(1, 0))];
        f.bottom = s_qy[aty(c)];
        f.top = s_qy[aty(c + ivec2(0, 1))];
#if HEX
        f.z_in = s_qz[atz(c + ivec2(1, 0))];
        f.z_out = s_qz[atz(c + ivec2(0, 1))];
#endif
        s_k[i] = outflow_scale(s_h[at2(c)], outgoing(f));
    }
    barrier();

    FOR_EACH(i, TILE_X * TILE_Y) {
        ivec2 c = g_origin + ivec2(i % TILE_X, i / TILE_X);
        if (inside(c)) store_cell(c, interior);
    }
}
