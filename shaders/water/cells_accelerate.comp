#version 430
// CellWise._accelerate, the first pass of the cell-wise kernel (hydro/water_kernels.py): each cell
// accelerates all its faces (common/model.glsl's interior_flow, with inertia inertial_flow), stores the
// ones it owns (its left and bottom faces; hex also its z_out) and records its outflow scale for
// cells_move.comp. A face between two cells is worked out by both, with the same arithmetic, hence to
// the same bits. Boundary faces were accelerated beforehand into the accelerated flows
// (cells_boundary.comp) and are taken from there. An invocation walks CELL_ROWS cells up a column,
// carrying the face between two of them.
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/model.glsl"
#include "common/sleep.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(binding = B_OUTFLOW_SCALE, r32f) uniform restrict writeonly image2D u_scale_out;     // K per cell
layout(std430, binding = B_FLOW_X_TMP) restrict buffer FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict buffer FlowYOut { float u_flow_y_out[]; };
// The input flows: the flows of the substep before.
#include "common/flows_stored.glsl"
#if HEX
layout(std430, binding = B_FLOW_Z_TMP) restrict buffer FlowZOut { float u_flow_z_out[]; };
#endif

float depth_at(ivec2 c) { return imageLoad(u_water, c).r; }

#if INERTIA
#include "common/cells_stencil.glsl"
#endif

// The accelerated flow cells_boundary.comp left at boundary face f of axis k: through the accelerated
// flows' views where the kernel has them (BUFFER_VIEWS: CPU rasterisers, which load a storage buffer
// lane by lane). Every cell loads its four faces' (a branch costs a CPU rasteriser its whole body);
// where a face is not a boundary face the value is not used, and where it is, no other invocation
// writes it, and this one stores it only after this load, as what the load gave.
#if BUFFER_VIEWS && !WALLED
// x, y (hex and z) at consecutive image units (common/bindings.glsl)
layout(binding = B_FLOW_X_TMP_VIEW, r32f) uniform restrict readonly imageBuffer u_accelerated[2 + HEX];
#define ACCELERATED(k, buffer, i) imageLoad(u_accelerated[k], i).r
#else
#define ACCELERATED(k, buffer, i) buffer[i]
#endif
float boundary_accelerated(int k, ivec2 f) {
#if HEX
    if (k == 2) return ACCELERATED(2, u_flow_z_out, index_z(f));
#endif
    return k == 0 ? ACCELERATED(0, u_flow_x_out, index_x(f)) : ACCELERATED(1, u_flow_y_out, index_y(f));
}

// A face's accelerated flow (axis k, face f, flow q): an interior one's, or where it is a boundary face
// what cells_boundary.comp worked out (WALLED, a grid walled all round: 0). Both operands are worked out
// whatever the face: a CPU rasteriser pays more for a branch around a load than for the load.
float cell_face(float q, bool boundary, float z_a, float h_a, float z_b, float h_b, int k, ivec2 f) {
#if WALLED
    float edge = 0.0;               // every boundary face a wall: nothing to read
#else
    float edge = boundary_accelerated(k, f);
#endif
#if INERTIA
    return boundary ? edge : inertial_face(k, f);
#else
    float accelerated = interior_flow(q, z_a, h_a, z_b, h_b);
    return boundary ? edge : accelerated;
#endif
}

void main() {
    ivec2 c = column_start();
    if (!inside(c)) return;
    ivec2 n = u_size, dx = ivec2(1, 0), dy = ivec2(0, 1);
    int stop = min(c.y + CELL_ROWS, n.y);
    float z = terrain_at(c), h = depth_at(c);          // this cell's bed and depth, carried up the column
    float bottom = cell_face(FLOW_Y_IN(index_y(c)), c.y == 0, terrain_at(c - dy), depth_at(c - dy), z, h, 1, c);
    for (; c.y < stop; ++c.y) {
        float z_up = terrain_at(c + dy), h_up = depth_at(c + dy);
        Faces f;
        f.left = cell_face(FLOW_X_IN(index_x(c)), c.x == 0, terrain_at(c - dx), depth_at(c - dx), z, h, 0, c);
        f.right = cell_face(FLOW_X_IN(index_x(c + dx)), c.x == n.x - 1, z, h, terrain_at(c + dx), depth_at(c + dx),
                            0, c + dx);
        f.bottom = bottom;
        f.top = cell_face(FLOW_Y_IN(index_y(c + dy)), c.y == n.y - 1, z, h, z_up, h_up, 1, c + dy);
        u_flow_x_out[index_x(c)] = f.left;
        u_flow_y_out[index_y(c)] = f.bottom;
#if HEX
        ivec2 in_from = c + dx - dy, out_to = c - dx + dy;
        f.z_in = cell_face(FLOW_Z_IN(index_z(c + dx)), c.x == n.x - 1 || c.y == 0,
                           terrain_at(in_from), depth_at(in_from), z, h, 2, c + dx);
        f.z_out = cell_face(FLOW_Z_IN(index_z(c + dy)), c.x == 0 || c.y == n.y - 1,
                            z, h, terrain_at(out_to), depth_at(out_to), 2, c + dy);
        u_flow_z_out[index_z(c + dy)] = f.z_out;
#endif
        imageStore(u_scale_out, c, vec4(outflow_scale(h, outgoing(f))));
        bottom = f.top;
        z = z_up;
        h = h_up;
    }
}
