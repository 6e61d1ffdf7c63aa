#version 410
// A brush on a cell field (water or terrain): value + u_amount * weight inside the brush's box, where
// the weights (hydro.lattice.brush_box, float32) are a texture of the box's cells; u_low, u_high clamp
// (the terrain stays inside float32's range, water is added only). Elsewhere the value is copied.
#include "fragment/grid.glsl"

uniform sampler2D u_field;
uniform sampler2D u_weights;
uniform ivec2 u_origin;             // first cell of the box
uniform float u_amount;             // per unit weight: depth added, or minus the depth dug
uniform vec2 u_bounds;              // (low, high) the result is clamped to
layout(location = 0) out float o_value;

void main() {
    ivec2 c = texel(), k = c - u_origin;
    float value = texelFetch(u_field, c, 0).r;
    bool in_box = all(greaterThanEqual(k, ivec2(0))) && all(lessThan(k, textureSize(u_weights, 0)));
    float w = in_box ? texelFetch(u_weights, k, 0).r : 0.0;
    o_value = w > 0.0 ? clamp(value + u_amount * w, u_bounds.x, u_bounds.y) : value;
}
