#version 430
// Sleep.plan and Sleep.list_touched of the blocked kernel's sleeping calls (Blocked._run_sleeping,
// hydro/water_sleep.py), one invocation per tile of its launches: before each launch the plan of its
// tiles (LIST_TOUCHED 0: common/sleep_plan.glsl's plan_tile), after a call's last the list of the tiles
// any launch of it computed, which the unpack writes back (LIST_TOUCHED 1). PLAN_GROUP: the workgroup.
// The tiles whose halo reaches past the grid are listed apart (EDGE_LIST), for the program of the edges.
#include "common/bindings.glsl"
#define TOUCHED 1
#define EDGE_LIST 1
#include "common/sleep_plan.glsl"
layout(local_size_x = PLAN_GROUP) in;

void main() {
    int index = int(gl_GlobalInvocationID.x);
#if LIST_TOUCHED
    list_touched(index);
#else
    plan_tile(index);
#endif
}
