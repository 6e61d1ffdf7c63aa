#version 430
// SmokeGrid._divergence: the right-hand side of the pressure equation, D v = net outflow of each
// fluid cell (vx_R - vx_L + vy_T - vy_B, world velocity units; / cell_size gives 1/s), 0 in solids.
// Also where the pressure solve starts: q = 0 (u_keep_q 0), or the last solve's q kept for a warm
// start (u_keep_q 1; 0 in solid cells, which an obstacle may have covered since).
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;
layout(binding = B_SMOKE_RHS_OUT, r32f) uniform restrict writeonly image2D u_rhs_out;
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict writeonly image2D u_q_out;
uniform int u_keep_q;

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float d = 0.0;
    bool fluid = !solid(c);
    if (fluid)
        d = texelFetch(u_vx, c + ivec2(1, 0), 0).r - texelFetch(u_vx, c, 0).r
          + texelFetch(u_vy, c + ivec2(0, 1), 0).r - texelFetch(u_vy, c, 0).r;
    imageStore(u_rhs_out, c, vec4(d));
    if (u_keep_q == 0 || !fluid) imageStore(u_q_out, c, vec4(0.0));
}
