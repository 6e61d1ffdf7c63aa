#version 430
// SmokeGrid._diffuse: implicit viscosity (Stam 1999), (1 + 4a) v - a sum(neighbours) = v*,
// a = nu dt / h^2, solved per component on its own face grid. u_parity -1: one Jacobi sweep from
// v* (the first iterate); 0 / 1: red-black Gauss-Seidel on faces with (i + j) % 2 == u_parity,
// in place (a sweep reads only the other colour). Tangential ghosts across walls: no-slip
// 2 u_wall - u (a lid slides), free-slip / open u; along the normal the neighbour is clamped.
// Walls and obstacle faces keep their value.
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_VX_HAT) uniform sampler2D u_rhs_x;
layout(binding = B_SMOKE_VY_HAT) uniform sampler2D u_rhs_y;
layout(binding = B_SMOKE_VX_OUT, r32f) uniform restrict image2D u_vx_io;
layout(binding = B_SMOKE_VY_OUT, r32f) uniform restrict image2D u_vy_io;

uniform float u_a;
uniform int u_parity;

float fx(ivec2 f) {                      // current iterate of vx, f clamped along x, ghost along y
    f.x = clamp(f.x, 0, u_size.x);
    int side = f.y < 0 ? 2 : 3;
    bool ghost = f.y < 0 || f.y >= u_size.y;
    f.y = clamp(f.y, 0, u_size.y - 1);
    float u = u_parity < 0 ? texelFetch(u_rhs_x, f, 0).r : imageLoad(u_vx_io, f).r;
    return (ghost && u_bc_kind[side] == BC_NO_SLIP) ? 2.0 * u_bc_tangent[side] - u : u;
}

float fy(ivec2 f) {
    f.y = clamp(f.y, 0, u_size.y);
    int side = f.x < 0 ? 0 : 1;
    bool ghost = f.x < 0 || f.x >= u_size.x;
    f.x = clamp(f.x, 0, u_size.x - 1);
    float v = u_parity < 0 ? texelFetch(u_rhs_y, f, 0).r : imageLoad(u_vy_io, f).r;
    return (ghost && u_bc_kind[side] == BC_NO_SLIP) ? 2.0 * u_bc_tangent[side] - v : v;
}

void main() {
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    if (f.x > u_size.x || f.y > u_size.y) return;
    bool colour = u_parity < 0 || (f.x + f.y) % 2 == u_parity;
    float k = 1.0 / (1.0 + 4.0 * u_a);
    if (f.y < u_size.y) {
        float value;
        if (face_type_x(f) != FACE_FIXED && colour) {
            float nb = fx(f - ivec2(1, 0)) + fx(f + ivec2(1, 0)) + fx(f - ivec2(0, 1)) + fx(f + ivec2(0, 1));
            value = (texelFetch(u_rhs_x, f, 0).r + u_a * nb) * k;
        } else {
            value = u_parity < 0 ? texelFetch(u_rhs_x, f, 0).r : imageLoad(u_vx_io, f).r;
        }
        if (colour) imageStore(u_vx_io, f, vec4(value));
    }
    if (f.x < u_size.x) {
        float value;
        if (face_type_y(f) != FACE_FIXED && colour) {
            float nb = fy(f - ivec2(1, 0)) + fy(f + ivec2(1, 0)) + fy(f - ivec2(0, 1)) + fy(f + ivec2(0, 1));
            value = (texelFetch(u_rhs_y, f, 0).r + u_a * nb) * k;
        } else {
            value = u_parity < 0 ? texelFetch(u_rhs_y, f, 0).r : imageLoad(u_vy_io, f).r;
        }
        if (colour) imageStore(u_vy_io, f, vec4(value));
    }
}
