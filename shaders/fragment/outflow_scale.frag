#version 410
// Each cell's outflow scale K from its depth and its accelerated, not yet scaled, faces
// (common/model.glsl's outgoing and outflow_scale).
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/cell_inputs.glsl"

layout(location = 0) out float o_scale;

void main() {
    ivec2 c = texel();
    o_scale = outflow_scale(face_at(u_water, c), outgoing(faces_of(c)));
}
