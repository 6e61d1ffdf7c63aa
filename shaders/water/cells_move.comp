#version 430
// CellWise._move, the second pass of the cell-wise kernel: each cell scales each of its accelerated
// faces by the outflow scale of the face's upwind cell (common/model.glsl's upwind_scaled), stores the
// faces it owns and moves its own column by all of them (net_inflow, moved), then through the water
// cycle (CYCLE: cycle_cell). Boundary faces are
// stored and booked by cells_boundary.comp after this pass.
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/model.glsl"
#include "common/sleep.glsl"

layout(binding = B_WATER, r32f) uniform restrict image2D u_water;                  // own texel only
layout(binding = B_OUTFLOW_SCALE, r32f) uniform restrict readonly image2D u_scale;          // K per cell
// the flows of the substep before, overwritten (with SLEEP read first, to see what changed)
#if SLEEP
#define FLOWS_OUT restrict buffer
#else
#define FLOWS_OUT restrict writeonly buffer
#endif
layout(std430, binding = B_FLOW_X) FLOWS_OUT FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y) FLOWS_OUT FlowYOut { float u_flow_y_out[]; };
// The input flows: the accelerated flows of cells_accelerate.comp.
#define FLOWS_IN_X B_FLOW_X_TMP
#define FLOWS_IN_Y B_FLOW_Y_TMP
#define FLOWS_IN_Z B_FLOW_Z_TMP
#define FLOWS_IN_X_VIEW B_FLOW_X_TMP_VIEW
#define FLOWS_IN_Y_VIEW B_FLOW_Y_TMP_VIEW
#define FLOWS_IN_Z_VIEW B_FLOW_Z_TMP_VIEW
#include "common/flows_in.glsl"
#if HEX
layout(std430, binding = B_FLOW_Z) FLOWS_OUT FlowZOut { float u_flow_z_out[]; };
#endif

// The outflow scale of cell c; 1 outside the grid (what enters through a boundary face is never
// scaled). The load is unconditional (0 outside the image): a CPU rasteriser pays for a branch.
float scale_at(ivec2 c) {
    float k = imageLoad(u_scale, c).r;
    return inside(c) ? k : 1.0;
}

void main() {
    ivec2 c = column_start();
    if (!inside(c)) return;
#if SLEEP
    ivec2 first = c;
    bool change = false;        // whether a cell of the column, or a face it stores, changed
#endif
    ivec2 dx = ivec2(1, 0), dy = ivec2(0, 1);
    int stop = min(c.y + CELL_ROWS, u_size.y);
    float rate = move_rate();
    float k = scale_at(c);
    float bottom = upwind_scaled(FLOW_Y_IN(index_y(c)), scale_at(c - dy), k);
    for (; c.y < stop; ++c.y) {
        float k_above = scale_at(c + dy);
        Faces f;
        f.left = upwind_scaled(FLOW_X_IN(index_x(c)), scale_at(c - dx), k);
        f.right = upwind_scaled(FLOW_X_IN(index_x(c + dx)), k, scale_at(c + dx));
        f.bottom = bottom;
        f.top = upwind_scaled(FLOW_Y_IN(index_y(c + dy)), k, k_above);
#if HEX
        f.z_in = upwind_scaled(FLOW_Z_IN(index_z(c + dx)), scale_at(c + dx - dy), k);
        f.z_out = upwind_scaled(FLOW_Z_IN(index_z(c + dy)), k, scale_at(c - dx + dy));
#endif
#if SLEEP
        change = change || changed(u_flow_x_out[index_x(c)], f.left) || changed(u_flow_y_out[index_y(c)], f.bottom);
#if HEX
        change = change || changed(u_flow_z_out[index_z(c + dy)], f.z_out);
#endif
#endif
        u_flow_x_out[index_x(c)] = f.left;
        u_flow_y_out[index_y(c)] = f.bottom;
#if HEX
        u_flow_z_out[index_z(c + dy)] = f.z_out;
#endif
        float before = imageLoad(u_water, c).r, net = net_inflow(f);
        float h = moved(before, rate, net);
#if CYCLE && SLEEP
        vec4 record = cycle_record(c), kept = record;   // a change of what the cell is owed is a change too
        h = cycle_step(h, moved_error(before, rate, net, h), cycle_rates(c), record);
        store_record(c, record);
        change = change || changed(kept, record);
#elif CYCLE
        h = cycle_cell(c, h, moved_error(before, rate, net, h), true);
#endif
#if SLEEP
        change = change || changed(before, h);
#endif
        imageStore(u_water, c, vec4(h));
        bottom = f.top;
        k = k_above;
    }
#if SLEEP
    if (change) sleep_mark(first);
#endif
}
