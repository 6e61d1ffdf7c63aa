#version 410
// Move each column by the net flow of its scaled faces (common/model.glsl's net_inflow, moved).
#include "common/model.glsl"
#include "fragment/lattice.glsl"

uniform sampler2D u_water;
uniform sampler2D u_flow_x, u_flow_y;       // scaled
#if HEX
uniform sampler2D u_flow_z;
#endif
layout(location = 0) out float o_depth;

void main() {
    ivec2 c = texel();
#if HEX
    Faces f = cell_faces(u_flow_x, u_flow_y, u_flow_z, c);
#else
    Faces f = cell_faces(u_flow_x, u_flow_y, c);
#endif
    o_depth = moved(face_at(u_water, c), move_rate(), net_inflow(f));
}
