#version 430
// WaterGrid._step_fused: a whole substep (accelerate, scale outflow, move) in one dispatch, reading
// terrain, depth and flows once and writing depth and flows once: 28 B per cell on the square grid,
// the floor of DESIGN section 6. Each 16x16 tile works in shared memory:
//   1. depth and bed of the tile and a two-cell halo;
//   2. accelerated flow of every face of the tile and a one-cell halo (common/pipes.glsl);
//   3. outflow scale K of every cell of the tile and a one-cell halo;
//   4. each cell scales its faces by their upwind cell's K, moves its own column, and writes its
//      depth and the faces it owns (left, bottom; hex: z face [y, x]; the last column and row also
//      the outer faces).
// A face shared by two tiles is computed by both from the same inputs with the same instructions, so
// both sides see the same flow and volume is conserved as in the three-pass step
// (accelerate.comp, scale_outflow.comp, move.comp), whose arithmetic this repeats in the same order.
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

#define T LOCAL_SIZE
#define W2 (T + 4)                  // cells per row of the tile with a two-cell halo
#define W1 (T + 2)                  // cells per row of the tile with a one-cell halo
#define WF (T + 3)                  // faces per row across the one-cell halo
shared float s_h[W2 * W2];
shared float s_z[W2 * W2];
shared float s_qx[WF * W1];
shared float s_qy[W1 * WF];
#if HEX
shared float s_qz[WF * WF];
#endif
shared float s_k[W1 * W1];

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

float scaled(float q, ivec2 from, ivec2 to) {
    ivec2 upwind = q > 0.0 ? from : to;
    return (q != 0.0 && inside(upwind)) ? q * s_k[at1(upwind)] : q;
}

float flow_x(ivec2 f) { return scaled(s_qx[atx(f)], f - ivec2(1, 0), f); }
float flow_y(ivec2 f) { return scaled(s_qy[aty(f)], f - ivec2(0, 1), f); }
#if HEX
float flow_z(ivec2 f) { return scaled(s_qz[atz(f)], f - ivec2(0, 1), f - ivec2(1, 0)); }
#endif

// The owner of a boundary face books what crossed it into the face's ledger slot.
void book(int b, float q, bool enters) {
    if (b >= 0) u_ledger[b] += double(u_dt) * double(enters ? q : -q);
}

void store_x(ivec2 f, float q) { u_flow_x_out[index_x(f)] = q; book(boundary_x(f), q, f.x == 0); }
void store_y(ivec2 f, float q) { u_flow_y_out[index_y(f)] = q; book(boundary_y(f), q, f.y == 0); }
#if HEX
void store_z(ivec2 f, float q) {
    u_flow_z_out[index_z(f)] = q;
    if (inside(f - ivec2(0, 1)) || inside(f - ivec2(1, 0))) book(boundary_z(f), q, inside(f - ivec2(1, 0)));
}
#endif

void main() {
    g_origin = ivec2(gl_WorkGroupID.xy) * T;
    uint tid = gl_LocalInvocationIndex;
    const uint threads = T * T;
    ivec2 n = u_size;

    for (uint i = tid; i < W2 * W2; i += threads) {
        ivec2 c = g_origin - 2 + ivec2(i % W2, i / W2);
        bool valid = inside(c);
        s_h[i] = valid ? imageLoad(u_water_in, c).r : 0.0;
        s_z[i] = valid ? terrain_at(c) : 0.0;
    }
    barrier();

    for (uint i = tid; i < WF * W1; i += threads) {
        ivec2 f = g_origin - 1 + ivec2(i % WF, i / WF);
        bool valid = f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y < n.y;
        s_qx[i] = valid ? accelerate(u_flow_x_in[index_x(f)], f - ivec2(1, 0), f, boundary_x(f)) : 0.0;
    }
    for (uint i = tid; i < W1 * WF; i += threads) {
        ivec2 f = g_origin - 1 + ivec2(i % W1, i / W1);
        bool valid = f.x >= 0 && f.x < n.x && f.y >= 0 && f.y <= n.y;
        s_qy[i] = valid ? accelerate(u_flow_y_in[index_y(f)], f - ivec2(0, 1), f, boundary_y(f)) : 0.0;
    }
#if HEX
    for (uint i = tid; i < WF * WF; i += threads) {
        ivec2 f = g_origin - 1 + ivec2(i % WF, i / WF);
        bool valid = f.x >= 0 && f.x <= n.x && f.y >= 0 && f.y <= n.y;
        s_qz[i] = valid ? accelerate(u_flow_z_in[index_z(f)], f - ivec2(0, 1), f - ivec2(1, 0), boundary_z(f)) : 0.0;
    }
#endif
    barrier();

    for (uint i = tid; i < W1 * W1; i += threads) {
        ivec2 c = g_origin - 1 + ivec2(i % W1, i / W1);
        float outgoing = max(-s_qx[atx(c)], 0.0) + max(s_qx[atx(c + ivec2(1, 0))], 0.0)
                       + max(-s_qy[aty(c)], 0.0) + max(s_qy[aty(c + ivec2(0, 1))], 0.0);
#if HEX
        outgoing += max(-s_qz[atz(c + ivec2(1, 0))], 0.0) + max(s_qz[atz(c + ivec2(0, 1))], 0.0);
#endif
        s_k[i] = outflow_scale(s_h[at2(c)], outgoing);
    }
    barrier();

    ivec2 c = g_origin + ivec2(gl_LocalInvocationID.xy);
    if (!inside(c)) return;
    int x = c.x, y = c.y;
    float q_left = flow_x(c), q_right = flow_x(ivec2(x + 1, y));
    float q_bottom = flow_y(c), q_top = flow_y(ivec2(x, y + 1));
    float net = q_left - q_right + q_bottom - q_top;
#if HEX
    float qz_in = flow_z(ivec2(x + 1, y)), qz_out = flow_z(ivec2(x, y + 1));
    net += qz_in - qz_out;
#endif
    imageStore(u_water_out, c, vec4(max(s_h[at2(c)] + u_dt / u_cell_area * net, 0.0)));

    bool last_x = x == n.x - 1, last_y = y == n.y - 1;
    store_x(c, q_left);
    if (last_x) store_x(ivec2(x + 1, y), q_right);
    store_y(c, q_bottom);
    if (last_y) store_y(ivec2(x, y + 1), q_top);
#if HEX
    store_z(c, flow_z(c));
    if (last_x) store_z(ivec2(x + 1, y), qz_in);
    if (last_y) store_z(ivec2(x, y + 1), qz_out);
    if (last_x && last_y) store_z(ivec2(x + 1, y + 1), 0.0);     // the unused corner face
#endif
}
