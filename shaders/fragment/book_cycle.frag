#version 410
// The water cycle's ledger (hydro/water_fragment.py): one texel, what evaporation and drains took so
// far as float pairs (evaporated hi, lo, drained hi, lo; depth, times the cell area on the CPU), to
// which each fold adds what the stats passes summed of the cells' records (the last level's o_taken,
// fragment/stats.glsl under TAKEN), both parts' errors kept (fragment/pairs.glsl).
#include "common/model.glsl"
#include "fragment/pairs.glsl"

uniform sampler2D u_books;          // the sums so far
uniform sampler2D u_taken;          // this fold's, one texel
layout(location = 0) out vec4 o_books;

void main() {
    vec4 books = texelFetch(u_books, ivec2(0), 0), taken = texelFetch(u_taken, ivec2(0), 0);
    o_books = vec4(pair_sum(books.xy, taken.xy), pair_sum(books.zw, taken.zw));
}
