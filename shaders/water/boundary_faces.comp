#version 430
// WaterGrid._boundary_faces: the boundary faces of the cell-wise step (passes=2), one invocation per
// boundary table entry (its face listed in hydro/boundary.py's Layout). Between two substeps one
// dispatch does both jobs, BOOK for the substep that ends and ACCELERATE for the next.
// BOOK, after the cell passes: scale each face by its inside cell's outflow scale when that cell is
//   upwind (as scale_outflow.comp), book what crossed it this substep and store it in the flows.
// ACCELERATE, before them: re-impose or accelerate each face against the outside (common/pipes.glsl,
//   as accelerate.comp) and store it in the flows (accelerate_cells.comp takes boundary faces as
//   stored) and in the accelerated flows *_tmp (the last column's and row's outer faces have no
//   other writer).
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/pipes.glsl"

struct FacePlace { int array, i, j; };     // flow_x, flow_y, flow_z; column; row
layout(std430, binding = B_BOUNDARY_FACES) restrict readonly buffer Places { FacePlace u_places[]; };
layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(binding = B_OUTFLOW_SCALE, r32f) uniform restrict readonly image2D u_scale;       // K per cell
layout(std430, binding = B_FLOW_X) restrict buffer FlowX { float u_flow_x[]; };
layout(std430, binding = B_FLOW_Y) restrict buffer FlowY { float u_flow_y[]; };
layout(std430, binding = B_FLOW_X_TMP) restrict buffer FlowXTmp { float u_flow_x_tmp[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict buffer FlowYTmp { float u_flow_y_tmp[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict buffer FlowZ { float u_flow_z[]; };
layout(std430, binding = B_FLOW_Z_TMP) restrict buffer FlowZTmp { float u_flow_z_tmp[]; };
#endif
layout(std430, binding = B_LEDGER) restrict buffer Ledger { double u_ledger[]; };   // volume into the grid
uniform int u_count;                        // entries in the boundary table

void main() {
    int b = int(gl_GlobalInvocationID.y) * LOCAL_SIZE + int(gl_GlobalInvocationID.x);
    if (b >= u_count) {
#if HEX
        // two more invocations keep the unused corner faces of flow_z at 0, as the other paths do
        if (b < u_count + 2) {
            int corner = index_z(b == u_count ? ivec2(0) : u_size);
            u_flow_z[corner] = 0.0;
            u_flow_z_tmp[corner] = 0.0;
        }
#endif
        return;
    }
    FacePlace p = u_places[b];
    ivec2 f = ivec2(p.i, p.j);
    ivec2 from = p.array == 0 ? f - ivec2(1, 0) : f - ivec2(0, 1);
    ivec2 to = p.array == 2 ? f - ivec2(1, 0) : f;
    bool enters = inside(to);
    ivec2 c = enters ? to : from;                       // the cell inside the grid
    int i = p.array == 1 ? index_y(f) : index_x(f);     // index_z(f) == index_x(f)
#if BOOK
    float q = p.array == 0 ? u_flow_x_tmp[i] : p.array == 1 ? u_flow_y_tmp[i] : 0.0;
#if HEX
    if (p.array == 2) q = u_flow_z_tmp[i];
#endif
    if (q > 0.0 != enters) q *= imageLoad(u_scale, c).r;     // the inside cell is upwind
    u_ledger[b] += double(u_dt) * double(enters ? q : -q);
#else
    float q = p.array == 0 ? u_flow_x[i] : p.array == 1 ? u_flow_y[i] : 0.0;
#if HEX
    if (p.array == 2) q = u_flow_z[i];
#endif
#endif
#if ACCELERATE
    q = boundary_flow(q, b, enters, terrain_at(c), imageLoad(u_water, c).r);
    if (p.array == 0) u_flow_x_tmp[i] = q;
    if (p.array == 1) u_flow_y_tmp[i] = q;
#if HEX
    if (p.array == 2) u_flow_z_tmp[i] = q;
#endif
#endif
    if (p.array == 0) u_flow_x[i] = q;
    if (p.array == 1) u_flow_y[i] = q;
#if HEX
    if (p.array == 2) u_flow_z[i] = q;
#endif
}
