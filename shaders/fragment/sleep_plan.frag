#version 410
// The plan of a substep with sleeping tiles (hydro/water_fragment.py), a texel a tile: whether the tile is
// awake (common/sleep_awake.glsl, from the last level of sleep_reduce.frag's flags of the substep before
// and the open tiles u_open), and the tiles the call computed so far: u_count's plus this substep's, from
// 0 at the call's first (u_first). With u_unchecked the substep before did not compare its water where
// every tile was awake (its rectangles u_rects, one of every tile: tiles.vert), and every tile is awake.
uniform sampler2D u_changed, u_open, u_count, u_rects;
uniform bool u_first, u_unchecked;
layout(location = 0) out float o_awake;
layout(location = 1) out float o_count;

#include "common/sleep_awake.glsl"
bool tile_changed(ivec2 t) { return texelFetch(u_changed, t, 0).r != 0.0; }
bool tile_open(ivec2 t) { return texelFetch(u_open, t, 0).r != 0.0; }

void main() {
    ivec2 t = ivec2(gl_FragCoord.xy);
    bool unchecked = u_unchecked && ivec2(texelFetch(u_rects, ivec2(0), 0).rg) == u_tiles;
    o_awake = unchecked || tile_awake(t) ? 1.0 : 0.0;
    o_count = (u_first ? 0.0 : texelFetch(u_count, t, 0).r) + o_awake;
}
