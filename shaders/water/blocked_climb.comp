#version 430
// Blocked._launch, its climb program (square grids): STEPS whole substeps in one dispatch on the
// blocked kernel's state (pack.comp), as blocked_tile.comp's INTERIOR program does them, but a
// workgroup climbs its tile a row at a time instead of settling the whole tile at once.
//
// A workgroup is one row of GROUP_X invocations, one per column of the tile grown by a halo of two
// cells a substep (three with INERTIA) on each side. STEPS is 1 to 6. It climbs from HALO rows below
// the tile to the row the last substep's move needs, and at every climb step j each substep is a
// stage of a pipeline: stage s takes row r = first + j - 3 s (stage 0 the texel it loaded, stage s > 0
// the row stage s - 1 moved at the step before) and
//   - works out the accelerated flows of row r's faces: x from the column at its left (the invocation
//     beside it), y from the row below (its own column, held from the step before);
//   - the outflow scale K of row r - 1, whose top faces are row r's y faces;
//   - moves row r - 2: each face scaled by the K of its upwind cell (rows r - 3 .. r - 1 of its own
//     column, row r - 2 of the columns beside it).
// Rows below the tile's and its halo's are worked out with garbage and never used: a substep's
// garbage reaches two rows and two columns further in, which the halo leaves outside the tile. So a
// stage joins the climb at the step its first correct row comes (START), and leaves it after the last
// row the next stage takes: the steps before and after it would only make garbage.
// What an invocation needs from the columns beside it (their surface and bed, the flow of its right
// face, their K) goes through shared memory, one barrier a step for every stage: a stage's rows lag
// three behind the stage before, so its input was moved a step earlier.
// Against the tile program this works out no halo row (rows go up) and holds a column's rows in
// registers, not shared memory; the texels are loaded AHEAD steps ahead of their use.
//
// INERTIA: a face's stencil also reaches the faces beside it (common/model.glsl's FaceStencil), so
// the halo is three cells a substep and stage s takes row r = first + j - 4 s and
//   - works out the velocities of row r's faces (x from the column at its left, y from the row below);
//   - the accelerated flows of row r - 1's faces, from the old flows and velocities of rows r - 2 .. r
//     of its own column and row r - 1 (and the flow_y of row r) of the columns beside it;
//   - K of row r - 2 and moves row r - 3, as above.
// Each velocity is worked out once, by the column of its face, and told to the columns beside it with
// the texel the stage took; a substep's garbage reaches three rows. With EDGES a boundary face's
// velocity takes its inside column for both sides and a face with no cell in the grid has none, as the
// tile program's.
//
// SLEEP: a workgroup a tile of the plan's list (common/sleep.glsl; SLEEP_TILE = TILE_X = TILE_Y; with
// EDGES in calls with open sides, the listed tiles whose halo reaches past the grid, SLEEP_EDGES), which
// it flags where a substep changed one of the texels it stores in any bit (hydro/water_sleep.py): each
// stage compares the texels of the tile it moves with those it took.
//
// EDGES: the ring of tiles around the interior rectangle (common/ring.glsl) in calls with open sides,
// as blocked_tile.comp's general program works them: a boundary face takes the boundary face rule's
// flow from its inside column, a face with no cell on either side carries nothing, a cell outside the
// grid scales no face (K = 1; what it holds is never read), and the owner of a boundary face books what
// crossed it at each substep (common/booked.glsl). Those tests go by the lane's column and the stage's
// row, so every warp takes the same path but at the grid's edge columns.
#include "common/cells.glsl"
#include "common/water.glsl"
#include "common/model.glsl"
#if EDGES
#include "common/booked.glsl"
#if !SLEEP
#include "common/ring.glsl"
#endif
#endif

#if HEX
#error "blocked_climb.comp is the square lattice's: its columns have no z faces"
#endif
#if CYCLE
#error "blocked_climb.comp has no water cycle: the planner runs the tile program where the cycle is on"
#endif
#include "common/sleep.glsl"

layout(binding = B_PACKED_IN, rgba32f) uniform restrict readonly image2D u_state_in;
layout(binding = B_PACKED_OUT, rgba32f) uniform restrict writeonly image2D u_state_out;

#define REACH (2 + INERTIA)             // cells a substep's garbage reaches (blocked_tile.comp's REACH)
#define HALO (REACH * STEPS)
#define LAG (3 + INERTIA)               // rows between one stage's row and the next one's
#define MOVED (LAG - 1)                 // rows between a stage's row and the row it moves
layout(local_size_x = GROUP_X) in;      // TILE_X + 2 HALO

#if !EDGES && !SLEEP
uniform ivec2 u_first_tile;             // the interior rectangle's first tile, as blocked_tile.comp's
#endif
#if SLEEP
bool g_change = false;                  // a substep changed a texel of the tile in this invocation's column
#endif
// The texels the tile owns, which the last stage stores (and, EDGES, whose boundary faces it books): this
// lane's column where g_owner, in the rows from g_rows.x to g_rows.y (not included); EDGES no texel past
// the grid's cells and outer faces.
bool g_owner;
ivec2 g_rows;
bool owned(int row) { return g_owner && row >= g_rows.x && row < g_rows.y; }

// What a column tells the columns beside it at a step, for each stage: (surface, bed) of row r, the x
// flow of row r - 1 (its left face: the right face of the column at its left), K of row r - 2; two
// buffers, used in turn, so one barrier a step keeps readers and the next step's writers apart.
// INERTIA: (u_x and u_y of row r - 1, the accelerated x flow of row r - 2, K of row r - 3), and in
// s_row the texel of row r the stage took.
shared vec4 s_side[2][STEPS][GROUP_X];
#if INERTIA
shared vec4 s_row[2][STEPS][GROUP_X];
#endif
#if EDGES
// The boundary table's entries of the faces the climb works out on the grid's edges, read once as it
// starts (a load from the table at each step would hold up the whole workgroup): those of the left
// and right edges by the row's place in the climb (from HALO rows below the tile), those of the
// bottom and top by lane.
#define EDGE_ROWS (TILE_Y + 2 * HALO)
shared BoundaryFace s_edge_x[2][EDGE_ROWS];
shared BoundaryFace s_edge_y[2][GROUP_X];
#endif

// What a stage holds of its column from one step to the next: row r - 1 (surface, bed, depth, its
// faces unscaled), row r - 2 (bed, depth, its faces unscaled, its right face, its K, its y face
// scaled), and the row it moved last; SLEEP the faces rows r - 1 and r - 2 held as it took them.
#if INERTIA
// INERTIA: row r - 1 (surface, bed, depth, its old flows and their velocities, its faces' inertia
// depths, the surface and bed of the column at its left; the old flow_x of the columns beside it,
// flow_y of the one at its left), row r - 2 (surface, bed, depth, old flows, velocities, accelerated faces; the
// old flow_x of the column at its right), row r - 3 (bed, depth, its faces accelerated, the right one
// too, its K, its y face scaled), and the row it moved last; SLEEP row r - 3's flows as it took them.
struct Stage {
    float e1, z1, h1, qx1, qy1, ux1, uy1, dx1, dy1, el1, zl1, ql1, qyl1, qr1;
    float e2, z2, h2, qx2, qy2, ux2, uy2, ax2, ay2, qr2;
    float z3, h3, ax3, axr3, k3, ays3;
    vec4 moved;
#if SLEEP
    float fx3, fy3;
#endif
};

Stage fresh_stage() {
    Stage st;
    st.e1 = st.z1 = st.h1 = st.qx1 = st.qy1 = st.ux1 = st.uy1 = st.dx1 = st.dy1 = st.el1 = st.zl1 = 0.0;
    st.ql1 = st.qyl1 = st.qr1 = 0.0;
    st.e2 = st.z2 = st.h2 = st.qx2 = st.qy2 = st.ux2 = st.uy2 = st.ax2 = st.ay2 = st.qr2 = 0.0;
    st.z3 = st.h3 = st.ax3 = st.axr3 = st.ays3 = 0.0;
    st.k3 = 1.0;
    st.moved = vec4(0.0);
#if SLEEP
    st.fx3 = st.fy3 = 0.0;
#endif
    return st;
}
#else
struct Stage {
    float e1, z1, h1, qx1, qy1;
    float z2, h2, qx2, qxr2, k2, qys2;
    vec4 moved;
#if SLEEP
    float fx1, fy1, fx2, fy2;
#endif
};

// A stage with no rows below it (K 1).
Stage fresh_stage() {
    Stage st;
    st.e1 = st.z1 = st.h1 = st.qx1 = st.qy1 = 0.0;
    st.z2 = st.h2 = st.qx2 = st.qxr2 = st.qys2 = 0.0;
    st.k2 = 1.0;
    st.moved = vec4(0.0);
#if SLEEP
    st.fx1 = st.fy1 = st.fx2 = st.fy2 = 0.0;
#endif
    return st;
}
#endif
float g_rate;                           // move_rate(), once
#if EDGES
int g_x;                                // this lane's texel column
bool g_x_edge;                          // x = 0 or nx: its x faces are boundary faces (rows 0 .. ny - 1)
bool g_x_pipe;                          // 0 < x < nx: its x faces are pipes between two cells
bool g_column;                          // 0 <= x < nx: a column of cells
int g_first;                            // the climb's first row (HALO below the tile's)
int g_lane;

// Books what crossed the boundary faces of this lane's texel in row r at substep s, where the tile
// owns them (blocked_tile.comp's general program books them alike).
void book_edges(int r, int s, float qx, float qy) {
    if (!owned(r)) return;
    if (g_x_edge && r < u_size.y) store_booked(boundary_x(ivec2(g_x, r)), s, entering(qx, g_x == 0));
    if (g_column && (r == 0 || r == u_size.y)) store_booked(boundary_y(ivec2(g_x, r)), s, entering(qy, r == 0));
}

// What the last launch booked at the boundary faces the tile owns, into the ledger, shared among the
// workgroup's invocations (the faces of the left and right edges a row each, those of the bottom and
// top a column each), before any is booked again; and the boundary table's entries of the edge faces
// the climb works out into s_edge_x and s_edge_y. A barrier follows.
void fold_ring_faces(ivec2 origin, int lane) {
    ivec2 n = u_size;
    for (int i = lane; i < EDGE_ROWS; i += GROUP_X) {
        int r = clamp(g_first + i, 0, n.y - 1);         // rows past the grid's: never read
        s_edge_x[0][i] = u_boundary[boundary_x(ivec2(0, r))];
        s_edge_x[1][i] = u_boundary[boundary_x(ivec2(n.x, r))];
    }
    int c = clamp(g_x, 0, n.x - 1);                     // columns past the grid's: never read
    s_edge_y[0][lane] = u_boundary[boundary_y(ivec2(c, 0))];
    s_edge_y[1][lane] = u_boundary[boundary_y(ivec2(c, n.y))];
    for (int r = origin.y + lane; r < min(origin.y + TILE_Y, n.y); r += GROUP_X) {
        if (origin.x == 0) fold_face(boundary_x(ivec2(0, r)), false);
        if (origin.x <= n.x && n.x < origin.x + TILE_X) fold_face(boundary_x(ivec2(n.x, r)), false);
    }
    for (int c = origin.x + lane; c < min(origin.x + TILE_X, n.x); c += GROUP_X) {
        if (origin.y == 0) fold_face(boundary_y(ivec2(c, 0)), false);
        if (origin.y <= n.y && n.y < origin.y + TILE_Y) fold_face(boundary_y(ivec2(c, n.y)), false);
    }
}
#endif

// The outflow scale of the cell in this lane's column and row `row`, of faces f (EDGES: 1 outside the
// grid).
float row_k(float h, Faces f, int row) {
    float k = outflow_scale(h, outgoing(f));
#if EDGES
    if (!(g_column && row >= 0 && row < u_size.y)) k = 1.0;
#endif
    return k;
}

// The texel of this lane's column in row `row` (depth h, bed z, its own K k) moved by its faces, each
// scaled by its upwind cell's K: left and right by the columns beside it (k_left, k_right), top by the
// row above (k_above), bottom as scaled a step before; its top face scaled into top_scaled. EDGES books
// the faces it owns at substep s; SLEEP flags a change of a texel the tile owns from the depth and
// faces (took) it held.
vec4 move_row(float h, float z, float left, float right, float bottom, float top, float k, float k_left,
              float k_right, float k_above, int row, int s, vec2 took, out float top_scaled) {
    Faces f = Faces(upwind_scaled(left, k_left, k), upwind_scaled(right, k, k_right), bottom,
                    upwind_scaled(top, k, k_above));
#if EDGES
    book_edges(row, s, f.left, f.bottom);
#endif
    top_scaled = f.top;
    vec4 after = vec4(moved(h, g_rate, net_inflow(f)), f.left, f.bottom, z);
#if SLEEP
    // a texel of the tile this substep changed: its depth or a face it stores (its bed never changes)
    if (owned(row))
        g_change = g_change || changed(after, vec4(h, took, z));
#endif
    return after;
}

#if INERTIA
vec4 side(Stage st, vec4 row) { return vec4(st.ux1, st.uy1, st.ax2, st.k3); }


// One step of stage s on its row r (depth, flow_x, flow_y, bed), given the texels the columns at its
// left (lt) and right (rtt) took and their sides (la, ra): the velocities of row r's faces, row r - 1's
// faces accelerated, K of row r - 2, row r - 3 moved into st.moved; then the rows move up one.
// EDGES: the faces and cells on and past the grid's edges as blocked_tile.comp's general program has them.
void advance(inout Stage st, vec4 row, vec4 lt, vec4 la, vec4 rtt, vec4 ra, int r, int s) {
    float z = row.w, h = row.x, e = z + h;
    float zl = lt.w, hl = lt.x, el = zl + hl;
    // row r's velocities: x from the column at its left, y from the row below
    float dx = columns_depth(vec2(hl, zl), vec2(h, z));
    float dy = columns_depth(vec2(st.h1, st.z1), vec2(h, z));
#if EDGES
    ivec2 n = u_size;
    bool row_in = r >= 0 && r < n.y, below_in = r >= 1 && r <= n.y;
    float ux = columns_velocity(row.y, vec2(hl, zl), vec2(h, z), row_in && g_x >= 1 && g_x <= n.x,
                                row_in && g_column);
    float uy = columns_velocity(row.z, vec2(st.h1, st.z1), vec2(h, z), below_in && g_column, row_in && g_column);
#else
    float ux = face_velocity(row.y, dx);
    float uy = face_velocity(row.z, dy);
#endif
    // row r - 1's x face (cells x - 1 and x): along it the x faces beside it in its row, across it
    // the y faces of both cells and the x faces below and above it
    // (FaceStencil's members: q, q_before, q_after, u, u_before, u_after, first)
    FaceStencil fx = FaceStencil(st.qx1, st.ql1, st.qr1, st.ux1, la.x, ra.x,
                                 Across(lt.z, row.z, st.qyl1, st.qy1, st.ux2, ux));
    float ax = inertial_flow(fx, st.dx1, st.el1, st.e1);
    // its y face (cells in rows r - 2 and r - 1): along it the y faces below and above it, across it
    // the x faces of both cells and the y faces beside it
    FaceStencil fy = FaceStencil(st.qy1, st.qy2, row.z, st.uy1, st.uy2, uy,
                                 Across(st.qr2, st.qr1, st.qx2, st.qx1, la.y, ra.y));
    float ay = inertial_flow(fy, st.dy1, st.e2, st.e1);
#if EDGES
    // row r - 1's faces on the grid's edges take the boundary face rule from their inside column, those
    // with no cell on either side carry nothing
    int rf = r - 1;
    if (g_x_edge && rf >= 0 && rf < n.y) {
        BoundaryFace face = s_edge_x[g_x == 0 ? 0 : 1][max(rf - g_first, 0)];
        ax = boundary_face_flow(st.qx1, face, g_x == 0, g_x == 0 ? st.z1 : st.zl1, g_x == 0 ? st.e1 : st.el1);
    } else if (!(g_x_pipe && rf >= 0 && rf < n.y))
        ax = 0.0;
    if (g_column && (rf == 0 || rf == n.y)) {
        BoundaryFace face = s_edge_y[rf == 0 ? 0 : 1][g_lane];
        ay = boundary_face_flow(st.qy1, face, rf == 0, rf == 0 ? st.z1 : st.z2, rf == 0 ? st.e1 : st.e2);
    } else if (!(g_column && rf > 0 && rf < n.y))
        ay = 0.0;
#endif
    // K of row r - 2 (the order of outgoing(): left, right, bottom, top), row r - 3 moved
    float k2 = row_k(st.h2, Faces(st.ax2, ra.z, st.ay2, ay), r - 2);
    vec2 took = vec2(0.0);
#if SLEEP
    took = vec2(st.fx3, st.fy3);
    st.fx3 = st.qx2; st.fy3 = st.qy2;
#endif
    float top;
    st.moved = move_row(st.h3, st.z3, st.ax3, st.axr3, st.ays3, st.ay2, st.k3, la.w, ra.w, k2, r - 3, s, took,
                        top);
    // the rows move up one
    st.z3 = st.z2; st.h3 = st.h2; st.ax3 = st.ax2; st.axr3 = ra.z; st.k3 = k2; st.ays3 = top;
    st.e2 = st.e1; st.z2 = st.z1; st.h2 = st.h1; st.qx2 = st.qx1; st.qy2 = st.qy1;
    st.ux2 = st.ux1; st.uy2 = st.uy1; st.ax2 = ax; st.ay2 = ay; st.qr2 = st.qr1;
    st.e1 = e; st.z1 = z; st.h1 = h; st.qx1 = row.y; st.qy1 = row.z; st.ux1 = ux; st.uy1 = uy;
    st.dx1 = dx; st.dy1 = dy; st.el1 = el; st.zl1 = zl; st.ql1 = lt.y; st.qyl1 = lt.z; st.qr1 = rtt.y;
}
#else
vec4 side(Stage st, vec4 row) { return vec4(row.w + row.x, row.w, st.qx1, st.k2); }

// One step of stage s on its row r (depth, flow_x, flow_y, bed), given the sides of the columns at its
// left (l) and right (rt): row r's faces, K of row r - 1, row r - 2 moved into st.moved; then the rows
// move up one. (r and s: EDGES.)
void advance(inout Stage st, vec4 row, vec4 l, vec4 rt, int r, int s) {
    float z = row.w, h = row.x, e = z + h;
    // row r's faces: x from the column at its left, y from the row below
    float qx = surface_flow(row.y, l.x, e, l.y, z);
    float qy = surface_flow(row.z, st.e1, e, st.z1, z);
#if EDGES
    if (g_x_edge && r >= 0 && r < u_size.y) {
        // entries go to boundary_face_flow through a local: NVIDIA's compiler takes no buffer member
        // as a function's argument
        BoundaryFace face = s_edge_x[g_x == 0 ? 0 : 1][r - g_first];
        qx = boundary_face_flow(row.y, face, g_x == 0, g_x == 0 ? z : l.y, g_x == 0 ? e : l.x);
    } else if (!(g_x_pipe && r >= 0 && r < u_size.y))
        qx = 0.0;
    if (g_column && (r == 0 || r == u_size.y)) {
        BoundaryFace face = s_edge_y[r == 0 ? 0 : 1][g_lane];
        qy = boundary_face_flow(row.z, face, r == 0, r == 0 ? z : st.z1, r == 0 ? e : st.e1);
    } else if (!(g_column && r > 0 && r < u_size.y))
        qy = 0.0;
#endif
    // K of row r - 1 (the order of outgoing(): left, right, bottom, top), row r - 2 moved
    float qxr1 = rt.z;
    float k1 = row_k(st.h1, Faces(st.qx1, qxr1, st.qy1, qy), r - 1);
    vec2 took = vec2(0.0);
#if SLEEP
    took = vec2(st.fx2, st.fy2);
    st.fx2 = st.fx1; st.fy2 = st.fy1; st.fx1 = row.y; st.fy1 = row.z;
#endif
    float top;
    st.moved = move_row(st.h2, st.z2, st.qx2, st.qxr2, st.qys2, st.qy1, st.k2, l.w, rt.w, k1, r - 2, s, took,
                        top);
    // the rows move up one
    st.z2 = st.z1; st.h2 = st.h1; st.qx2 = st.qx1; st.qxr2 = qxr1; st.k2 = k1; st.qys2 = top;
    st.e1 = e; st.z1 = z; st.h1 = h; st.qx1 = qx; st.qy1 = qy;
}
#endif

#if INERTIA
#define TELL(s, st, row) s_side[buf][s][lane] = side(st, row); s_row[buf][s][lane] = row;
#define ADVANCE(s, st, row) advance(st, row, s_row[buf][s][left], s_side[buf][s][left], \
                                    s_row[buf][s][right], s_side[buf][s][right], first + step - LAG * (s), s);
#else
#define TELL(s, st, row) s_side[buf][s][lane] = side(st, row);
#define ADVANCE(s, st, row) \
    advance(st, row, s_side[buf][s][left], s_side[buf][s][right], first + step - LAG * (s), s);
#endif

// Stage s works only at the climb steps whose rows something needs: from START(s) to the last step
// less STEPS - 1 - s (CLIMB_STEP(j, lo, hi) runs stages lo to hi). Its first row, first + REACH s, is
// the lowest its input is correct in (a substep's garbage reaches REACH rows), and it starts there as
// stage 0 starts at `first`, fresh, with no rows below. Its last row is the last that stage s + 1 takes, at the
// step after. For four substeps on 24-row tiles that is 136 stage steps against 172.
#define START(s) ((LAG + REACH) * (s))
#define ON(s, lo, hi) ((s) >= (lo) && (s) <= (hi))
#if STEPS > 6
#error "blocked_climb.comp takes 1 to 6 substeps a launch"
#endif
#if STEPS > 1
#define TELL_1(lo, hi) vec4 row1 = st0.moved; if (ON(1, lo, hi)) { TELL(1, st1, row1) }
#define ADVANCE_1(lo, hi) if (ON(1, lo, hi)) { ADVANCE(1, st1, row1) }
#else
#define TELL_1(lo, hi)
#define ADVANCE_1(lo, hi)
#endif
#if STEPS > 2
#define TELL_2(lo, hi) vec4 row2 = st1.moved; if (ON(2, lo, hi)) { TELL(2, st2, row2) }
#define ADVANCE_2(lo, hi) if (ON(2, lo, hi)) { ADVANCE(2, st2, row2) }
#else
#define TELL_2(lo, hi)
#define ADVANCE_2(lo, hi)
#endif
#if STEPS > 3
#define TELL_3(lo, hi) vec4 row3 = st2.moved; if (ON(3, lo, hi)) { TELL(3, st3, row3) }
#define ADVANCE_3(lo, hi) if (ON(3, lo, hi)) { ADVANCE(3, st3, row3) }
#else
#define TELL_3(lo, hi)
#define ADVANCE_3(lo, hi)
#endif
#if STEPS > 4
#define TELL_4(lo, hi) vec4 row4 = st3.moved; if (ON(4, lo, hi)) { TELL(4, st4, row4) }
#define ADVANCE_4(lo, hi) if (ON(4, lo, hi)) { ADVANCE(4, st4, row4) }
#else
#define TELL_4(lo, hi)
#define ADVANCE_4(lo, hi)
#endif
#if STEPS > 5
#define TELL_5(lo, hi) vec4 row5 = st4.moved; if (ON(5, lo, hi)) { TELL(5, st5, row5) }
#define ADVANCE_5(lo, hi) if (ON(5, lo, hi)) { ADVANCE(5, st5, row5) }
#else
#define TELL_5(lo, hi)
#define ADVANCE_5(lo, hi)
#endif
#if STEPS == 1
#define LAST st0
#elif STEPS == 2
#define LAST st1
#elif STEPS == 3
#define LAST st2
#elif STEPS == 4
#define LAST st3
#elif STEPS == 5
#define LAST st4
#else
#define LAST st5
#endif

// Stage 0's row r at step j: the texel loaded AHEAD steps before (hydro/water_plan.py, Tuning.climb_ahead),
// held in p0 .. p5 (named, so no array goes to memory), and the load of the row AHEAD steps on.
#if AHEAD > 6
#error "blocked_climb.comp loads 0 to 6 steps ahead"
#elif AHEAD == 0
#define TAKE_ROW0(j) row0 = LOAD(j);
#elif AHEAD == 1
#define TAKE_ROW0(j) row0 = p0; p0 = LOAD((j) + 1);
#elif AHEAD == 2
#define TAKE_ROW0(j) row0 = p0; p0 = p1; p1 = LOAD((j) + 2);
#elif AHEAD == 3
#define TAKE_ROW0(j) row0 = p0; p0 = p1; p1 = p2; p2 = LOAD((j) + 3);
#elif AHEAD == 4
#define TAKE_ROW0(j) row0 = p0; p0 = p1; p1 = p2; p2 = p3; p3 = LOAD((j) + 4);
#elif AHEAD == 5
#define TAKE_ROW0(j) row0 = p0; p0 = p1; p1 = p2; p2 = p3; p3 = p4; p4 = LOAD((j) + 5);
#else
#define TAKE_ROW0(j) row0 = p0; p0 = p1; p1 = p2; p2 = p3; p3 = p4; p4 = p5; p5 = LOAD((j) + 6);
#endif

// Climb step j with stages lo to hi (constants): each tells the columns beside it what they need, one
// barrier, each advances; the last stage's moved row is stored where the tile owns it.
#define CLIMB_STEP(j, lo, hi) { \
    int step = (j), buf = step & 1; \
    vec4 row0 = vec4(0.0); \
    if (ON(0, lo, hi)) { TAKE_ROW0(j) TELL(0, st0, row0) } \
    TELL_1(lo, hi) TELL_2(lo, hi) TELL_3(lo, hi) TELL_4(lo, hi) TELL_5(lo, hi) \
    barrier(); \
    if (ON(0, lo, hi)) { ADVANCE(0, st0, row0) } \
    ADVANCE_1(lo, hi) ADVANCE_2(lo, hi) ADVANCE_3(lo, hi) ADVANCE_4(lo, hi) ADVANCE_5(lo, hi) \
    int row = first + (j) - LAG * (STEPS - 1) - MOVED; \
    if ((hi) == STEPS - 1 && owned(row)) { \
        imageStore(u_state_out, ivec2(x, row) + MARGIN, LAST.moved); \
    } \
}
// The steps from j0 up to j1 (not included) with stages 0 to hi; min() with the grid's height (never
// the smaller) only keeps the compiler from unrolling them.
#define CLIMB(j0, j1, hi) for (int j = (j0); j < min((j1), u_size.y + (j1)); j++) CLIMB_STEP(j, 0, hi)

void main() {
    g_rate = move_rate();
    int lane = int(gl_LocalInvocationID.x);
#if SLEEP
    ivec2 tile = listed_tile();
    ivec2 origin = tile * ivec2(TILE_X, TILE_Y);
#elif EDGES
    int k = ring_workgroup();
    if (k < 0) return;
    ivec2 origin = ring_tile(k) * ivec2(TILE_X, TILE_Y);
#else
    ivec2 origin = (ivec2(gl_WorkGroupID.xy) + u_first_tile) * ivec2(TILE_X, TILE_Y);
#endif
    int x = origin.x - HALO + lane;
#if EDGES
    g_x = x;
    g_x_edge = x == 0 || x == u_size.x;
    g_x_pipe = x > 0 && x < u_size.x;
    g_column = x >= 0 && x < u_size.x;
    g_first = origin.y - HALO;
    g_lane = lane;
#endif
    g_owner = lane >= HALO && lane < HALO + TILE_X;
    g_rows = ivec2(origin.y, origin.y + TILE_Y);
#if EDGES
    g_owner = g_owner && x <= u_size.x;
    g_rows.y = min(g_rows.y, u_size.y + 1);
#endif
    int left = max(lane - 1, 0), right = min(lane + 1, GROUP_X - 1);   // the edge lanes' are garbage
    int first = origin.y - HALO;
    // the last stage moves the tile's top row at the last step
    const int climb = TILE_Y + HALO + MOVED + LAG * (STEPS - 1);
    int top = imageSize(u_state_in).y - 1 - MARGIN;     // the state's last row: rows past it are not needed
#define LOAD(k) imageLoad(u_state_in, ivec2(x, min(first + (k), top)) + MARGIN)
#if AHEAD > 0
    vec4 p0 = LOAD(0);
#endif
#if AHEAD > 1
    vec4 p1 = LOAD(1);
#endif
#if AHEAD > 2
    vec4 p2 = LOAD(2);
#endif
#if AHEAD > 3
    vec4 p3 = LOAD(3);
#endif
#if AHEAD > 4
    vec4 p4 = LOAD(4);
#endif
#if AHEAD > 5
    vec4 p5 = LOAD(5);
#endif
#if EDGES
    fold_ring_faces(origin, lane);
    memoryBarrierBuffer();
    barrier();
#endif
    Stage st0 = fresh_stage();
#if STEPS > 1
    Stage st1 = fresh_stage();
#endif
#if STEPS > 2
    Stage st2 = fresh_stage();
#endif
#if STEPS > 3
    Stage st3 = fresh_stage();
#endif
#if STEPS > 4
    Stage st4 = fresh_stage();
#endif
#if STEPS > 5
    Stage st5 = fresh_stage();
#endif
    // the stages join in turn, every one works from START(STEPS - 1), they leave in turn
#if STEPS > 1
    CLIMB(START(0), START(1), 0)
#endif
#if STEPS > 2
    CLIMB(START(1), START(2), 1)
#endif
#if STEPS > 3
    CLIMB(START(2), START(3), 2)
#endif
#if STEPS > 4
    CLIMB(START(3), START(4), 3)
#endif
#if STEPS > 5
    CLIMB(START(4), START(5), 4)
#endif
    CLIMB(START(STEPS - 1), climb - STEPS + 1, STEPS - 1)
#if STEPS > 1
    CLIMB_STEP(climb - STEPS + 1, 1, STEPS - 1)
#endif
#if STEPS > 2
    CLIMB_STEP(climb - STEPS + 2, 2, STEPS - 1)
#endif
#if STEPS > 3
    CLIMB_STEP(climb - STEPS + 3, 3, STEPS - 1)
#endif
#if STEPS > 4
    CLIMB_STEP(climb - STEPS + 4, 4, STEPS - 1)
#endif
#if STEPS > 5
    CLIMB_STEP(climb - STEPS + 5, 5, STEPS - 1)
#endif
#if SLEEP
    if (g_change) sleep_flag(tile);
#endif
}
