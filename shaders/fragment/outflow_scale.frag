#version 410
// Each cell's outflow scale K from its depth and its accelerated faces (common/model.glsl's outgoing
// and outflow_scale).
#include "common/model.glsl"
#include "fragment/lattice.glsl"

uniform sampler2D u_water;
uniform sampler2D u_flow_x, u_flow_y;       // accelerated, not yet scaled
#if HEX
uniform sampler2D u_flow_z;
#endif
layout(location = 0) out float o_scale;

void main() {
    ivec2 c = texel();
#if HEX
    Faces f = cell_faces(u_flow_x, u_flow_y, u_flow_z, c);
#else
    Faces f = cell_faces(u_flow_x, u_flow_y, c);
#endif
    o_scale = outflow_scale(face_at(u_water, c), outgoing(f));
}
