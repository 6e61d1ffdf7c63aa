#version 430
// WaterGrid.add_water: adds depth u_amount * brush weight; u_amount = volume / (S * sum of weights),
// the sum taken in float64 on the CPU of the very float32 weights the GPU reads, so `volume` is added
// to float32 rounding.
#include "common/grid.glsl"
#include "common/bindings.glsl"
#include "common/brush.glsl"

layout(binding = B_WATER, r32f) uniform restrict image2D u_water_out;       // own texel only
uniform float u_amount;

void main() {
    ivec2 c = u_origin + ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float w = brush_weight(c);
    if (w > 0.0) imageStore(u_water_out, c, vec4(imageLoad(u_water_out, c).r + u_amount * w));
}
