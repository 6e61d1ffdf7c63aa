#version 410
// A level of the reduction of the blocks' changed flags (sleep_changed.frag) to a flag a tile: each
// texel is 1 where one of the FACTOR x FACTOR texels of the level before that it covers is (those past
// the level's edge read as its last). The first level (MASK) gives 0 over the tiles the substep did
// not compute, whose blocks hold the flags of an earlier substep. SUM: each texel the sum of those it
// covers (those past the edge 0), for the tiles a call computed (sleep_plan.frag's count).
uniform sampler2D u_changed;        // the level before
#if MASK
uniform sampler2D u_awake;          // a texel a tile: 1 where the substep computed it
uniform int u_tile_texels;          // texels of this level a side of a tile
#endif
layout(location = 0) out float o_changed;

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
#if MASK
    if (texelFetch(u_awake, p / u_tile_texels, 0).r == 0.0) {
        o_changed = 0.0;
        return;
    }
#endif
    ivec2 last = textureSize(u_changed, 0) - 1;
    float changed = 0.0;
    for (int y = 0; y < FACTOR; ++y)
        for (int x = 0; x < FACTOR; ++x) {
            ivec2 q = p * FACTOR + ivec2(x, y);
#if SUM
            changed += all(lessThanEqual(q, last)) ? texelFetch(u_changed, q, 0).r : 0.0;
#else
            changed = max(changed, texelFetch(u_changed, min(q, last), 0).r);
#endif
        }
    o_changed = changed;
}
