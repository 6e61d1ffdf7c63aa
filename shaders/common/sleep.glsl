// Sleeping tiles in the cell-wise passes (hydro/water_sleep.py). With SLEEP, workgroup g works on tile
// u_sleep_list[g] of SLEEP_TILE x SLEEP_TILE cells, which the plan (water/sleep_plan.comp) listed as
// awake, and a pass that changes a cell's water or one of its faces' flows flags the cell's tile active
// (the host gives such passes a workgroup of GROUP_X = SLEEP_TILE by GROUP_Y = SLEEP_TILE / CELL_ROWS).
#ifndef SLEEP
#define SLEEP 0
#endif
#if SLEEP
layout(std430, binding = B_SLEEP_ACTIVE) restrict writeonly buffer SleepActive { uint u_sleep_active[]; };
uniform int u_tiles_x;          // tiles in a row of the grid

// Cell c's tile changed in this substep.
void sleep_mark(ivec2 c) { u_sleep_active[(c.y / SLEEP_TILE) * u_tiles_x + c.x / SLEEP_TILE] = 1u; }

// Whether two floats differ in any bit (a change the plan must see, even of -0 against 0).
bool changed(float a, float b) { return floatBitsToUint(a) != floatBitsToUint(b); }
#endif

#ifdef CELL_ROWS
#if SLEEP
layout(std430, binding = B_SLEEP_LIST) restrict readonly buffer SleepList { uint u_sleep_list[]; };
#endif
// The first cell of this invocation's column of CELL_ROWS cells: over the whole grid, or with SLEEP in
// the listed tile.
ivec2 column_start() {
#if SLEEP
    uint t = u_sleep_list[gl_WorkGroupID.x];
    ivec2 tile = ivec2(int(t) % u_tiles_x, int(t) / u_tiles_x);
    return tile * SLEEP_TILE + ivec2(gl_LocalInvocationID.x, gl_LocalInvocationID.y * CELL_ROWS);
#else
    return ivec2(gl_GlobalInvocationID.x, gl_GlobalInvocationID.y * CELL_ROWS);
#endif
}
#endif
