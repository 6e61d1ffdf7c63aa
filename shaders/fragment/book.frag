#version 410
// The ledger of the boundary faces: one texel per table entry (laid out as the table's texture), what
// the face carried into the grid so far as an unevaluated sum hi + lo of floats. Each substep adds
// dt * entering(q) of its scaled flow (pairs.glsl's pair_add_product), so the total keeps twice
// float's precision until hydro/water_fragment.py folds it into float64.
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/pairs.glsl"
#include "fragment/boundary_faces.glsl"

uniform sampler2D u_ledger;                 // (hi, lo) per entry, before this substep
layout(location = 0) out vec2 o_booked;

void main() {
    ivec2 t = texel();
    vec2 booked = texelFetch(u_ledger, t, 0).rg;
    if (!is_entry(t)) {
        o_booked = booked;
        return;
    }
    ivec3 place = place_of(t);
    o_booked = pair_add_product(booked, u_dt, entering(place_flow(place), inside(face_to(place.x, place.yz))));
}
