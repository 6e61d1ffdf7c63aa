#version 430
// Fused._settle: the move the fused kernel leaves pending after its last substep (fused.comp), from its
// last scratch depth into the grid's water texture: each column changes by what its faces carried in
// and out (common/model.glsl's net_inflow and moved).
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/model.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_OUT_IMAGE, r32f) uniform restrict writeonly image2D u_water_out;
layout(std430, binding = B_FLOW_X) restrict readonly buffer FlowX { float u_flow_x[]; };
layout(std430, binding = B_FLOW_Y) restrict readonly buffer FlowY { float u_flow_y[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict readonly buffer FlowZ { float u_flow_z[]; };
#endif

// The stored faces of cell c.
Faces faces_of(ivec2 c) {
    ivec2 dx = ivec2(1, 0), dy = ivec2(0, 1);
    Faces f;
    f.left = u_flow_x[index_x(c)];
    f.right = u_flow_x[index_x(c + dx)];
    f.bottom = u_flow_y[index_y(c)];
    f.top = u_flow_y[index_y(c + dy)];
#if HEX
    f.z_in = u_flow_z[index_z(c + dx)];
    f.z_out = u_flow_z[index_z(c + dy)];
#endif
    return f;
}

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    imageStore(u_water_out, c, vec4(moved(imageLoad(u_water_in, c).r, move_rate(), net_inflow(faces_of(c)))));
}
