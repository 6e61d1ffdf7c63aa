#version 430
// CellWise._accelerate, the first pass of the cell-wise kernel (hydro/water_kernels.py): each cell
// accelerates all its faces (common/model.glsl's interior_flow), stores the ones it owns (its left and
// bottom faces; hex also its z_out) and records its outflow scale for cells_move.comp. A face between
// two cells is worked out by both, with the same arithmetic, hence to the same bits. Boundary faces
// were accelerated beforehand (cells_boundary.comp) and are taken as stored. An invocation walks
// CELL_ROWS cells up a column, carrying the face between two of them.
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/model.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(binding = B_OUTFLOW_SCALE, r32f) uniform restrict writeonly image2D u_scale_out;     // K per cell
layout(std430, binding = B_FLOW_X_TMP) restrict writeonly buffer FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict writeonly buffer FlowYOut { float u_flow_y_out[]; };
// The input flows: storage buffers, or (BUFFER_VIEWS) r32f buffer-texture views of the same buffers,
// which CPU rasterisers load faster (hydro/_native.py BufferViews).
#if BUFFER_VIEWS
layout(binding = B_FLOW_X_VIEW, r32f) uniform restrict readonly imageBuffer u_flow_x_view;
layout(binding = B_FLOW_Y_VIEW, r32f) uniform restrict readonly imageBuffer u_flow_y_view;
#define FLOW_X_IN(i) imageLoad(u_flow_x_view, i).r
#define FLOW_Y_IN(i) imageLoad(u_flow_y_view, i).r
#if HEX
layout(binding = B_FLOW_Z_VIEW, r32f) uniform restrict readonly imageBuffer u_flow_z_view;
#define FLOW_Z_IN(i) imageLoad(u_flow_z_view, i).r
#endif
#else
layout(std430, binding = B_FLOW_X) restrict readonly buffer FlowXIn { float u_flow_x_in[]; };
layout(std430, binding = B_FLOW_Y) restrict readonly buffer FlowYIn { float u_flow_y_in[]; };
#define FLOW_X_IN(i) u_flow_x_in[i]
#define FLOW_Y_IN(i) u_flow_y_in[i]
#if HEX
layout(std430, binding = B_FLOW_Z) restrict readonly buffer FlowZIn { float u_flow_z_in[]; };
#define FLOW_Z_IN(i) u_flow_z_in[i]
#endif
#endif
#if HEX
layout(std430, binding = B_FLOW_Z_TMP) restrict writeonly buffer FlowZOut { float u_flow_z_out[]; };
#endif

float depth_at(ivec2 c) { return imageLoad(u_water, c).r; }

// A face's accelerated flow, or its stored value where it is a boundary face. Both operands are worked
// out whatever the face: a CPU rasteriser pays more for a branch around a load than for the load.
float cell_face(float q, bool boundary, float z_a, float h_a, float z_b, float h_b) {
    float accelerated = interior_flow(q, z_a, h_a, z_b, h_b);
    return boundary ? q : accelerated;
}

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.x, gl_GlobalInvocationID.y * CELL_ROWS);
    if (!inside(c)) return;
    ivec2 n = u_size, dx = ivec2(1, 0), dy = ivec2(0, 1);
    int stop = min(c.y + CELL_ROWS, n.y);
    float z = terrain_at(c), h = depth_at(c);          // this cell's bed and depth, carried up the column
    float bottom = cell_face(FLOW_Y_IN(index_y(c)), c.y == 0, terrain_at(c - dy), depth_at(c - dy), z, h);
    for (; c.y < stop; ++c.y) {
        float z_up = terrain_at(c + dy), h_up = depth_at(c + dy);
        Faces f;
        f.left = cell_face(FLOW_X_IN(index_x(c)), c.x == 0, terrain_at(c - dx), depth_at(c - dx), z, h);
        f.right = cell_face(FLOW_X_IN(index_x(c + dx)), c.x == n.x - 1, z, h, terrain_at(c + dx), depth_at(c + dx));
        f.bottom = bottom;
        f.top = cell_face(FLOW_Y_IN(index_y(c + dy)), c.y == n.y - 1, z, h, z_up, h_up);
        u_flow_x_out[index_x(c)] = f.left;
        u_flow_y_out[index_y(c)] = f.bottom;
#if HEX
        ivec2 in_from = c + dx - dy, out_to = c - dx + dy;
        f.z_in = cell_face(FLOW_Z_IN(index_z(c + dx)), c.x == n.x - 1 || c.y == 0,
                           terrain_at(in_from), depth_at(in_from), z, h);
        f.z_out = cell_face(FLOW_Z_IN(index_z(c + dy)), c.x == 0 || c.y == n.y - 1,
                            z, h, terrain_at(out_to), depth_at(out_to));
        u_flow_z_out[index_z(c + dy)] = f.z_out;
#endif
        imageStore(u_scale_out, c, vec4(outflow_scale(h, outgoing(f))));
        bottom = f.top;
        z = z_up;
        h = h_up;
    }
}
