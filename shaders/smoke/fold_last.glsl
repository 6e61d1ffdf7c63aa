// The second step of norms.glsl's reduction, done by the last group of a pass to finish: include it
// after a coherent buffer that declares `uint u_groups_done` (groups that wrote their record; the
// last one resets it to 0). Every invocation i of a group of `group` invocations calls this after
// group_norms(): the group's s_*[0] go to its record in u_partials; in the group that finishes last it
// folds every record into s_*[0] and returns true (its invocation 0 then stores the total and sets
// u_groups_done to 0), elsewhere false.
shared bool s_last;

bool fold_if_last(uint i, uint group) {
    uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    if (i == 0) {
        u_partials[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = Norms(s_r2[0], s_b2[0], s_rmax[0], s_bmax[0]);
        memoryBarrierBuffer();                            // the record is visible before the count says so
        s_last = atomicAdd(u_groups_done, 1u) == groups - 1u;
    }
    barrier();
    if (!s_last) return false;
    memoryBarrierBuffer();
    fold_partials(i, group, int(groups));
    return true;
}
