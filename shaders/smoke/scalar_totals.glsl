// The scalars' sums of a conserving advection pass (advect.comp, maccormack.comp with TOTALS), and
// the step's ledger entries, booked by the group that finishes last (conserve.glsl, ledger.glsl).
// Include after the pass's u_dt_h, u_decay and u_ambient.
#define SUMS 3
#include "smoke/sums.glsl"
#include "smoke/conserve.glsl"
#include "smoke/ledger.glsl"
uniform int u_ledger_to;        // the slot this substep books into

// Every invocation calls this (the reduction waits at barriers), with cell c's scalars before and
// after the step where c is a fluid cell of the grid.
void sum_scalars(ivec2 c, bool fluid, vec4 before, vec4 after) {
    dvec4 v[SUMS] = dvec4[SUMS](dvec4(0.0), dvec4(0.0), dvec4(0.0));
    if (fluid) {
        vec3 phi0 = scalar_phi(before, u_ambient), phi1 = scalar_phi(after, u_ambient);
        vec3 flux = outflow(c, phi0, u_dt_h);
        v[0] = dvec4(dvec3(phi0) - dvec3(flux), flux.x);
        v[1] = dvec4(dvec3(phi1), flux.y);
        v[2] = dvec4(abs(dvec3(phi1)), flux.z);
    }
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
