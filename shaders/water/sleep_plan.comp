#version 430
// Blocked._plan and Blocked._unpack_list: the blocked kernel's sleeping tiles (hydro/water_sleep.py),
// one invocation per tile of its launches: before each launch the plan of its tiles (LIST_TOUCHED 0:
// common/sleep_plan.glsl's plan_tile), after a call's last the list of the tiles any launch of it
// computed, which the unpack writes back (LIST_TOUCHED 1).
#include "common/bindings.glsl"
#define TOUCHED 1
#include "common/sleep_plan.glsl"
layout(local_size_x = 256) in;

void main() {
    int index = int(gl_GlobalInvocationID.x);
#if LIST_TOUCHED
    list_touched(index);
#else
    plan_tile(index);
#endif
}
