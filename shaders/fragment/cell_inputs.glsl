// What a per-cell pass reads: the cell's depth and its faces as the flow textures hold them
// (accelerated or scaled, as the pass says). Needs fragment/lattice.glsl.
#include "fragment/flows.glsl"
uniform sampler2D u_water;

float face_value(int k, ivec2 f) { return flow_at(k, f); }
#include "fragment/faces.glsl"

// The faces of cell c as the flows hold them.
Faces faces_of(ivec2 c) { return faces_around(c); }
