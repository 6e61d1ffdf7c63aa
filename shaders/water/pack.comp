#version 430
// Blocked._pack / Blocked._unpack: the blocked kernel's state (blocked_tile.comp, blocked_climb.comp):
// one rgba32f texel per cell and face,
// (depth, flow_x[y, x], flow_y[y, x], bed or HEX flow_z[y, x]) at texel (x, y), x <= nx, y <= ny.
// The state texture has a margin of MARGIN texels around the (nx + 1) x (ny + 1) it holds (texel (x, y)
// at (x, y) + MARGIN) and reaches past it, so every tile of the blocked kernel and its halo lie in it;
// what lies outside the grid's cells holds a ghost column: no water, no flow, and a bed at GHOST_BED,
// above every surface, so that no pipe into it has any cross-section (Blocked._make_states fills
// the texels outside; this pass those of the outer faces, x = nx or y = ny). HEX: the texel's fourth
// component is a flow; the beds go to an r32f texture of the state's size (u_bed, as the state laid out),
// but with EROSION, whose launches read the beds from the erosion state (pack_erosion.comp).
// UNPACK 0: the grid's water, terrain and flows into the state, before the first substep of a call.
// UNPACK 1: the state back into the grid's flows and water texture, after the last, and what the
// last launch booked at the boundary faces into the ledger (common/booked.glsl), its slots cleared
// for the next call.
// One invocation per texel; SLEEP: the texels of the listed tiles, a workgroup a tile (common/sleep.glsl).
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/boundary_table.glsl"
#define SLEEP_UNFLAGGED 1
#include "common/sleep.glsl"
#if UNPACK
#include "common/booked.glsl"

layout(binding = B_PACKED_IN, rgba32f) uniform restrict readonly image2D u_state;
layout(binding = B_WATER, r32f) uniform restrict writeonly image2D u_water;
#define FLOWS restrict writeonly
#else
layout(binding = B_PACKED_OUT, rgba32f) uniform restrict writeonly image2D u_state;
layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
#define FLOWS restrict readonly
#if HEX && !EROSION
layout(binding = B_OUT_IMAGE, r32f) uniform restrict writeonly image2D u_bed;
#endif

// The flow a face starts the call with, q as it holds it unless the face is on the grid's edge and a
// wall (or, hex, an unused corner face: b < 0), whatever it held (a side that was open before
// set_boundary, the flow setters). The programs that work boundary faces out give a wall 0 whatever
// it held, but a ghost column's pipe (walled calls) keeps q (1 - f)^dt. The x and y faces; the hex z
// faces' same test is written out in main().
float start_flow(float q, bool edge, int b) { return !edge || (b >= 0 && u_boundary[b].kind != BC_WALL) ? q : 0.0; }
#endif
layout(std430, binding = B_FLOW_X) FLOWS buffer FlowX { float u_flow_x[]; };
layout(std430, binding = B_FLOW_Y) FLOWS buffer FlowY { float u_flow_y[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) FLOWS buffer FlowZ { float u_flow_z[]; };
#endif

// Texel t of the state.
void texel(ivec2 t) {
    ivec2 n = u_size;
    if (any(greaterThan(t, n))) return;
    bool cell = inside(t), has_x = t.y < n.y, has_y = t.x < n.x;
#if UNPACK
    vec4 p = imageLoad(u_state, t + MARGIN);
    if (has_x) u_flow_x[index_x(t)] = p.y;
    if (has_y) u_flow_y[index_y(t)] = p.z;
#if HEX
    u_flow_z[index_z(t)] = p.w;
#endif
    if (cell) imageStore(u_water, t, vec4(p.x));
    ivec2 left = t - ivec2(1, 0), below = t - ivec2(0, 1);
    if (has_x) fold_booked(left, t, boundary_x(t), true);       // the owner of each face, as in
    if (has_y) fold_booked(below, t, boundary_y(t), true);      // blocked_tile.comp
#if HEX
    fold_booked(below, left, boundary_z(t), true);
#endif
#else
    vec4 p = vec4(0.0);
    if (cell) p.x = imageLoad(u_water, t).r;
    bool edge_x = t.x == 0 || t.x == n.x, edge_y = t.y == 0 || t.y == n.y;
    if (has_x) p.y = start_flow(u_flow_x[index_x(t)], edge_x, boundary_x(t));
    if (has_y) p.z = start_flow(u_flow_y[index_y(t)], edge_y, boundary_y(t));
#if HEX
    // Not through start_flow: one GPU driver's compiler made start_flow(u_flow_z[...], edge_x || edge_y,
    // boundary_z(t)) 0 at every texel, so every hex call but a grid's first started from no z flow;
    // the same test written out here gives the flows (docs/benchmarks-log.md).
    p.w = u_flow_z[index_z(t)];
    if (edge_x || edge_y) {
        int bz = boundary_z(t);
        if (bz < 0 || u_boundary[bz].kind == BC_WALL) p.w = 0.0;
    }
#if !EROSION
    imageStore(u_bed, t + MARGIN, vec4(cell ? terrain_at(t) : GHOST_BED));
#endif
#else
    p.w = cell ? terrain_at(t) : GHOST_BED;
#endif
    imageStore(u_state, t + MARGIN, p);
#endif
}

void main() {
#if SLEEP
    // a workgroup of SLEEP_TILE x GROUP_Y invocations, each a texel every GROUP_Y rows of the tile
    ivec2 t = listed_tile() * SLEEP_TILE + ivec2(gl_LocalInvocationID.xy);
    for (int y = 0; y < SLEEP_TILE; y += GROUP_Y) texel(t + ivec2(0, y));
#else
    texel(ivec2(gl_GlobalInvocationID.xy));
#endif
}
