#version 430
// The plan of a substep with sleeping tiles (hydro/water_sleep.py), one invocation per tile: a tile is
// awake where it or a tile beside it (the 3 x 3 around it) changed in the substep before, or an edit
// woke it (u_wake_all, or one of the tile rectangles u_wake); the awake tiles are appended to the list
// the cell-wise passes dispatch over, their count to the dispatch arguments of this substep's parity and
// to the running total. It clears the flags the coming substep sets, and the other parity's count.
#include "common/bindings.glsl"
layout(local_size_x = 8, local_size_y = 8) in;

layout(std430, binding = B_SLEEP_LIST) restrict writeonly buffer SleepList { uint u_sleep_list[]; };
layout(std430, binding = B_SLEEP_ACTIVE) restrict readonly buffer SleepActive { uint u_active[]; };
layout(std430, binding = B_SLEEP_CLEAR) restrict writeonly buffer SleepClear { uint u_clear[]; };
// two sets of dispatch arguments (x, y, z, unused), by parity, then the awake tiles summed over substeps
layout(std430, binding = B_SLEEP_ARGS) restrict buffer SleepArgs { uint u_args[8]; uint u_awake_total; };

uniform ivec2 u_tiles;          // tiles (x, y)
uniform int u_parity;           // which set of arguments this substep dispatches with
uniform bool u_wake_all;
uniform int u_wake_count;
uniform ivec4 u_wake[WAKE_RECTS];   // tiles (x0, y0, x1, y1), inclusive

void main() {
    ivec2 t = ivec2(gl_GlobalInvocationID.xy);
    if (t == ivec2(0)) u_args[4 * (1 - u_parity)] = 0u;
    if (any(greaterThanEqual(t, u_tiles))) return;
    bool awake = u_wake_all;
    for (int i = 0; i < u_wake_count; ++i)
        awake = awake || all(greaterThanEqual(t, u_wake[i].xy)) && all(lessThanEqual(t, u_wake[i].zw));
    for (int y = max(t.y - 1, 0); y <= min(t.y + 1, u_tiles.y - 1); ++y)
        for (int x = max(t.x - 1, 0); x <= min(t.x + 1, u_tiles.x - 1); ++x)
            awake = awake || u_active[y * u_tiles.x + x] != 0u;
    int index = t.y * u_tiles.x + t.x;
    u_clear[index] = 0u;
    if (awake) {
        u_sleep_list[atomicAdd(u_args[4 * u_parity], 1u)] = uint(index);
        atomicAdd(u_awake_total, 1u);
    }
}
