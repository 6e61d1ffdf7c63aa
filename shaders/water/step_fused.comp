#version 430
// WaterGrid._step_fused: STEPS whole substeps (move, accelerate, scale outflow) in one dispatch.
//
// The move of the previous substep is applied lazily: the input depth is the depth *before* that
// move and u_pending says it is (false on the first substep of a step() call). A launch reads
// terrain, depth and flows once and writes depth and flows once (28 B per cell on the square grid,
// DESIGN section 6), so STEPS substeps per launch divide that traffic by STEPS (temporal blocking).
// Each 16x16 tile works in shared memory on a region of W x W cells, the tile and a halo of H = 2 STEPS:
//   load: depth after the pending move, and bed, over the whole region;
//   then per substep s, on a region that shrinks by two cells each substep (margin m = 2 s):
//     A. accelerated flow of every face between cells of margin m (common/pipes.glsl), from the
//        input flows (s = 0) or the previous substep's scaled flows;
//     B. outflow scale K of every cell of margin m + 1;
//     C. (all but the last substep) each cell of margin m + 2 moves by its scaled faces;
//   store: each tile cell writes its depth (before the last substep's move) and its own faces (left,
//   bottom; hex: z face [y, x]; the last column and row also the outer faces), scaled by the upwind K.
// The halo is recomputed by every tile that needs it; only the tile that stores a boundary face books
// it in the ledger. The arithmetic is that of move.comp, accelerate.comp and scale_outflow.comp in the
// same order, so the paths agree to rounding; after the last substep WaterGrid settles the pending
// move with move.comp (SEPARATE_OUTPUT) into the water texture.
#include "common/grid.glsl"
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

uniform bool u_pending;             // the input flows are not yet moved into u_water_in

#define T LOCAL_SIZE
#define H (2 * STEPS)               // halo: each substep needs two more cells around the next
#define W (T + 2 * H)               // cells per row of the region; region cell (lx, ly) is ly * W + lx
shared float s_h[W * W];            // depth
shared float s_z[W * W];            // bed
shared float s_qx[W * W];           // x face (lx, ly): from cell (lx-1, ly) to (lx, ly)
shared float s_qy[W * W];           // y face (lx, ly): from (lx, ly-1) to (lx, ly)
#if HEX
shared float s_qz[W * W];           // z face (lx, ly): from (lx, ly-1) to (lx-1, ly)
#endif
shared float s_k[W * W];            // outflow scale

ivec2 g_base;                       // grid cell of region cell (0, 0): the tile's first cell - H
ivec2 g_origin;                     // the tile's first cell
bool g_interior;                    // the whole region lies inside the grid: no boundary, no outside cell

// Region cells [lo, W - lo)^2, spread over the tile's invocations: i-th cell of the square.
#define FOR_REGION(lo) \
    for (uint i_ = gl_LocalInvocationIndex; i_ < uint((W - 2 * (lo)) * (W - 2 * (lo))); i_ += T * T)
#define REGION_CELL(lo) (ivec2(lo) + ivec2(i_ % uint(W - 2 * (lo)), i_ / uint(W - 2 * (lo))))

bool valid(ivec2 c) { return g_interior || inside(c); }

// Accelerated flow of a face from region cell a (grid cell from) to b (grid cell to), as accelerate.comp.
float accelerate(float q, int a, int b, ivec2 from, ivec2 to, int bc) {
    if (g_interior) return interior_flow(q, s_z[a], s_h[a], s_z[b], s_h[b]);
    bool from_in = inside(from), to_in = inside(to);
    if (from_in && to_in) return interior_flow(q, s_z[a], s_h[a], s_z[b], s_h[b]);
    if (bc < 0 || !(from_in || to_in)) return 0.0;
    int c = to_in ? b : a;
    return boundary_flow(q, bc, to_in, s_z[c], s_h[c]);
}

// The scaled flow of a face whose accelerated flow is q, from region cell a (grid cell from) to b.
float scaled(float q, int a, int b, ivec2 from, ivec2 to) {
    if (g_interior) return q * s_k[q > 0.0 ? a : b];
    if (q != 0.0 && inside(q > 0.0 ? from : to)) q *= s_k[q > 0.0 ? a : b];
    return q;
}

float scaled_x(int i, ivec2 f) { return scaled(s_qx[i], i - 1, i, f - ivec2(1, 0), f); }
float scaled_y(int i, ivec2 f) { return scaled(s_qy[i], i - W, i, f - ivec2(0, 1), f); }
#if HEX
float scaled_z(int i, ivec2 f) { return scaled(s_qz[i], i - W, i - 1, f - ivec2(0, 1), f - ivec2(1, 0)); }
#endif

// Book dt * q of boundary face bc (q from `from` to `to`) as volume into the grid, if this tile stores
// the face: the tile of grid cell clamp(f, 0, n - 1) (see the store phase).
void book(int bc, float q, ivec2 f, ivec2 to) {
    ivec2 owner = clamp(f, ivec2(0), u_size - 1) - g_origin;
    if (bc >= 0 && all(greaterThanEqual(owner, ivec2(0))) && all(lessThan(owner, ivec2(T))))
        u_ledger[bc] += double(u_dt) * double(inside(to) ? q : -q);
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

// A. Accelerate the faces between region cells of margin m; s > 0 starts from the scaled flows of
// the previous substep (booking the boundary faces this tile stores).
void accelerate_faces(int s, int m) {
    ivec2 n = u_size;
    FOR_REGION(m) {
        ivec2 l = REGION_CELL(m), f = g_base + l;
        int i = l.y * W + l.x;
        if (l.x > m) {
            ivec2 from = f - ivec2(1, 0);
            bool on_grid = g_interior || (f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y < n.y);
            int bc = g_interior ? -1 : boundary_x(f);
            float q = 0.0;
            if (on_grid) {
                if (s == 0) {
                    q = u_flow_x_in[index_x(f)];
                } else {
                    q = scaled_x(i, f);
                    if (!g_interior) book(bc, q, f, f);
                }
            }
            s_qx[i] = on_grid ? accelerate(q, i - 1, i, from, f, bc) : 0.0;
        }
        if (l.y > m) {
            ivec2 from = f - ivec2(0, 1);
            bool on_grid = g_interior || (f.x >= 0 && f.x < n.x && f.y >= 0 && f.y <= n.y);
            int bc = g_interior ? -1 : boundary_y(f);
            float q = 0.0;
            if (on_grid) {
                if (s == 0) {
                    q = u_flow_y_in[index_y(f)];
                } else {
                    q = scaled_y(i, f);
                    if (!g_interior) book(bc, q, f, f);
                }
            }
            s_qy[i] = on_grid ? accelerate(q, i - W, i, from, f, bc) : 0.0;
        }
#if HEX
        if (l.x > m && l.y > m) {
            ivec2 from = f - ivec2(0, 1), to = f - ivec2(1, 0);
            bool on_grid = g_interior || (f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y <= n.y);
            int bc = g_interior ? -1 : boundary_z(f);
            float q = 0.0;
            if (on_grid) {
                if (s == 0) {
                    q = u_flow_z_in[index_z(f)];
                } else {
                    q = scaled_z(i, f);
                    if (!g_interior) book(bc, q, f, to);
                }
            }
            s_qz[i] = on_grid ? accelerate(q, i - W, i - 1, from, to, bc) : 0.0;
        }
#endif
    }
}

// B. Outflow scale of the cells of margin m + 1, as scale_outflow.comp.
void scale_cells(int m) {
    FOR_REGION(m + 1) {
        ivec2 l = REGION_CELL(m + 1);
        int i = l.y * W + l.x;
        float outgoing = max(-s_qx[i], 0.0) + max(s_qx[i + 1], 0.0)
                       + max(-s_qy[i], 0.0) + max(s_qy[i + W], 0.0);
#if HEX
        outgoing += max(-s_qz[i + 1], 0.0) + max(s_qz[i + W], 0.0);
#endif
        s_k[i] = outflow_scale(s_h[i], outgoing);
    }
}

// C. Move the cells of margin m + 2 by their scaled faces, as move.comp.
void move_cells(int m) {
    FOR_REGION(m + 2) {
        ivec2 l = REGION_CELL(m + 2), c = g_base + l;
        if (!valid(c)) continue;
        int i = l.y * W + l.x;
        float net = scaled_x(i, c) - scaled_x(i + 1, c + ivec2(1, 0))
                  + scaled_y(i, c) - scaled_y(i + W, c + ivec2(0, 1));
#if HEX
        net += scaled_z(i + 1, c + ivec2(1, 0)) - scaled_z(i + W, c + ivec2(0, 1));
#endif
        s_h[i] = max(s_h[i] + u_dt / u_cell_area * net, 0.0);
    }
}

void store_x(int i, ivec2 f) {
    float q = scaled_x(i, f);
    if (!g_interior) book(boundary_x(f), q, f, f);
    u_flow_x_out[index_x(f)] = q;
}
void store_y(int i, ivec2 f) {
    float q = scaled_y(i, f);
    if (!g_interior) book(boundary_y(f), q, f, f);
    u_flow_y_out[index_y(f)] = q;
}
#if HEX
void store_z(int i, ivec2 f) {
    float q = scaled_z(i, f);
    if (!g_interior) book(boundary_z(f), q, f, f - ivec2(1, 0));
    u_flow_z_out[index_z(f)] = q;
}
#endif

void main() {
    g_origin = ivec2(gl_WorkGroupID.xy) * T;
    g_base = g_origin - H;
    ivec2 n = u_size;
    // A tile whose region lies inside the grid (nearly every tile of a large grid) has no boundary
    // face and no cell outside: it skips those tests; the arithmetic is the same.
    g_interior = all(greaterThanEqual(g_base, ivec2(0))) && all(lessThanEqual(g_base + W, n));

    FOR_REGION(0) {
        ivec2 l = REGION_CELL(0), c = g_base + l;
        int i = l.y * W + l.x;
        bool ok = valid(c);
        float h = ok ? imageLoad(u_water_in, c).r : 0.0;
        if (ok && u_pending) h = max(h + u_dt / u_cell_area * net_in(c), 0.0);      // as move.comp
        s_h[i] = h;
        s_z[i] = ok ? terrain_at(c) : 0.0;
    }
    barrier();
    for (int s = 0; s < STEPS; s++) {
        int m = 2 * s;
        accelerate_faces(s, m);
        barrier();
        scale_cells(m);
        barrier();
        if (s + 1 < STEPS) {
            move_cells(m);
            barrier();
        }
    }

    ivec2 l = ivec2(gl_LocalInvocationID.xy) + H, c = g_base + l;
    if (!inside(c)) return;
    int i = l.y * W + l.x;
    imageStore(u_water_out, c, vec4(s_h[i]));
    bool last_x = c.x == n.x - 1, last_y = c.y == n.y - 1;
    store_x(i, c);
    if (last_x) store_x(i + 1, c + ivec2(1, 0));
    store_y(i, c);
    if (last_y) store_y(i + W, c + ivec2(0, 1));
#if HEX
    store_z(i, c);
    if (last_x) store_z(i + 1, c + ivec2(1, 0));
    if (last_y) store_z(i + W, c + ivec2(0, 1));
    if (last_x && last_y) store_z(i + W + 1, c + ivec2(1, 1));     // the unused corner face: 0
#endif
}
