#version 430
// WaterGrid._boundary_faces: the boundary faces of the cell-wise step (passes=2), one invocation per
// boundary table entry (its face listed in hydro/boundary.py's Layout).
// BOOK 0, before the cell passes: re-impose or accelerate each face (common/pipes.glsl, as
//   accelerate.comp), in place (accelerate_cells.comp takes boundary faces as stored) and into the
//   accelerated flows (*_tmp: the last column's and row's outer faces have no other writer).
// BOOK 1, after them: scale each face by its inside cell's outflow scale when that cell is upwind
//   (as scale_outflow.comp), store it in the flows and book what crossed it this substep.
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/pipes.glsl"

struct FacePlace { int array, i, j; };     // flow_x, flow_y, flow_z; column; row
layout(std430, binding = B_BOUNDARY_FACES) restrict readonly buffer Places { FacePlace u_places[]; };
#if BOOK
layout(binding = B_OUTFLOW_SCALE, r32f) uniform restrict readonly image2D u_scale;         // K per cell
layout(std430, binding = B_FLOW_X_TMP) restrict readonly buffer FlowXIn { float u_flow_x_in[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict readonly buffer FlowYIn { float u_flow_y_in[]; };
layout(std430, binding = B_FLOW_X) restrict writeonly buffer FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y) restrict writeonly buffer FlowYOut { float u_flow_y_out[]; };
#if HEX
layout(std430, binding = B_FLOW_Z_TMP) restrict readonly buffer FlowZIn { float u_flow_z_in[]; };
layout(std430, binding = B_FLOW_Z) restrict writeonly buffer FlowZOut { float u_flow_z_out[]; };
#endif
layout(std430, binding = B_LEDGER) restrict buffer Ledger { double u_ledger[]; };   // volume into the grid
#else
layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(std430, binding = B_FLOW_X) restrict buffer FlowXIn { float u_flow_x_in[]; };
layout(std430, binding = B_FLOW_Y) restrict buffer FlowYIn { float u_flow_y_in[]; };
layout(std430, binding = B_FLOW_X_TMP) restrict writeonly buffer FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict writeonly buffer FlowYOut { float u_flow_y_out[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict buffer FlowZIn { float u_flow_z_in[]; };
layout(std430, binding = B_FLOW_Z_TMP) restrict writeonly buffer FlowZOut { float u_flow_z_out[]; };
#endif
#endif
uniform int u_count;                        // entries in the boundary table

void main() {
    int b = int(gl_GlobalInvocationID.y) * LOCAL_SIZE + int(gl_GlobalInvocationID.x);
    if (b >= u_count) {
#if HEX
        // two more invocations keep the unused corner faces of flow_z at 0, as the other paths do
        if (b < u_count + 2) u_flow_z_out[index_z(b == u_count ? ivec2(0) : u_size)] = 0.0;
#endif
        return;
    }
    FacePlace p = u_places[b];
    ivec2 f = ivec2(p.i, p.j);
    ivec2 from = p.array == 0 ? f - ivec2(1, 0) : f - ivec2(0, 1);
    ivec2 to = p.array == 2 ? f - ivec2(1, 0) : f;
    bool enters = inside(to);
    ivec2 c = enters ? to : from;                       // the cell inside the grid
    float q = p.array == 0 ? u_flow_x_in[index_x(f)] : p.array == 1 ? u_flow_y_in[index_y(f)] : 0.0;
#if HEX
    if (p.array == 2) q = u_flow_z_in[index_z(f)];
#endif
#if BOOK
    if (q > 0.0 != enters) q *= imageLoad(u_scale, c).r;     // the inside cell is upwind
    u_ledger[b] += double(u_dt) * double(enters ? q : -q);
#else
    q = boundary_flow(q, b, enters, terrain_at(c), imageLoad(u_water, c).r);
    // in place too: the cell passes read boundary faces as stored
    if (p.array == 0) u_flow_x_in[index_x(f)] = q;
    if (p.array == 1) u_flow_y_in[index_y(f)] = q;
#if HEX
    if (p.array == 2) u_flow_z_in[index_z(f)] = q;
#endif
#endif
    if (p.array == 0) u_flow_x_out[index_x(f)] = q;
    if (p.array == 1) u_flow_y_out[index_y(f)] = q;
#if HEX
    if (p.array == 2) u_flow_z_out[index_z(f)] = q;
#endif
}
