#version 430
// CellWise._boundary: the boundary faces of the cell-wise kernel, one invocation per face of a list
// (its face as hydro/boundary.py's Layout lists it, and its table entry): every face at a call's start,
// which also zeroes the walls, and between substeps the faces that are not walls (a wall's faces stay 0:
// the cell passes store them as 0 and book nothing through them). Between two substeps one dispatch does
// both jobs: BOOK for the substep that ends, ACCELERATE for the next (with SLEEP, ACCELERATE also plans
// the next substep's tiles: common/sleep_plan.glsl). With SAMPLES, a call's first pass also samples the
// points queued since the last call (common/sample.glsl), past every other invocation: it writes only
// the accelerated flows and a wall's 0, which a wall holds already where samples are folded here.
// BOOK, after the cell passes: scale each face by its inside cell's outflow scale (upwind_scaled, K = 1
//   outside), book what crossed it and store it in the flows.
// ACCELERATE, before them: re-impose or accelerate each face against the outside (the boundary face
//   rule) into the accelerated flows *_TMP, where cells_accelerate.comp takes it; the flows keep the
//   face as the last substep left it, which the faces beside it read.
#define NO_CYCLE_RECORDS 1                  // it reads no cycle record
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/model.glsl"
#include "common/ledger.glsl"
#if SLEEP && ACCELERATE
#include "common/sleep_plan.glsl"
#endif

struct FacePlace { int array, i, j, entry; };  // flow_x, flow_y, flow_z; column; row; its table entry
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
uniform int u_count;                        // faces in the list at B_BOUNDARY_FACES
#if SAMPLES
#define FLOWS_DECLARED 1
#include "common/velocity.glsl"
#include "common/sample.glsl"
uniform int u_sample_first;                 // the first invocation that samples
#endif

void main() {
    int k = int(gl_GlobalInvocationID.y) * LOCAL_SIZE + int(gl_GlobalInvocationID.x);
#if SAMPLES
    if (k >= u_sample_first) {
        if (k < u_sample_first + u_sample_count) sample_point(k - u_sample_first);
        return;
    }
#endif
#if SLEEP && ACCELERATE
    // the invocations past the faces (and hex's two corners) plan the coming substep's tiles
    if (k >= u_count + 2 * HEX) {
        plan_tile(k - u_count - 2 * HEX);
        return;
    }
#endif
    if (k >= u_count) {
#if HEX
        // two more invocations keep the unused corner faces of flow_z at 0, as the other kernels do
        if (k < u_count + 2) {
            int corner = index_z(k == u_count ? ivec2(0) : u_size);
            u_flow_z[corner] = 0.0;
            u_flow_z_tmp[corner] = 0.0;
        }
#endif
        return;
    }
    FacePlace p = u_places[k];
    int b = p.entry;
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
    float scale = imageLoad(u_scale, c).r;
    q = enters ? upwind_scaled(q, 1.0, scale) : upwind_scaled(q, scale, 1.0);
    book(b, u_dt, entering(q, enters));
#else
    float q = p.array == 0 ? u_flow_x[i] : p.array == 1 ? u_flow_y[i] : 0.0;
#if HEX
    if (p.array == 2) q = u_flow_z[i];
#endif
#endif
#if BOOK
    if (p.array == 0) u_flow_x[i] = q;
    if (p.array == 1) u_flow_y[i] = q;
#if HEX
    if (p.array == 2) u_flow_z[i] = q;
#endif
#endif
#if ACCELERATE
    BoundaryFace face = u_boundary[b];
#if !BOOK
    // a call's first substep: a wall carries nothing, whatever its face held (a side opened before, the
    // flow setters), and the faces beside it see that
    if (face.kind == BC_WALL) {
        if (p.array == 0) u_flow_x[i] = 0.0;
        if (p.array == 1) u_flow_y[i] = 0.0;
#if HEX
        if (p.array == 2) u_flow_z[i] = 0.0;
#endif
    }
#endif
    float z = terrain_at(c);
    q = boundary_face_flow(q, face, enters, z, z + imageLoad(u_water, c).r);
    if (p.array == 0) u_flow_x_tmp[i] = q;
    if (p.array == 1) u_flow_y_tmp[i] = q;
#if HEX
    if (p.array == 2) u_flow_z_tmp[i] = q;
#endif
#endif
}
