#version 430
// WaterGrid._accelerate: the pressure (surface-height) difference accelerates the flow in every pipe,
//   q <- q * (1 - friction)^dt + dt * g * A / l * (eta_from - eta_to).
// Boundary faces are re-imposed here every step (outflow scaling may have shrunk them last step):
// wall 0, inflow/outflow a fixed rate, level = a pipe to an outside surface at the given height.
// Reads the stored (scaled) flows, writes the accelerated flows to the *_tmp buffers.
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/pipes.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(std430, binding = B_FLOW_X) restrict readonly buffer FlowXIn { float u_flow_x_in[]; };
layout(std430, binding = B_FLOW_Y) restrict readonly buffer FlowYIn { float u_flow_y_in[]; };
layout(std430, binding = B_FLOW_X_TMP) restrict writeonly buffer FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict writeonly buffer FlowYOut { float u_flow_y_out[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict readonly buffer FlowZIn { float u_flow_z_in[]; };
layout(std430, binding = B_FLOW_Z_TMP) restrict writeonly buffer FlowZOut { float u_flow_z_out[]; };
#endif

// The accelerated flow of face from -> to (either may lie outside the grid; b is its boundary index).
float accelerate(float q, ivec2 from, ivec2 to, int b) {
    bool from_in = inside(from), to_in = inside(to);
    float z_a = 0.0, h_a = 0.0, z_b = 0.0, h_b = 0.0;
    if (from_in) { z_a = terrain_at(from); h_a = imageLoad(u_water, from).r; }
    if (to_in) { z_b = terrain_at(to); h_b = imageLoad(u_water, to).r; }
    return face_flow(q, from_in, to_in, b, z_a, h_a, z_b, h_b);
}

void main() {
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    if (f.x <= u_size.x && f.y < u_size.y)
        u_flow_x_out[index_x(f)] = accelerate(u_flow_x_in[index_x(f)], f - ivec2(1, 0), f, boundary_x(f));
    if (f.x < u_size.x && f.y <= u_size.y)
        u_flow_y_out[index_y(f)] = accelerate(u_flow_y_in[index_y(f)], f - ivec2(0, 1), f, boundary_y(f));
#if HEX
    if (f.x <= u_size.x && f.y <= u_size.y)
        u_flow_z_out[index_z(f)] = accelerate(u_flow_z_in[index_z(f)], f - ivec2(0, 1), f - ivec2(1, 0), boundary_z(f));
#endif
}
