// The plan of a substep with sleeping tiles (hydro/water_sleep.py), one invocation per tile, run by the
// boundary pass that comes before the substep (cells_boundary.comp): the awake tiles (common/sleep_awake.glsl)
// are appended to the list the cell passes dispatch over, their count to the dispatch arguments of the
// substep's parity and to the call's totals (u_plan_steps a tile: the substeps it computes; and
// u_judge_steps, 0 where an edit or another schedule woke every tile, for the dense policy). It clears
// the flags the coming substep sets, and the other parity's count. TOUCHED (the blocked kernel): the
// tiles listed over a call are also marked, for its unpack (list_touched). EDGE_LIST (the blocked kernel):
// the tiles outside the rectangle u_interior are listed from the list's end, u_list_end, back, and
// counted in the edge arguments of the parity, for the program that works the grid's edges.
#ifndef TOUCHED
#define TOUCHED 0
#endif
#ifndef EDGE_LIST
#define EDGE_LIST 0
#endif
layout(std430, binding = B_SLEEP_LIST) restrict writeonly buffer SleepList { uint u_sleep_list[]; };
layout(std430, binding = B_SLEEP_ACTIVE) restrict readonly buffer SleepActive { uint u_active[]; };
layout(std430, binding = B_SLEEP_CLEAR) restrict writeonly buffer SleepClear { uint u_clear[]; };
layout(std430, binding = B_SLEEP_OPEN) restrict readonly buffer SleepOpen { uint u_open[]; };
// the tiles listed over the call's substeps, and over those its plan woke not all, then two sets of
// dispatch arguments (x, y, z, unused) by parity, the unpack's, and the edge tiles' by parity
layout(std430, binding = B_SLEEP_ARGS) restrict buffer SleepArgs { uint u_awake_total; uint u_judged_total;
                                                                  uint u_unused[2]; uint u_args[8];
                                                                  uint u_touched_args[4]; uint u_edge_args[8]; };
#if TOUCHED
layout(std430, binding = B_SLEEP_TOUCHED) restrict buffer SleepTouched { uint u_touched[]; };
#endif

uniform int u_parity;           // which set of arguments the coming substep dispatches with
uniform uint u_plan_steps;      // substeps the listed tiles compute
uniform uint u_judge_steps;     // the same, or 0 where every tile was woken
#if EDGE_LIST
uniform ivec4 u_interior;       // the first and the last tile (column, row) listed from the start
uniform int u_list_end;         // the list's length: edge tiles are listed from its end back
#endif

#include "common/sleep_awake.glsl"
bool tile_changed(ivec2 t) { return u_active[t.y * u_tiles.x + t.x] != 0u; }
bool tile_open(ivec2 t) { return u_open[t.y * u_tiles.x + t.x] != 0u; }

// Plan tile `index` (row-major) of the coming substep.
void plan_tile(int index) {
    if (index == 0) {
        u_args[4 * (1 - u_parity)] = 0u;
#if EDGE_LIST
        u_edge_args[4 * (1 - u_parity)] = 0u;
#endif
    }
    if (index >= u_tiles.x * u_tiles.y) return;
    ivec2 t = ivec2(index % u_tiles.x, index / u_tiles.x);
    bool awake = tile_awake(t);
    u_clear[index] = 0u;
    if (awake) {
#if EDGE_LIST
        if (any(lessThan(t, u_interior.xy)) || any(greaterThan(t, u_interior.zw)))
            u_sleep_list[u_list_end - 1 - int(atomicAdd(u_edge_args[4 * u_parity], 1u))] = uint(index);
        else
#endif
        u_sleep_list[atomicAdd(u_args[4 * u_parity], 1u)] = uint(index);
        atomicAdd(u_awake_total, u_plan_steps);
        atomicAdd(u_judged_total, u_judge_steps);
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
