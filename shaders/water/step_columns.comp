#version 430
// WaterGrid._step_columns: a whole substep (move, accelerate, scale outflow) in one dispatch, as
// step_fused.comp, swept up columns on the packed state (water/pack.comp) instead of tiled.
//
// A workgroup is a row of COLUMN_WIDTH invocations; each owns one column x and walks up a strip of
// COLUMN_ROWS rows, keeping the rows below in registers. What a column needs from its neighbours
// (x - 1: depth and bed, outflow scale; x + 1: input and accelerated x (hex: z) flows) goes through
// shared memory, one barrier per row: the stages are pipelined over rows, so at row j a column
//   takes texel (x, j) (16 B: depth before the pending move, flow_x, flow_y, bed or hex flow_z),
//   hands its neighbours what they need and waits at the barrier once,
//   finishes the depth of cell (x, j-1) after the pending move (move.comp),
//   accelerates the faces of row j-1 (left, bottom; hex: z) (common/pipes.glsl),
//   works out the outflow scale K of cell (x, j-2) (common/outflow.glsl),
//   scales the faces of row j-3 by their upwind K and stores texel (x, j-3).
// Every stage is used by the next no sooner than one barrier later, so two copies of the shared
// arrays (by row parity) keep a neighbour's next write from overtaking a read. The texel of row j
// is loaded at row j - 1, so its latency overlaps a row of arithmetic and the barrier.
// The two columns at each end of the workgroup are halo (their neighbours are missing; the next
// workgroup owns them) and each strip walks five rows more than it owns (two below it, and the three
// rows the stores lag behind the loads), so a workgroup runs W / (W - 4) * (R + 5) / R invocation-rows per cell it owns
// (64 x 64: 1.15), against 1.56 for the 16x16 tile.
// The arithmetic is that of move.comp, accelerate.comp and scale_outflow.comp, in the same order, so
// the paths agree to the last bit; the owner of a boundary face books it in the ledger, as there.
// Texels run to (nx, ny): column nx and row ny hold the outer faces only (depth and bed 0).
#include "common/cells.glsl"
#include "common/water.glsl"
#include "common/pipes.glsl"

#define W COLUMN_WIDTH
#define R COLUMN_ROWS
layout(local_size_x = W) in;

// SWAPPED exchanges the two units, so substeps ping-pong by alternating two programs, no rebinding.
#if SWAPPED
layout(binding = B_PACKED_OUT, rgba32f) uniform restrict readonly image2D u_state_in;
layout(binding = B_PACKED_IN, rgba32f) uniform restrict writeonly image2D u_state_out;
#else
layout(binding = B_PACKED_IN, rgba32f) uniform restrict readonly image2D u_state_in;
layout(binding = B_PACKED_OUT, rgba32f) uniform restrict writeonly image2D u_state_out;
#endif
layout(std430, binding = B_LEDGER) restrict buffer Ledger { double u_ledger[]; };   // volume into the grid

uniform bool u_pending;             // the input flows are not yet moved into the input depths

// Whether every cell this workgroup reads lies inside the grid (nearly every workgroup of a large
// grid): it then has no boundary face and no texel or cell outside, and skips those tests; the
// arithmetic is the same.
bool g_interior;

// Handed to the right neighbour at row j: (depth, bed) of cell (x, j-1), K of cell (x, j-3).
shared vec3 s_to_right[2][W];
// Handed to the left neighbour at row j: input flow_x (x, j), accelerated flow_x of row j-2;
// hex: the same of flow_z.
#if HEX
shared vec4 s_to_left[2][W];
#else
shared vec2 s_to_left[2][W];
#endif

// The accelerated flow of a face from cell `from` (bed z_a, depth h_a) to cell `to` (z_b, h_b), as
// step_fused.comp: interior pipe, boundary face (table entry b) or no face (0).
float accelerate(float q, ivec2 from, ivec2 to, float z_a, float h_a, float z_b, float h_b, int b) {
    if (g_interior) return interior_flow(q, z_a, h_a, z_b, h_b);
    bool from_in = inside(from), to_in = inside(to);
    if (from_in && to_in) return interior_flow(q, z_a, h_a, z_b, h_b);
    if (b < 0 || !(from_in || to_in)) return 0.0;
    return to_in ? boundary_flow(q, b, true, z_b, h_b) : boundary_flow(q, b, false, z_a, h_a);
}

// The scaled flow of a face (k_a, k_b: outflow scales of its two cells); its owner calls this, and
// books what crossed a boundary face in its ledger slot.
float scaled(float q, ivec2 from, ivec2 to, float k_a, float k_b, int b) {
    if (g_interior) return q * (q > 0.0 ? k_a : k_b);     // 0 * K keeps the zero and its sign, as below
    bool forward = q > 0.0;
    if (q != 0.0 && inside(forward ? from : to)) q *= forward ? k_a : k_b;
    if (b >= 0 && (inside(from) || inside(to)))
        u_ledger[b] += double(u_dt) * double(inside(to) ? q : -q);
    return q;
}

vec4 load_texel(int x, int y, bool column) {
    bool valid = g_interior || (column && y >= 0 && y <= u_size.y);
    return valid ? imageLoad(u_state_in, ivec2(x, y)) : vec4(0.0);
}

#if HEX
float load_bed(ivec2 c) { return (g_interior || inside(c)) ? terrain_at(c) : 0.0; }
#endif

void main() {
    ivec2 n = u_size;
    int lane = int(gl_LocalInvocationID.x);
    int x = int(gl_WorkGroupID.x) * (W - 4) - 2 + lane;
    int left = max(lane - 1, 0), right = min(lane + 1, W - 1);     // the end lanes are halo: any value
    int y0 = int(gl_WorkGroupID.y) * R;
    int last = min(y0 + R, n.y + 1) - 1;                           // the strip's last texel row
    bool owner = lane >= 2 && lane < W - 2 && x <= n.x;            // this column's texels are ours
    bool column = x >= 0 && x <= n.x;                              // this column has texels
    // cells read: columns x-1 of the first lane to x of the last, rows y0-4 to last+2
    int x_first = x - lane;
    g_interior = x_first >= 1 && x_first + W <= n.x && y0 >= 4 && last + 3 <= n.y - 1;

    // Carried up the column; the digit is how many rows below row j the value belongs to.
    vec4 t_1 = vec4(0.0);                                          // texel (x, j-1)
    float qx_in_r = 0.0;                                           // input flow_x (x+1, j-1)
    float h_2 = 0.0, z_2 = 0.0, h_3 = 0.0, z_3 = 0.0;              // depth after the pending move, bed
    float ax_2 = 0.0, ay_2 = 0.0, ax_3 = 0.0, ay_3 = 0.0;          // accelerated flows
    float k_3 = 0.0, k_4 = 0.0;                                    // outflow scales
#if HEX
    float qz_in_r = 0.0, az_2 = 0.0, az_3 = 0.0;
#endif

    // Each row's texel (hex: and bed) is loaded one row ahead, so the load overlaps a row's work.
    vec4 t_next = load_texel(x, y0 - 2, column);
#if HEX
    float bed_next = load_bed(ivec2(x, y0 - 3));
#endif
    for (int j = y0 - 2; j <= last + 3; j++) {
        vec4 t = t_next;
        t_next = load_texel(x, j + 1, column);
        ivec2 c1 = ivec2(x, j - 1);
#if HEX
        float bed = bed_next;
        bed_next = load_bed(ivec2(x, j));
#endif

        // cell (x, j-1) after the pending move, as move.comp
        float h_1 = 0.0, z_1 = 0.0;
        if (g_interior || inside(c1)) {
            h_1 = t_1.x;
            if (u_pending) {
                float net = t_1.y - qx_in_r + t_1.z - t.z;
#if HEX
                net += qz_in_r - t.w;
#endif
                h_1 = moved(h_1, u_dt, u_cell_area, net);
            }
#if HEX
            z_1 = bed;
#else
            z_1 = t_1.w;
#endif
        }

        int buf = j & 1;
        s_to_right[buf][lane] = vec3(h_1, z_1, k_3);
#if HEX
        s_to_left[buf][lane] = vec4(t.y, ax_2, t.w, az_2);
#else
        s_to_left[buf][lane] = vec2(t.y, ax_2);
#endif
        barrier();
        vec3 from_left = s_to_right[buf][left];      // cell (x-1, j-1): depth, bed; K of (x-1, j-3)
#if HEX
        vec4 from_right = s_to_left[buf][right];
        float ax_r = from_right.y, az_r = from_right.w;  // accelerated flow_x, flow_z (x+1, j-2)
#else
        vec2 from_right = s_to_left[buf][right];
        float ax_r = from_right.y;
#endif

        // faces of row j-1: flow_x from (x-1, j-1), flow_y from (x, j-2) (hex: flow_z (x, j-2) -> (x-1, j-1))
        ivec2 cl = ivec2(x - 1, j - 1), cb = ivec2(x, j - 2);
        float ax_1 = accelerate(t_1.y, cl, c1, from_left.y, from_left.x, z_1, h_1, boundary_x(c1));
        float ay_1 = accelerate(t_1.z, cb, c1, z_2, h_2, z_1, h_1, boundary_y(c1));
#if HEX
        float az_1 = accelerate(t_1.w, cb, cl, z_2, h_2, from_left.y, from_left.x, boundary_z(c1));
#endif

        // outflow scale of cell (x, j-2), in the order of scale_outflow.comp
        float outgoing = max(-ax_2, 0.0) + max(ax_r, 0.0) + max(-ay_2, 0.0) + max(ay_1, 0.0);
#if HEX
        outgoing += max(-az_r, 0.0) + max(az_1, 0.0);
#endif
        float k_2 = outflow_scale(h_2, outgoing);

        // row j-3: scale its faces by the upwind K and store the texel
        int y3 = j - 3;
        if (owner && y3 >= y0) {
            ivec2 c3 = ivec2(x, y3), l3 = ivec2(x - 1, y3), b3 = ivec2(x, y3 - 1);
            float k_l = from_left.z;                                   // K of (x-1, j-3)
            float qx = scaled(ax_3, l3, c3, k_l, k_3, boundary_x(c3));
            float qy = scaled(ay_3, b3, c3, k_4, k_3, boundary_y(c3));
#if HEX
            float w = scaled(az_3, b3, l3, k_4, k_l, boundary_z(c3));
#else
            float w = z_3;
#endif
            imageStore(u_state_out, c3, vec4(h_3, qx, qy, w));
        }

        t_1 = t;
        qx_in_r = from_right.x;
        h_3 = h_2; z_3 = z_2; h_2 = h_1; z_2 = z_1;
        ax_3 = ax_2; ay_3 = ay_2; ax_2 = ax_1; ay_2 = ay_1;
        k_4 = k_3; k_3 = k_2;
#if HEX
        qz_in_r = from_right.z;
        az_3 = az_2; az_2 = az_1;
#endif
    }
}
