// The plan of a substep with sleeping tiles (hydro/water_sleep.py), one invocation per tile, run by the
// boundary pass that comes before the substep (cells_boundary.comp): a tile is awake where it or a
// tile beside it (the 3 x 3 around it) changed in the substep before, where it holds a cell beside a
// side that is not a wall (u_open: inflows, outflows and levels, whose values may change every frame),
// or where an edit woke it (u_wake_all, or one of the tile rectangles u_wake); the awake tiles are
// appended to the list the cell passes dispatch over, their count to the dispatch arguments of the
// substep's parity and to the call's total (u_plan_steps a tile: the substeps it computes). It clears
// the flags the coming substep sets, and the other parity's count. TOUCHED (the blocked kernel): the
// tiles listed over a call are also marked, for its unpack (list_touched).
#ifndef TOUCHED
#define TOUCHED 0
#endif
layout(std430, binding = B_SLEEP_LIST) restrict writeonly buffer SleepList { uint u_sleep_list[]; };
layout(std430, binding = B_SLEEP_ACTIVE) restrict readonly buffer SleepActive { uint u_active[]; };
layout(std430, binding = B_SLEEP_CLEAR) restrict writeonly buffer SleepClear { uint u_clear[]; };
layout(std430, binding = B_SLEEP_OPEN) restrict readonly buffer SleepOpen { uint u_open[]; };
// the tiles listed over the call's substeps, then two sets of dispatch arguments (x, y, z, unused) by
// parity
layout(std430, binding = B_SLEEP_ARGS) restrict buffer SleepArgs { uint u_awake_total; uint u_unused[3]; uint u_args[8];
                                                                  uint u_touched_args[4]; };
#if TOUCHED
layout(std430, binding = B_SLEEP_TOUCHED) restrict buffer SleepTouched { uint u_touched[]; };
#endif

uniform ivec2 u_tiles;          // tiles (x, y)
uniform int u_parity;           // which set of arguments the coming substep dispatches with
uniform bool u_wake_all;
uniform bool u_any_open;        // whether u_open flags a tile (else it may be unbound)
uniform int u_wake_count;
uniform uint u_plan_steps;      // substeps the listed tiles compute
uniform ivec4 u_wake[WAKE_RECTS];   // tiles (x0, y0, x1, y1), inclusive

// Plan tile `index` (row-major) of the coming substep.
void plan_tile(int index) {
    if (index == 0) u_args[4 * (1 - u_parity)] = 0u;
    if (index >= u_tiles.x * u_tiles.y) return;
    ivec2 t = ivec2(index % u_tiles.x, index / u_tiles.x);
    bool awake = u_wake_all || u_any_open && u_open[index] != 0u;
    for (int i = 0; i < u_wake_count; ++i)
        awake = awake || all(greaterThanEqual(t, u_wake[i].xy)) && all(lessThanEqual(t, u_wake[i].zw));
    for (int y = max(t.y - 1, 0); y <= min(t.y + 1, u_tiles.y - 1); ++y)
        for (int x = max(t.x - 1, 0); x <= min(t.x + 1, u_tiles.x - 1); ++x)
            awake = awake || u_active[y * u_tiles.x + x] != 0u;
    u_clear[index] = 0u;
    if (awake) {
        u_sleep_list[atomicAdd(u_args[4 * u_parity], 1u)] = uint(index);
        atomicAdd(u_awake_total, u_plan_steps);
#if TOUCHED
        u_touched[index] = 1u;
#endif
    }
}

#if TOUCHED
// After a call's last launch: list tile `index` where a launch of the call listed it, and unmark it.
void list_touched(int index) {
    if (index >= u_tiles.x * u_tiles.y || u_touched[index] == 0u) return;
    u_touched[index] = 0u;
    u_sleep_list[atomicAdd(u_touched_args[0], 1u)] = uint(index);
}
#endif
