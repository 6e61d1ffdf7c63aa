#version 430
// WaterGrid._scale_outflow: no cell may send out more water than it holds (Mei et al. 2007).
// For each cell K = min(1, h*S / (dt * sum of outgoing flows)); each face is outgoing for at most
// one cell (the upwind one), so it is scaled by that cell's K alone: one writer per face, no races.
// Inflow faces point into the grid and are never scaled. Boundary faces add what crossed them this
// substep to their own fp64 ledger slot (one writer per slot).
#include "common/grid.glsl"
#include "common/water.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(std430, binding = B_FLOW_X_TMP) restrict readonly buffer FlowXIn { float u_flow_x_in[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict readonly buffer FlowYIn { float u_flow_y_in[]; };
layout(std430, binding = B_FLOW_X) restrict writeonly buffer FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y) restrict writeonly buffer FlowYOut { float u_flow_y_out[]; };
#if HEX
layout(std430, binding = B_FLOW_Z_TMP) restrict readonly buffer FlowZIn { float u_flow_z_in[]; };
layout(std430, binding = B_FLOW_Z) restrict writeonly buffer FlowZOut { float u_flow_z_out[]; };
#endif
layout(std430, binding = B_LEDGER) restrict buffer Ledger { double u_ledger[]; };   // volume into the grid

#include "common/outflow.glsl"

float outgoing(ivec2 c) {
    int x = c.x, y = c.y;
    float total = max(-u_flow_x_in[index_x(c)], 0.0) + max(u_flow_x_in[index_x(ivec2(x + 1, y))], 0.0)
                + max(-u_flow_y_in[index_y(c)], 0.0) + max(u_flow_y_in[index_y(ivec2(x, y + 1))], 0.0);
#if HEX
    total += max(-u_flow_z_in[index_z(ivec2(x + 1, y))], 0.0) + max(u_flow_z_in[index_z(ivec2(x, y + 1))], 0.0);
#endif
    return total;
}

float outflow_scale(ivec2 c) { return outflow_scale(imageLoad(u_water, c).r, outgoing(c)); }

float scaled(float q, ivec2 from, ivec2 to, int b) {
    ivec2 upwind = q > 0.0 ? from : to;
    if (q != 0.0 && inside(upwind)) q *= outflow_scale(upwind);
    if (b >= 0 && (inside(from) || inside(to)))
        u_ledger[b] += double(u_dt) * double(inside(to) ? q : -q);
    return q;
}

void main() {
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    if (f.x <= u_size.x && f.y < u_size.y)
        u_flow_x_out[index_x(f)] = scaled(u_flow_x_in[index_x(f)], f - ivec2(1, 0), f, boundary_x(f));
    if (f.x < u_size.x && f.y <= u_size.y)
        u_flow_y_out[index_y(f)] = scaled(u_flow_y_in[index_y(f)], f - ivec2(0, 1), f, boundary_y(f));
#if HEX
    if (f.x <= u_size.x && f.y <= u_size.y)
        u_flow_z_out[index_z(f)] = scaled(u_flow_z_in[index_z(f)], f - ivec2(0, 1), f - ivec2(1, 0), boundary_z(f));
#endif
}
