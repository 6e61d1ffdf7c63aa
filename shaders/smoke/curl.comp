#version 430
// SmokeGrid._curl: vorticity w = dv/dx - du/dy (1/s) at cell centres, the mean of the four corner
// values that the MAC grid gives directly; across walls the tangential velocity takes its ghost
// value (no-slip: 2 u_wall - u, otherwise u). 0 in solid cells. Feeds forces.comp.
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict writeonly image2D u_curl_out;
uniform float u_inv_h;

float vx_at(int i, int j) {             // j may be -1 or ny: ghost rows across the bottom / top walls
    if (j < 0) {
        float u = texelFetch(u_vx, ivec2(i, 0), 0).r;
        return u_bc_kind[2] == BC_NO_SLIP ? 2.0 * u_bc_tangent[2] - u : u;
    }
    if (j >= u_size.y) {
        float u = texelFetch(u_vx, ivec2(i, u_size.y - 1), 0).r;
        return u_bc_kind[3] == BC_NO_SLIP ? 2.0 * u_bc_tangent[3] - u : u;
    }
    return texelFetch(u_vx, ivec2(i, j), 0).r;
}

float vy_at(int i, int j) {             // i may be -1 or nx: ghost columns across the left / right walls
    if (i < 0) {
        float v = texelFetch(u_vy, ivec2(0, j), 0).r;
        return u_bc_kind[0] == BC_NO_SLIP ? 2.0 * u_bc_tangent[0] - v : v;
    }
    if (i >= u_size.x) {
        float v = texelFetch(u_vy, ivec2(u_size.x - 1, j), 0).r;
        return u_bc_kind[1] == BC_NO_SLIP ? 2.0 * u_bc_tangent[1] - v : v;
    }
    return texelFetch(u_vy, ivec2(i, j), 0).r;
}

float corner(int i, int j) {            // at (i - 1/2, j - 1/2)
    return (vy_at(i, j) - vy_at(i - 1, j)) - (vx_at(i, j) - vx_at(i, j - 1));
}

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float w = 0.0;
    if (!solid(c))
        w = 0.25 * (corner(c.x, c.y) + corner(c.x + 1, c.y) + corner(c.x, c.y + 1) + corner(c.x + 1, c.y + 1)) * u_inv_h;
    imageStore(u_curl_out, c, vec4(w));
}
