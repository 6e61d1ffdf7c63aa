#version 410
// The ledger of the boundary faces: one texel per table entry (laid out as the table's texture), what
// the face carried into the grid so far as an unevaluated sum hi + lo of floats. Each substep adds
// dt * entering(q) of its scaled flow (pairs.glsl's pair_add_product), so the total keeps twice
// float's precision until hydro/water_fragment.py folds it into float64.
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/pairs.glsl"
#include "fragment/boundary_faces.glsl"

layout(location = 0) out vec2 o_booked;

float booked_rate(ivec3 place) { return place_flow(place); }

void main() { o_booked = booked_pair(texel()); }
