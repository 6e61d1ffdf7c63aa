#version 410
// Renderer.update_deposits on the fragment backend (GL 4.1): deposits.comp's pass as a render-to-texture
// pass over the deposits texture (fragment/pass.vert), the same render/deposits.glsl's fresh_deposits.
#include "fragment/grid.glsl"
#include "render/deposits.glsl"

uniform sampler2D u_terrain;
uniform sampler2D u_water;
uniform sampler2D u_sediment;
uniform sampler2D u_reference;          // the heights fresh deposits are measured from
uniform float u_min_depth;              // shallower water has no turbidity of its own, world units

layout(location = 0) out vec2 o_deposits;

void main() {
    ivec2 c = texel();
    o_deposits = fresh_deposits(face_at(u_terrain, c), face_at(u_reference, c), face_at(u_water, c),
                                face_at(u_sediment, c), u_min_depth);
}
