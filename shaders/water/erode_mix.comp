#version 430
// ErosionState, pass 1 of 3 after a water substep: each cell's sediment concentration (common/erosion.glsl's
// concentration) from its sediment, the water the substep left and what its faces sent out.
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/model.glsl"
#include "common/erosion.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(binding = B_SEDIMENT, r32f) uniform restrict readonly image2D u_sediment;
layout(binding = B_OUT_IMAGE, r32f) uniform restrict writeonly image2D u_concentration_out;
#include "common/flows_stored.glsl"

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float h = imageLoad(u_water, c).r, s = imageLoad(u_sediment, c).r;
    imageStore(u_concentration_out, c, vec4(concentration(s, h, outgoing(stored_faces(c)))));
}
