#version 410
// Move each column by the net flow of its scaled faces (common/model.glsl's net_inflow, moved).
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/cell_inputs.glsl"

layout(location = 0) out float o_depth;

void main() {
    ivec2 c = texel();
    o_depth = moved(face_at(u_water, c), move_rate(), net_inflow(faces_of(c)));
}
