#version 430
// SmokeGrid._combust: game fire after Nguyen, Fedkiw & Jensen 2002. Fuel burns at u_burn_rate
// (exact exponential: a fraction 1 - exp(-rate dt) per step), each unit releasing u_burn_heat of
// temperature and u_smoke_yield of smoke; hot gas then cools by the radiative law
// d(theta)/dt = -cooling theta^4, theta = (T - T_amb) / burn_heat, integrated exactly:
// theta' = theta / (1 + 3 cooling dt |theta|^3)^(1/3). Exact integration keeps it frame-rate free.
// What it changes in each scalar's total goes to the ledger's current slot (ledger.glsl), added by
// the group that finishes last.
#include "smoke/mac.glsl"
#define SUMS 1
#include "smoke/sums.glsl"
#include "smoke/ledger.glsl"

layout(binding = B_SMOKE_S_OUT, rgba32f) uniform restrict image2D u_s_io;    // own texel only

uniform float u_burn_fraction;  // 1 - exp(-burn_rate dt)
uniform float u_burn_heat;
uniform float u_smoke_yield;
uniform float u_cooling_dt;     // cooling * dt
uniform float u_ambient;

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    dvec4 change[SUMS] = dvec4[SUMS](dvec4(0.0));
    if (inside(c)) {
        vec4 s = imageLoad(u_s_io, c);
        float burned = s.b * u_burn_fraction;
        float theta = (s.g + u_burn_heat * burned - u_ambient) / u_burn_heat;
        theta /= pow(1.0 + 3.0 * u_cooling_dt * abs(theta * theta * theta), 1.0 / 3.0);
        vec4 after = vec4(s.r + u_smoke_yield * burned, u_ambient + u_burn_heat * theta, s.b - burned, 0.0);
        imageStore(u_s_io, c, after);
        change[0] = dvec4(dvec3(after.rgb) - dvec3(s.rgb), 0.0);
    }
    uint i = gl_LocalInvocationIndex;
    if (!sum_over_grid(i, change) || i != 0) return;
    u_sum_groups_done = 0u;
    u_ledger[u_ledger_from].combustion += s_sums[0][0];
}
