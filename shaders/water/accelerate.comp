#version 430
// WaterGrid._accelerate: the pressure (surface-height) difference accelerates the flow in every pipe.
//   q <- q * (1 - friction)^dt + dt * g * A / l * (eta_from - eta_to)
// Boundary faces are re-imposed here every step (outflow scaling may have shrunk them last step):
// wall 0, inflow/outflow a fixed rate, level = a pipe to an outside surface at the given height.
// Reads the stored (scaled) flows, writes the accelerated flows to the *_tmp buffers.
#include "common/grid.glsl"
#include "common/water.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(std430, binding = B_FLOW_X) restrict readonly buffer FlowXIn { float u_flow_x_in[]; };
layout(std430, binding = B_FLOW_Y) restrict readonly buffer FlowYIn { float u_flow_y_in[]; };
layout(std430, binding = B_FLOW_X_TMP) restrict writeonly buffer FlowXOut { float u_flow_x_out[]; };
layout(std430, binding = B_FLOW_Y_TMP) restrict writeonly buffer FlowYOut { float u_flow_y_out[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict readonly buffer FlowZIn { float u_flow_z_in[]; };
layout(std430, binding = B_FLOW_Z_TMP) restrict writeonly buffer FlowZOut { float u_flow_z_out[]; };
#endif

struct BoundaryFace { int kind; float value; };      // kinds as in hydro/boundary.py
layout(std430, binding = B_BOUNDARY) restrict readonly buffer Boundary { BoundaryFace u_boundary[]; };
#define BC_WALL 0
#define BC_INFLOW 1
#define BC_OUTFLOW 2
#define BC_LEVEL 3

uniform float u_dt;                 // substep, s
uniform float u_friction_factor;    // (1 - friction)^dt, computed on the CPU
uniform float u_g_over_l;           // gravity / pipe length
uniform float u_face_width;         // w: pipe area is h_face * w in depth mode
uniform float u_pipe_area;          // constant pipe area A (world units^2) when PIPE_AREA_DEPTH is 0

// Cross-section of the pipe between two columns.
float pipe_area(float eta_a, float eta_b, float z_a, float z_b) {
#if PIPE_AREA_DEPTH
    // Depth of water above the higher bed, on the side of the higher surface: a dry side or a
    // step up in the bed narrows the pipe, which keeps a lake at rest still (Bates et al. 2010).
    return max(max(eta_a, eta_b) - max(z_a, z_b), 0.0) * u_face_width;
#else
    return u_pipe_area;
#endif
}

// The accelerated flow of face from -> to (either may lie outside the grid; b is its boundary index).
float accelerate(float q, ivec2 from, ivec2 to, int b) {
    bool from_in = inside(from), to_in = inside(to);
    if (from_in && to_in) {
        float z_a = terrain_at(from), z_b = terrain_at(to);
        float eta_a = z_a + imageLoad(u_water, from).r, eta_b = z_b + imageLoad(u_water, to).r;
        return q * u_friction_factor + u_dt * u_g_over_l * pipe_area(eta_a, eta_b, z_a, z_b) * (eta_a - eta_b);
    }
    if (b < 0 || !(from_in || to_in)) return 0.0;   // unused corner faces of the hex lattice
    float sign_in = to_in ? 1.0 : -1.0;             // +: positive flow enters the grid
    BoundaryFace face = u_boundary[b];
    if (face.kind == BC_INFLOW) return sign_in * face.value;
    if (face.kind == BC_OUTFLOW) return -sign_in * face.value;
    if (face.kind == BC_LEVEL) {
        // The outside column stands on the same bed as the edge cell, its surface at face.value.
        ivec2 c = to_in ? to : from;
        float z = terrain_at(c), eta = z + imageLoad(u_water, c).r;
        return q * u_friction_factor + u_dt * u_g_over_l * pipe_area(face.value, eta, z, z) * sign_in * (face.value - eta);
    }
    return 0.0;                                     // wall
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
