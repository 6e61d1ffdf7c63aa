#version 430
// SmokeGrid._diffuse: one Chebyshev iteration of the implicit viscosity solve (Stam 1999)
//   A v = v*,   (A v)_f = (1 + 4a) v_f - a sum(neighbours),   a = nu dt / h^2,
// per component on its own face grid. A is symmetric with its spectrum inside [1, 1 + 8a], so the
// Chebyshev semi-iteration (Saad, Iterative Methods for Sparse Linear Systems, 2003, alg. 12.1)
//   v_{k+1} = v_k + u_c1 (v_k - v_{k-1}) + u_c2 (v* - A v_k)
// with coefficients from hydro.smoke_ops.chebyshev_coefficients cuts the error by
// ~(sqrt(1 + 8a) - 1) / (sqrt(1 + 8a) + 1) per iteration with no inner products (no readbacks) and a
// known bound. Tangential ghosts across walls: no-slip 2 u_wall - u (a lid slides), free-slip / open
// u; along the normal the neighbour is clamped (zero normal gradient). Walls and obstacle faces keep
// their value (0). Reads v_k and v_{k-1}, writes v_{k+1}: never an image it reads.
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_VX_HAT) uniform sampler2D u_rhs_x;       // v*
layout(binding = B_SMOKE_VY_HAT) uniform sampler2D u_rhs_y;
layout(binding = B_SMOKE_VX) uniform sampler2D u_cur_x;           // v_k
layout(binding = B_SMOKE_VY) uniform sampler2D u_cur_y;
layout(binding = B_SMOKE_VX_BACK) uniform sampler2D u_prev_x;     // v_{k-1}
layout(binding = B_SMOKE_VY_BACK) uniform sampler2D u_prev_y;
layout(binding = B_SMOKE_VX_OUT, r32f) uniform restrict writeonly image2D u_vx_out;
layout(binding = B_SMOKE_VY_OUT, r32f) uniform restrict writeonly image2D u_vy_out;

uniform float u_a;
uniform float u_c1;             // momentum coefficient (0 on the first iteration)
uniform float u_c2;             // residual coefficient

float fx(ivec2 f) {                      // v_k of vx, f clamped along x, ghost along y
    f.x = clamp(f.x, 0, u_size.x);
    int side = f.y < 0 ? 2 : 3;
    bool ghost = f.y < 0 || f.y >= u_size.y;
    f.y = clamp(f.y, 0, u_size.y - 1);
    float u = texelFetch(u_cur_x, f, 0).r;
    return (ghost && u_bc_kind[side] == BC_NO_SLIP) ? 2.0 * u_bc_tangent[side] - u : u;
}

float fy(ivec2 f) {
    f.y = clamp(f.y, 0, u_size.y);
    int side = f.x < 0 ? 0 : 1;
    bool ghost = f.x < 0 || f.x >= u_size.x;
    f.x = clamp(f.x, 0, u_size.x - 1);
    float v = texelFetch(u_cur_y, f, 0).r;
    return (ghost && u_bc_kind[side] == BC_NO_SLIP) ? 2.0 * u_bc_tangent[side] - v : v;
}

void main() {
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    if (f.x > u_size.x || f.y > u_size.y) return;
    if (f.y < u_size.y) {
        float v = texelFetch(u_cur_x, f, 0).r;
        if (face_type_x(f) != FACE_FIXED) {
            float nb = fx(f - ivec2(1, 0)) + fx(f + ivec2(1, 0)) + fx(f - ivec2(0, 1)) + fx(f + ivec2(0, 1));
            float r = texelFetch(u_rhs_x, f, 0).r - ((1.0 + 4.0 * u_a) * v - u_a * nb);
            v += u_c1 * (v - texelFetch(u_prev_x, f, 0).r) + u_c2 * r;
        }
        imageStore(u_vx_out, f, vec4(v));
    }
    if (f.x < u_size.x) {
        float v = texelFetch(u_cur_y, f, 0).r;
        if (face_type_y(f) != FACE_FIXED) {
            float nb = fy(f - ivec2(1, 0)) + fy(f + ivec2(1, 0)) + fy(f - ivec2(0, 1)) + fy(f + ivec2(0, 1));
            float r = texelFetch(u_rhs_y, f, 0).r - ((1.0 + 4.0 * u_a) * v - u_a * nb);
            v += u_c1 * (v - texelFetch(u_prev_y, f, 0).r) + u_c2 * r;
        }
        imageStore(u_vy_out, f, vec4(v));
    }
}
