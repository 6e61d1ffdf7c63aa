#version 430
// SmokeGrid._forces: v += dt f on fluid faces.
//   vorticity confinement (Fedkiw, Stam & Jensen 2001): f = eps h (N x w) = eps h w (N_y, -N_x),
//     N = grad|w| / |grad|w||, computed at the two cells beside the face and averaged;
//   buoyancy (same paper) on vy faces: f_y = -alpha density + beta (T - T_ambient), cell values
//     averaged to the face; y is up.
// The vorticity w = dv/dx - du/dy (1/s) at cell centres is the mean of the four corner values that
// the MAC grid gives directly; across walls the tangential velocity takes its ghost value (no-slip:
// 2 u_wall - u, otherwise u); 0 in solid cells (hydro.reference.smoke.curl). A workgroup takes a
// tile of 16 x 16 faces and works in shared memory: the corner values around it, w on the cells
// whose |w| the tile's confinement needs (a neighbour past the grid's edge takes the edge cell's), and
// the confinement force of each cell beside one of its faces, each once.
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;
layout(binding = B_SMOKE_S) uniform sampler2D u_s;
layout(binding = B_SMOKE_VX_OUT, r32f) uniform restrict writeonly image2D u_vx_out;
layout(binding = B_SMOKE_VY_OUT, r32f) uniform restrict writeonly image2D u_vy_out;

uniform float u_dt;
uniform float u_eps_h;          // confinement eps (1/s) times the cell size; 0: no vorticity work
uniform float u_inv_h;          // 1 / cell size
uniform vec2 u_buoyancy;        // (alpha, beta)
uniform float u_ambient;
#define NORMAL_EPS 1e-6         // |grad |w|| below this gives no direction (hydro.reference.smoke)

#define T LOCAL_SIZE            // faces per tile side
#define CN (T + 4)              // corners per side, from the tile origin - 2
#define WN (T + 3)              // cells with w, from origin - 2
#define KN (T + 1)              // cells with a confinement force, from origin - 1
shared float s_corner[CN * CN];
shared float s_w[WN * WN];
shared vec2 s_force[KN * KN];

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

ivec2 g_origin;                         // the tile's first face

float corner(ivec2 k) { ivec2 l = k - g_origin + 2; return s_corner[l.y * CN + l.x]; }
float abs_curl(ivec2 c) { c = clamp(c, ivec2(0), u_size - 1); ivec2 l = c - g_origin + 2; return abs(s_w[l.y * WN + l.x]); }
vec2 force(ivec2 c) { ivec2 l = c - g_origin + 1; return s_force[l.y * KN + l.x]; }

float lift(ivec2 c) {
    vec4 s = texelFetch(u_s, c, 0);
    return -u_buoyancy.x * s.r + u_buoyancy.y * (s.g - u_ambient);
}

void main() {
    g_origin = ivec2(gl_WorkGroupID.xy) * T;
    uint tid = gl_LocalInvocationIndex;
    bool vortex = u_eps_h != 0.0;  // uniform: every invocation takes the same branch
    if (vortex) {
        // corner (i, j) at (i - 1/2, j - 1/2), for i in 0..nx, j in 0..ny
        for (uint i = tid; i < CN * CN; i += T * T) {
            ivec2 k = g_origin - 2 + ivec2(i % CN, i / CN);
            float value = 0.0;
            if (all(greaterThanEqual(k, ivec2(0))) && all(lessThanEqual(k, u_size)))
                value = (vy_at(k.x, k.y) - vy_at(k.x - 1, k.y)) - (vx_at(k.x, k.y) - vx_at(k.x, k.y - 1));
            s_corner[i] = value;
        }
        barrier();
        for (uint i = tid; i < WN * WN; i += T * T) {
            ivec2 c = g_origin - 2 + ivec2(i % WN, i / WN);
            float w = 0.0;
            if (inside(c) && !solid(c))
                w = 0.25 * (corner(c) + corner(c + ivec2(1, 0)) + corner(c + ivec2(0, 1)) + corner(c + ivec2(1, 1))) * u_inv_h;
            s_w[i] = w;
        }
        barrier();
        for (uint i = tid; i < KN * KN; i += T * T) {
            ivec2 c = g_origin - 1 + ivec2(i % KN, i / KN);
            vec2 f = vec2(0.0);
            if (inside(c)) {
                vec2 g = 0.5 * vec2(abs_curl(c + ivec2(1, 0)) - abs_curl(c - ivec2(1, 0)),
                                    abs_curl(c + ivec2(0, 1)) - abs_curl(c - ivec2(0, 1)));
                float n = length(g);
                ivec2 l = c - g_origin + 2;
                if (n > NORMAL_EPS) f = u_eps_h * s_w[l.y * WN + l.x] * vec2(g.y, -g.x) / n;
            }
            s_force[i] = f;
        }
        barrier();
    }
    ivec2 f = g_origin + ivec2(gl_LocalInvocationID.xy);
    if (f.x > u_size.x || f.y > u_size.y) return;
    if (f.y < u_size.y) {
        float value = texelFetch(u_vx, f, 0).r;
        if (face_type_x(f) == FACE_FLUID && vortex)
            value += u_dt * 0.5 * (force(f - ivec2(1, 0)).x + force(f).x);
        imageStore(u_vx_out, f, vec4(value));
    }
    if (f.x < u_size.x) {
        float value = texelFetch(u_vy, f, 0).r;
        if (face_type_y(f) == FACE_FLUID) {
            ivec2 b = f - ivec2(0, 1);
            vec2 fb = vortex ? force(b) : vec2(0.0), ft = vortex ? force(f) : vec2(0.0);
            value += u_dt * 0.5 * (fb.y + lift(b) + ft.y + lift(f));
        }
        imageStore(u_vy_out, f, vec4(value));
    }
}
