#version 410
// _FragmentErosion's ledger (water/erode.comp's booking): per table entry, as book.frag's, the sediment
// its face carried into the grid so far, a float pair hi + lo: each substep adds dt * entering(g) of the
// face's sediment_flow g (common/erosion.glsl; the upwind cell's concentration, 0 outside the grid).
#include "common/model.glsl"
#include "common/erosion.glsl"
#include "fragment/lattice.glsl"
#include "fragment/pairs.glsl"
#include "fragment/boundary_faces.glsl"

uniform sampler2D u_concentration;          // erode_mix.frag's, per cell
layout(location = 0) out vec2 o_booked;

float conc_at(ivec2 c) { return inside(c) ? face_at(u_concentration, c) : 0.0; }

float booked_rate(ivec3 place) {
    ivec2 from = face_from(place.x, place.yz), to = face_to(place.x, place.yz);
    return sediment_flow(place_flow(place), conc_at(from), conc_at(to));
}

void main() { o_booked = booked_pair(texel()); }
