#version 410
// Store every face's scaled flow (fragment/scaled.glsl), each axis to its own render target: the
// flows the next substep accelerates, that the boundary ledger books and that a game reads.
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/scaled.glsl"

layout(location = 0) out float o_flow_x;
layout(location = 1) out float o_flow_y;
#if HEX
layout(location = 2) out float o_flow_z;
#endif

void main() {
    ivec2 f = texel();
    o_flow_x = scaled_face(0, f);
    o_flow_y = scaled_face(1, f);
#if HEX
    o_flow_z = scaled_face(2, f);
#endif
}
