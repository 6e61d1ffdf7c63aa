#version 430
// WaterGrid._move: each column changes by what its faces carried in and out over the substep,
//   h <- h + dt / S * (sum in - sum out).
// Flux form: what leaves one cell enters its neighbour, so volume is conserved to rounding.
// Outflow scaling already kept h >= 0; the clamp only removes a last-bit rounding residue.
// SEPARATE_OUTPUT 0: in place (three-pass step); 1: from the fused step's last scratch depth into
// the grid's water texture (it settles the move the fused step leaves pending).
#include "common/grid.glsl"
#include "common/water.glsl"

#if SEPARATE_OUTPUT
layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_OUT_IMAGE, r32f) uniform restrict writeonly image2D u_water_out;
#else
layout(binding = B_WATER, r32f) uniform restrict image2D u_water;        // own texel only
#define u_water_in u_water
#define u_water_out u_water
#endif
layout(std430, binding = B_FLOW_X) restrict readonly buffer FlowX { float u_flow_x[]; };
layout(std430, binding = B_FLOW_Y) restrict readonly buffer FlowY { float u_flow_y[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict readonly buffer FlowZ { float u_flow_z[]; };
#endif

uniform float u_dt;
uniform float u_cell_area;

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    int x = c.x, y = c.y;
    float net = u_flow_x[index_x(c)] - u_flow_x[index_x(ivec2(x + 1, y))]
              + u_flow_y[index_y(c)] - u_flow_y[index_y(ivec2(x, y + 1))];
#if HEX
    net += u_flow_z[index_z(ivec2(x + 1, y))] - u_flow_z[index_z(ivec2(x, y + 1))];
#endif
    float h = imageLoad(u_water_in, c).r;
    imageStore(u_water_out, c, vec4(moved(h, u_dt, u_cell_area, net)));
}
