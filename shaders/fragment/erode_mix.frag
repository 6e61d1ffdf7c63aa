#version 410
// _FragmentErosion, pass 1 of 3 after a substep (water/erode_mix.comp's): each cell's sediment
// concentration (common/erosion.glsl's concentration) from its sediment, the water the substep left
// and what its scaled faces sent out.
#include "common/model.glsl"
#include "common/erosion.glsl"
#include "fragment/lattice.glsl"
#include "fragment/cell_inputs.glsl"

uniform sampler2D u_sediment;
layout(location = 0) out float o_concentration;

void main() {
    ivec2 c = texel();
    o_concentration = concentration(face_at(u_sediment, c), face_at(u_water, c), outgoing(faces_of(c)));
}
