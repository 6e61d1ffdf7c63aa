#version 430
// WaterGrid.dig: lowers the terrain by depth * brush weight (a negative depth raises it).
// Water depth is left as it is, so the volume does not change. Heights stay inside float32's range.
#include "common/grid.glsl"
#include "common/bindings.glsl"
#include "common/brush.glsl"

layout(binding = B_TERRAIN, r32f) uniform restrict image2D u_terrain_out;   // own texel only
uniform float u_depth;

void main() {
    ivec2 c = u_origin + ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float w = brush_weight(c);
    if (w > 0.0) imageStore(u_terrain_out, c, vec4(clamp(imageLoad(u_terrain_out, c).r - u_depth * w, -3.0e38, 3.0e38)));
}
