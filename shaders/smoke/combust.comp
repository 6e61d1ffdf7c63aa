#version 430
// SmokeGrid._combust: game fire after Nguyen, Fedkiw & Jensen 2002. Fuel burns at u_burn_rate
// (exact exponential: a fraction 1 - exp(-rate dt) per step), each unit releasing u_burn_heat of
// temperature and u_smoke_yield of smoke; hot gas then cools by the radiative law
// d(theta)/dt = -cooling theta^4, theta = (T - T_amb) / burn_heat, integrated exactly:
// theta' = theta / (1 + 3 cooling dt |theta|^3)^(1/3). Exact integration keeps it frame-rate free.
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_S_OUT, rgba32f) uniform restrict image2D u_s_io;    // own texel only

uniform float u_burn_fraction;  // 1 - exp(-burn_rate dt)
uniform float u_burn_heat;
uniform float u_smoke_yield;
uniform float u_cooling_dt;     // cooling * dt
uniform float u_ambient;

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    vec4 s = imageLoad(u_s_io, c);
    float burned = s.b * u_burn_fraction;
    float theta = (s.g + u_burn_heat * burned - u_ambient) / u_burn_heat;
    theta /= pow(1.0 + 3.0 * u_cooling_dt * abs(theta * theta * theta), 1.0 / 3.0);
    imageStore(u_s_io, c, vec4(s.r + u_smoke_yield * burned, u_ambient + u_burn_heat * theta, s.b - burned, 0.0));
}
