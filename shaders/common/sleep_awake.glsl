// Whether a tile computes the coming substep with sleeping tiles (hydro/water_sleep.py), one tile at a
// time: the plan of the compute kernels (common/sleep_plan.glsl) and of the fragment backend
// (fragment/sleep_plan.frag). A tile is awake where it or a tile beside it (the 3 x 3 around it)
// changed in the substep before (tile_changed), where it holds a cell beside a side that is not a wall
// (tile_open: inflows, outflows and levels, whose values may change every frame), or where an edit woke
// it (u_wake_all, or one of the tile rectangles u_wake). The includer defines tile_changed and tile_open
// over its own storage.
uniform ivec2 u_tiles;          // tiles (x, y)
uniform bool u_wake_all;
uniform bool u_any_open;        // whether a tile is open (else tile_open's storage may be unbound)
uniform int u_wake_count;
uniform ivec4 u_wake[WAKE_RECTS];   // tiles (x0, y0, x1, y1), inclusive

bool tile_changed(ivec2 t);
bool tile_open(ivec2 t);

bool tile_awake(ivec2 t) {
    bool awake = u_wake_all || u_any_open && tile_open(t);
    for (int i = 0; i < u_wake_count; ++i)
        awake = awake || all(greaterThanEqual(t, u_wake[i].xy)) && all(lessThanEqual(t, u_wake[i].zw));
    for (int y = max(t.y - 1, 0); y <= min(t.y + 1, u_tiles.y - 1); ++y)
        for (int x = max(t.x - 1, 0); x <= min(t.x + 1, u_tiles.x - 1); ++x)
            awake = awake || tile_changed(ivec2(x, y));
    return awake;
}
