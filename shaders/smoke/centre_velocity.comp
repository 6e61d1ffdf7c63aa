#version 430
// SmokeGrid._centre_velocity: the rg32f velocity texture a game samples: each component is the mean
// of its two faces, so it is the cell-centre velocity of the MAC field.
#include "common/grid.glsl"
#include "common/bindings.glsl"

layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;
layout(binding = B_SMOKE_CENTRE_OUT, rg32f) uniform restrict writeonly image2D u_centre_out;

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float u = 0.5 * (texelFetch(u_vx, c, 0).r + texelFetch(u_vx, c + ivec2(1, 0), 0).r);
    float v = 0.5 * (texelFetch(u_vy, c, 0).r + texelFetch(u_vy, c + ivec2(0, 1), 0).r);
    imageStore(u_centre_out, c, vec4(u, v, 0.0, 0.0));
}
