// The scalars' sums of a conserving advection pass (scalar_pass.glsl with TOTALS), and the step's
// ledger entries, booked by the group that finishes last (conserve.glsl, ledger.glsl). Include after
// the pass's u_dt_h, u_decay and u_ambient.
#define SUMS 3
#include "smoke/sums.glsl"
#include "smoke/conserve.glsl"
#include "smoke/ledger.glsl"
uniform int u_ledger_to;        // the slot this substep books into

// Add fluid cell c's share, its scalars before and after the step, to an invocation's sums v.
void add_sums(inout dvec4 v[SUMS], ivec2 c, vec4 before, vec4 after) {
    vec3 phi0 = scalar_phi(before, u_ambient), phi1 = scalar_phi(after, u_ambient);
    vec3 flux = outflow(c, phi0, u_dt_h);
    v[0] += dvec4(dvec3(phi0) - dvec3(flux), flux.x);
    v[1] += dvec4(dvec3(phi1), flux.y);
    v[2] += dvec4(abs(dvec3(phi1)), flux.z);
}

// Every invocation calls this with its sums (the reduction waits at barriers): the grid's go to
// u_sums, and the step's entries to the ledger's next slot.
void book_sums(dvec4 v[SUMS]) {
    uint i = gl_LocalInvocationIndex;
    if (!sum_over_grid(i, v) || i != 0) return;
    for (int k = 0; k < SUMS; ++k) u_sums[k] = s_sums[k][0];
    u_sum_groups_done = 0u;
    ScalarSums t = unpack_sums(s_sums[0][0], s_sums[1][0], s_sums[2][0]);
    dvec3 kept = t.kept * dvec3(u_decay.yzw);
    LedgerSlot l = u_ledger[u_ledger_from];
    l.outflow.xyz += t.outflow;
    l.dissipation.xyz += t.kept - kept;
    l.drift.xyz += t.after - kept;
    u_ledger[u_ledger_to] = l;
}
