// The boundary faces in the boundary table's texture layout (a texel an entry), for the passes that
// book what crosses them (book.frag, book_sediment.frag): each entry's face and its scaled flow.
// Needs fragment/lattice.glsl and fragment/pairs.glsl.
uniform isampler2D u_places;                // per entry: its face (axis, x, y)
uniform int u_count;                        // table entries
// the scaled flows
#include "fragment/flows.glsl"

// Whether texel t holds a table entry.
bool is_entry(ivec2 t) { return t.y * textureSize(u_places, 0).x + t.x < u_count; }

// The face (axis, x, y) of texel t's entry.
ivec3 place_of(ivec2 t) { return texelFetch(u_places, t, 0).xyz; }

// The scaled flow of the face at `place`.
float place_flow(ivec3 place) { return flow_at(place.x, place.yz); }

uniform sampler2D u_ledger;                 // (hi, lo) per entry, before this substep

// What the pass books at the face at `place`: a rate, positive from its from-cell to its to-cell
// (the pass defines it).
float booked_rate(ivec3 place);

// Texel t's pair after this substep: dt * entering(booked_rate) added where t holds an entry.
vec2 booked_pair(ivec2 t) {
    vec2 booked = texelFetch(u_ledger, t, 0).rg;
    if (!is_entry(t)) return booked;
    ivec3 place = place_of(t);
    return pair_add_product(booked, u_dt, entering(booked_rate(place), inside(face_to(place.x, place.yz))));
}
