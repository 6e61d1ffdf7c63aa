#version 410
// The ledger of the boundary faces: one texel per table entry (laid out as the table's texture), what
// the face carried into the grid so far as an unevaluated sum hi + lo of floats. Each substep adds
// dt * entering(q) of its scaled flow, the product's rounding kept (TwoProduct) and the sum's (TwoSum),
// so the total keeps twice float's precision until hydro/water_fragment.py folds it into float64.
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/pairs.glsl"

uniform sampler2D u_ledger;                 // (hi, lo) per entry, before this substep
uniform sampler2D u_flow_x, u_flow_y;       // scaled
#if HEX
uniform sampler2D u_flow_z;
#endif
uniform isampler2D u_places;                // per entry: its face (axis, x, y)
uniform int u_count;                        // table entries
layout(location = 0) out vec2 o_booked;

void main() {
    ivec2 t = texel();
    vec2 booked = texelFetch(u_ledger, t, 0).rg;
    int b = t.y * textureSize(u_places, 0).x + t.x;
    if (b >= u_count) {
        o_booked = booked;
        return;
    }
    ivec3 place = texelFetch(u_places, t, 0).xyz;
    ivec2 f = place.yz;
    bool enters = inside(face_to(place.x, f));
    float q = place.x == 0 ? face_at(u_flow_x, f) : face_at(u_flow_y, f);
#if HEX
    if (place.x == 2) q = face_at(u_flow_z, f);
#endif
    float rate = entering(q, enters);
    precise float product = u_dt * rate;
    precise float hi = booked.x + product;
    precise float lo = booked.y + (sum_error(booked.x, product, hi) + product_error(u_dt, rate, product));
    o_booked = renormalised(hi, lo);        // so hi keeps the leading bits
}
