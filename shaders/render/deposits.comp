#version 430
// Renderer deposits pass (Renderer.track_deposits): fresh sediment at each cell, for the silt tint of
// the terrain and water passes. r: the bed's height above the reference (the terrain as it was when
// tracking began) plus the sediment the water carries, as the height it would settle to; g: that
// sediment over the water's depth (how muddy the water is), 0 where dry.
#include "common/grid.glsl"
#include "common/bindings.glsl"

layout(binding = B_TERRAIN, r32f) uniform restrict readonly image2D u_terrain_in;
layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_SEDIMENT, r32f) uniform restrict readonly image2D u_sediment_in;
layout(binding = B_DEPOSIT_REFERENCE, r32f) uniform restrict readonly image2D u_reference_in;
layout(binding = B_OUT_IMAGE, rg32f) uniform restrict writeonly image2D u_deposits_out;

uniform float u_min_depth;              // shallower water has no turbidity of its own, world units

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float sediment = imageLoad(u_sediment_in, c).r;
    float raised = max(imageLoad(u_terrain_in, c).r - imageLoad(u_reference_in, c).r, 0.0);
    float h = imageLoad(u_water_in, c).r;
    float muddy = h > u_min_depth ? sediment / h : 0.0;
    imageStore(u_deposits_out, c, vec4(raised + sediment, muddy, 0.0, 0.0));
}
