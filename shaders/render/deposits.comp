#version 430
// Renderer deposits pass (Renderer.update_deposits): fresh sediment at each cell (render/deposits.glsl's
// fresh_deposits), for the silt tint of the terrain and water passes.
#include "common/grid.glsl"
#include "common/bindings.glsl"
#include "render/deposits.glsl"

layout(binding = B_TERRAIN, r32f) uniform restrict readonly image2D u_terrain_in;
layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_SEDIMENT, r32f) uniform restrict readonly image2D u_sediment_in;
layout(binding = B_DEPOSIT_REFERENCE, r32f) uniform restrict readonly image2D u_reference_in;
layout(binding = B_OUT_IMAGE, rg32f) uniform restrict writeonly image2D u_deposits_out;

uniform float u_min_depth;              // shallower water has no turbidity of its own, world units

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    vec2 deposits = fresh_deposits(imageLoad(u_terrain_in, c).r, imageLoad(u_reference_in, c).r,
                                   imageLoad(u_water_in, c).r, imageLoad(u_sediment_in, c).r, u_min_depth);
    imageStore(u_deposits_out, c, vec4(deposits, 0.0, 0.0));
}
