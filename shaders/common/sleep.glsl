// Sleeping tiles (hydro/water_sleep.py). With SLEEP, workgroup g works on tile u_sleep_list[g] of
// SLEEP_TILE x SLEEP_TILE cells (the blocked kernel: texels), which the plan (common/sleep_plan.glsl)
// listed as awake, and a pass that changes a cell's water or one of its faces' flows flags the cell's
// tile active (the cell-wise passes take a workgroup of GROUP_X = SLEEP_TILE by GROUP_Y = SLEEP_TILE /
// CELL_ROWS, the blocked kernel's a tile with its halo, its pack and unpack a tile).
#ifndef SLEEP
#define SLEEP 0
#endif
#ifndef SLEEP_EDGES
#define SLEEP_EDGES 0
#endif
#if SLEEP
#ifndef SLEEP_UNFLAGGED
layout(std430, binding = B_SLEEP_ACTIVE) restrict writeonly buffer SleepActive { uint u_sleep_active[]; };
#endif
layout(std430, binding = B_SLEEP_LIST) restrict readonly buffer SleepList { uint u_sleep_list[]; };
uniform int u_tiles_x;          // tiles in a row of the grid

#if SLEEP_EDGES
uniform int u_list_end;         // the plan lists the edge tiles from the list's end back (EDGE_LIST)
#endif

// The tile (column, row) this workgroup works on: SLEEP_EDGES, an edge tile of the plan's EDGE_LIST.
ivec2 listed_tile() {
#if SLEEP_EDGES
    int t = int(u_sleep_list[u_list_end - 1 - int(gl_WorkGroupID.x)]);
#else
    int t = int(u_sleep_list[gl_WorkGroupID.x]);
#endif
    return ivec2(t % u_tiles_x, t / u_tiles_x);
}

#ifndef SLEEP_UNFLAGGED
// Tile t changed in this substep (the blocked kernel's: in a substep of this launch).
void sleep_flag(ivec2 t) { u_sleep_active[t.y * u_tiles_x + t.x] = 1u; }

// Cell c's tile changed in this substep.
void sleep_mark(ivec2 c) { sleep_flag(c / SLEEP_TILE); }
#endif

// Whether two floats differ in any bit (a change the plan must see, even of -0 against 0).
bool changed(float a, float b) { return floatBitsToUint(a) != floatBitsToUint(b); }
bool changed(vec4 a, vec4 b) { return any(notEqual(floatBitsToUint(a), floatBitsToUint(b))); }
#endif

#ifdef CELL_ROWS
// The first cell of this invocation's column of CELL_ROWS cells: over the whole grid, or with SLEEP in
// the listed tile.
ivec2 column_start() {
#if SLEEP
    return listed_tile() * SLEEP_TILE + ivec2(gl_LocalInvocationID.x, gl_LocalInvocationID.y * CELL_ROWS);
#else
    return ivec2(gl_GlobalInvocationID.x, gl_GlobalInvocationID.y * CELL_ROWS);
#endif
}
#endif
