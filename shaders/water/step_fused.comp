#version 430
// WaterGrid._step_fused: a whole substep (move, accelerate, scale outflow) in one dispatch.
//
// The move of the previous substep is applied lazily: the input depth is the depth *before* that
// move and u_pending says it is (false on the first substep of a step() call), so a
// substep reads terrain, depth and flows once and writes depth and flows once, 28 B per cell on the
// square grid, the floor of DESIGN section 6. A workgroup of THREADS invocations takes a tile of
// TILE_X x TILE_Y cells (hydro.water.FUSED_TILE) and works in shared memory:
//   1. depth after the pending move, and bed, for the tile and a two-cell halo;
//   2. accelerated flow of every face of the tile and a one-cell halo (common/pipes.glsl);
//   3. outflow scale K of every cell of the tile and a one-cell halo;
//   4. each cell writes its depth (before this substep's move) and its own faces (left, bottom; hex:
//      z face [y, x]; the last column and row also the outer faces), scaled by the upwind cell's K.
// The arithmetic is that of move.comp, accelerate.comp and scale_outflow.comp, in the same order, so
// the paths agree to the last bit. SETTLE 1 (the last substep of a step() call of two or more, whose
// input depth is a scratch texture): each cell writes its depth *after* this substep's move into the
// grid's water texture (move.comp's arithmetic on the scaled flows it stores), and the workgroup
// folds the volume / deepest-water record of stats.comp over its tile into u_partials, so no settle
// or reduction pass follows. After a call of one substep WaterGrid settles the move with move.comp
// (SEPARATE_OUTPUT) and reduces with stats.comp.
#include "common/cells.glsl"
#include "common/water.glsl"
#include "common/pipes.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_OUT_IMAGE, r32f) uniform restrict writeonly image2D u_water_out;
layout(std430, binding = B_FLOW_X) restrict readonly buffer FlowXIn { float u_flow_x_in[]; };
layout(std430, binding = B_FLOW_Y) restrict readonly buffer FlowYIn { float u_flow_y_in[]; };
layout(std430, binding = B_FLOW_X_TMP) restrict writeonly buffer FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict writeonly buffer FlowYOut { float u_flow_y_out[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict readonly buffer FlowZIn { float u_flow_z_in[]; };
layout(std430, binding = B_FLOW_Z_TMP) restrict writeonly buffer FlowZOut { float u_flow_z_out[]; };
#endif
layout(std430, binding = B_LEDGER) restrict buffer Ledger { double u_ledger[]; };   // volume into the grid
#if SETTLE
#define STATS_GROUP STATS_SLOTS     // min(THREADS, 256): the tile's shared memory leaves room for no more
#define STATS_HALF HALF_SLOTS
#include "common/stats.glsl"
layout(std430, binding = B_PARTIALS) restrict writeonly buffer Partials { Stats u_partials[]; };
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

// for (i = tid; i < COUNT; i += THREADS) with a trip count the compiler knows, so it can unroll the
// loop and issue every load of a phase before waiting on the first
#define FOR_EACH(i, COUNT) for (uint k_ = 0u; k_ < uint(((COUNT) + THREADS - 1) / THREADS); ++k_) \
    for (uint i = gl_LocalInvocationIndex + k_ * THREADS; i < uint(COUNT); i = uint(COUNT))

ivec2 g_origin;                     // first cell of this tile

int at2(ivec2 c) { ivec2 l = c - g_origin + 2; return l.y * W2 + l.x; }
int at1(ivec2 c) { ivec2 l = c - g_origin + 1; return l.y * W1 + l.x; }
int atx(ivec2 f) { ivec2 l = f - g_origin + 1; return l.y * WF + l.x; }
int aty(ivec2 f) { ivec2 l = f - g_origin + 1; return l.y * W1 + l.x; }
#if HEX
int atz(ivec2 f) { ivec2 l = f - g_origin + 1; return l.y * WF + l.x; }
#endif

float accelerate(float q, ivec2 from, ivec2 to, int b) {
    bool from_in = inside(from), to_in = inside(to);
    if (from_in && to_in) return interior_flow(q, s_z[at2(from)], s_h[at2(from)], s_z[at2(to)], s_h[at2(to)]);
    if (b < 0 || !(from_in || to_in)) return 0.0;
    ivec2 c = to_in ? to : from;
    return boundary_flow(q, b, to_in, s_z[at2(c)], s_h[at2(c)]);
}

float net_in(ivec2 c) {             // sum in - sum out of the input flows, as in move.comp
    int x = c.x, y = c.y;
    float net = u_flow_x_in[index_x(c)] - u_flow_x_in[index_x(ivec2(x + 1, y))]
              + u_flow_y_in[index_y(c)] - u_flow_y_in[index_y(ivec2(x, y + 1))];
#if HEX
    net += u_flow_z_in[index_z(ivec2(x + 1, y))] - u_flow_z_in[index_z(ivec2(x, y + 1))];
#endif
    return net;
}

// The scaled flow of a boundary-tile face (the upwind cell may be outside: no scaling).
float scaled_value(float q, ivec2 from, ivec2 to) {
    ivec2 upwind = q > 0.0 ? from : to;
    if (q != 0.0 && inside(upwind)) q *= s_k[at1(upwind)];
    return q;
}

// The scaled flow of a face; the owner of a boundary face books what crossed it in its ledger slot.
float scaled(float q, ivec2 from, ivec2 to, int b) {
    q = scaled_value(q, from, to);
    if (b >= 0 && (inside(from) || inside(to)))
        u_ledger[b] += double(u_dt) * double(inside(to) ? q : -q);
    return q;
}

void store_x(ivec2 f) { u_flow_x_out[index_x(f)] = scaled(s_qx[atx(f)], f - ivec2(1, 0), f, boundary_x(f)); }
void store_y(ivec2 f) { u_flow_y_out[index_y(f)] = scaled(s_qy[aty(f)], f - ivec2(0, 1), f, boundary_y(f)); }
#if HEX
void store_z(ivec2 f) { u_flow_z_out[index_z(f)] = scaled(s_qz[atz(f)], f - ivec2(0, 1), f - ivec2(1, 0), boundary_z(f)); }
#endif

#if SETTLE
// The scaled flows of cell c's faces, as store_cell stores them (without booking the ledger).
float flow_x(ivec2 f, bool interior) {
    float q = s_qx[atx(f)];
    return interior ? q * s_k[at1(q > 0.0 ? f - ivec2(1, 0) : f)] : scaled_value(q, f - ivec2(1, 0), f);
}
float flow_y(ivec2 f, bool interior) {
    float q = s_qy[aty(f)];
    return interior ? q * s_k[at1(q > 0.0 ? f - ivec2(0, 1) : f)] : scaled_value(q, f - ivec2(0, 1), f);
}
#if HEX
float flow_z(ivec2 f, bool interior) {
    float q = s_qz[atz(f)];
    return interior ? q * s_k[at1(q > 0.0 ? f - ivec2(0, 1) : f - ivec2(1, 0))]
                    : scaled_value(q, f - ivec2(0, 1), f - ivec2(1, 0));
}
#endif

// Cell c's depth after this substep's move, as move.comp computes it.
float settled(ivec2 c, bool interior) {
    int x = c.x, y = c.y;
    float net = flow_x(c, interior) - flow_x(ivec2(x + 1, y), interior)
              + flow_y(c, interior) - flow_y(ivec2(x, y + 1), interior);
#if HEX
    net += flow_z(ivec2(x + 1, y), interior) - flow_z(ivec2(x, y + 1), interior);
#endif
    return max(s_h[at2(c)] + u_dt / u_cell_area * net, 0.0);
}
#endif

// Cell c's depth and its own faces (left, bottom; hex: z face [y, x]; the last column and row also the
// outer faces), each scaled by its upwind cell's K. The depth is the one before this substep's
// move, or with SETTLE the one after it.
void store_cell(ivec2 c, bool interior, float h) {
    ivec2 n = u_size;
    imageStore(u_water_out, c, vec4(h));
    if (interior) {                                                   // no boundary faces here
        float q = s_qx[atx(c)];
        u_flow_x_out[index_x(c)] = q * s_k[at1(q > 0.0 ? c - ivec2(1, 0) : c)];
        q = s_qy[aty(c)];
        u_flow_y_out[index_y(c)] = q * s_k[at1(q > 0.0 ? c - ivec2(0, 1) : c)];
#if HEX
        q = s_qz[atz(c)];
        u_flow_z_out[index_z(c)] = q * s_k[at1(q > 0.0 ? c - ivec2(0, 1) : c - ivec2(1, 0))];
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
        if (valid && u_pending) h = max(h + u_dt / u_cell_area * net_in(c), 0.0);      // as move.comp
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
            q = interior_flow(u_flow_x_in[index_x(f)], s_z[a], s_h[a], s_z[b], s_h[b]);
        else if (f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y < n.y)
            q = accelerate(u_flow_x_in[index_x(f)], f - ivec2(1, 0), f, boundary_x(f));
        s_qx[i] = q;
    }
    FOR_EACH(i, W1 * HF) {
        ivec2 l = ivec2(i % W1, i / W1), f = g_origin - 1 + l;
        int a = l.y * W2 + l.x + 1, b = a + W2;                             // (x, y-1), (x, y)
        float q = 0.0;
        if (interior)
            q = interior_flow(u_flow_y_in[index_y(f)], s_z[a], s_h[a], s_z[b], s_h[b]);
        else if (f.x >= 0 && f.x < n.x && f.y >= 0 && f.y <= n.y)
            q = accelerate(u_flow_y_in[index_y(f)], f - ivec2(0, 1), f, boundary_y(f));
        s_qy[i] = q;
    }
#if HEX
    FOR_EACH(i, WF * HF) {
        ivec2 l = ivec2(i % WF, i / WF), f = g_origin - 1 + l;
        int a = l.y * W2 + l.x + 1, b = (l.y + 1) * W2 + l.x;               // (x, y-1), (x-1, y)
        float q = 0.0;
        if (interior)
            q = interior_flow(u_flow_z_in[index_z(f)], s_z[a], s_h[a], s_z[b], s_h[b]);
        else if (f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y <= n.y)
            q = accelerate(u_flow_z_in[index_z(f)], f - ivec2(0, 1), f - ivec2(1, 0), boundary_z(f));
        s_qz[i] = q;
    }
#endif
    barrier();

    FOR_EACH(i, W1 * H1) {
        ivec2 c = g_origin - 1 + ivec2(i % W1, i / W1);
        float outgoing = max(-s_qx[atx(c)], 0.0) + max(s_qx[atx(c + ivec2(1, 0))], 0.0)
                       + max(-s_qy[aty(c)], 0.0) + max(s_qy[aty(c + ivec2(0, 1))], 0.0);
#if HEX
        outgoing += max(-s_qz[atz(c + ivec2(1, 0))], 0.0) + max(s_qz[atz(c + ivec2(0, 1))], 0.0);
#endif
        s_k[i] = outflow_scale(s_h[at2(c)], outgoing);
    }
    barrier();

#if SETTLE
    double total = 0.0;
    float hi = 0.0, lo = 3.0e38;
#endif
    FOR_EACH(i, TILE_X * TILE_Y) {
        ivec2 c = g_origin + ivec2(i % TILE_X, i / TILE_X);
        if (!inside(c)) continue;
#if SETTLE
        float h = settled(c, interior);
        total += double(h);
        hi = max(hi, h);
        if (c.x == 0 || c.y == 0 || c.x == n.x - 1 || c.y == n.y - 1) lo = min(lo, s_z[at2(c)]);   // as stats.comp
        store_cell(c, interior, h);
#else
        store_cell(c, interior, s_h[at2(c)]);
#endif
    }
#if SETTLE
    uint i = gl_LocalInvocationIndex;
    reduce_values(i, THREADS, total, hi, lo);
    if (i == 0) u_partials[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = Stats(s_sum[0], s_max[0], s_min[0]);
#endif
}
