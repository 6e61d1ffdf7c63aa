#version 410
// The awake tiles (sleep_plan.frag's; with SETTLED those of them whose water the substep did not change)
// as rectangles for tiles.vert to draw: a run of such tiles along a row, with the rows after it whose runs
// are the same, is one rectangle, written at its first tile as its far corner (x1, y1) in tiles,
// exclusive; the other tiles hold (0, 0). Few and large rectangles: a CPU rasteriser shades the bins a
// triangle covers whole much faster than those that two triangles share. SETTLED with u_unchecked, where
// every tile is awake, gives none: the substep did not compare its water (sleep_plan.frag).
uniform sampler2D u_awake;          // a texel a tile: 1 where the substep computes it
#if SETTLED
uniform sampler2D u_changed;        // a texel a tile: 1 where the substep changed its water
uniform sampler2D u_rects;          // the awake tiles' rectangles
uniform bool u_unchecked;
#endif
uniform ivec2 u_tiles;              // tiles (x, y)
layout(location = 0) out vec2 o_rect;

bool awake_at(int x, int y) {
    if (x < 0 || x >= u_tiles.x || y < 0 || y >= u_tiles.y)
        return false;
#if SETTLED
    if (texelFetch(u_changed, ivec2(x, y), 0).r != 0.0)
        return false;
#endif
    return texelFetch(u_awake, ivec2(x, y), 0).r != 0.0;
}

// Whether the awake tiles of row y include a run over exactly [x0, x1).
bool same_run(int y, int x0, int x1) {
    if (awake_at(x0 - 1, y) || awake_at(x1, y))
        return false;
    for (int x = x0; x < x1; ++x)
        if (!awake_at(x, y))
            return false;
    return true;
}

void main() {
    ivec2 t = ivec2(gl_FragCoord.xy);
    o_rect = vec2(0.0);
#if SETTLED
    if (u_unchecked && ivec2(texelFetch(u_rects, ivec2(0), 0).rg) == u_tiles)
        return;
#endif
    if (!awake_at(t.x, t.y) || awake_at(t.x - 1, t.y))
        return;                     // asleep, or not the first of its run
    int x1 = t.x + 1;
    while (awake_at(x1, t.y))
        ++x1;
    if (same_run(t.y - 1, t.x, x1))
        return;                     // the rectangle of the run before it holds it
    int y1 = t.y + 1;
    while (y1 < u_tiles.y && same_run(y1, t.x, x1))
        ++y1;
    o_rect = vec2(x1, y1);
}
