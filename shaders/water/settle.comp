#version 430
// Fused._settle: the move the fused kernel leaves pending after its last substep (fused.comp), from its
// last scratch depth into the grid's water texture: each column changes by what its faces carried in
// and out (common/model.glsl's net_inflow and moved), then the water cycle (CYCLE).
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/model.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_OUT_IMAGE, r32f) uniform restrict writeonly image2D u_water_out;
#include "common/flows_stored.glsl"

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float before = imageLoad(u_water_in, c).r, rate = move_rate(), net = net_inflow(stored_faces(c));
    float h = moved(before, rate, net);
#if CYCLE
    h = cycle_cell(c, h, moved_error(before, rate, net, h), true);
#endif
    imageStore(u_water_out, c, vec4(h));
}
