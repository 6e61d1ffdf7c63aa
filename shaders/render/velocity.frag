#version 410
// Renderer.update_velocity on the fragment backend (GL 4.1): velocity.comp's pass as a render-to-texture
// pass over the velocity texture (fragment/pass.vert), the same common/velocity.glsl's cell_velocity,
// its faces read from the grid's flow textures (laid out as the flow buffers, fragment/lattice.glsl).
#include "fragment/grid.glsl"

uniform sampler2D u_water;
uniform sampler2D u_flow_x, u_flow_y;
#if HEX
uniform sampler2D u_flow_z;
#endif
// no storage buffers on GL 4.1: cell_velocity reads the faces from the textures
#define FLOWS_DECLARED 1
#define FLOW_X(f) face_at(u_flow_x, f)
#define FLOW_Y(f) face_at(u_flow_y, f)
#define FLOW_Z(f) face_at(u_flow_z, f)
#include "common/velocity.glsl"

uniform float u_face_width;             // world units
uniform float u_min_depth;              // world units

layout(location = 0) out vec2 o_velocity;

void main() {
    ivec2 c = texel();
    o_velocity = cell_velocity(c, face_at(u_water, c), u_face_width, u_min_depth);
}
