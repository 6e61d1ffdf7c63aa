#version 430
// SmokeGrid._forces: v += dt f on fluid faces.
//   vorticity confinement (Fedkiw, Stam & Jensen 2001): f = eps h (N x w) = eps h w (N_y, -N_x),
//     N = grad|w| / |grad|w||, computed at the two cells beside the face and averaged;
//   buoyancy (same paper) on vy faces: f_y = -alpha density + beta (T - T_ambient), cell values
//     averaged to the face; y is up.
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;
layout(binding = B_SMOKE_S) uniform sampler2D u_s;
layout(binding = B_SMOKE_CURL) uniform sampler2D u_curl;
layout(binding = B_SMOKE_VX_OUT, r32f) uniform restrict writeonly image2D u_vx_out;
layout(binding = B_SMOKE_VY_OUT, r32f) uniform restrict writeonly image2D u_vy_out;

uniform float u_dt;
uniform float u_eps_h;          // confinement eps (1/s) times the cell size
uniform vec2 u_buoyancy;        // (alpha, beta)
uniform float u_ambient;
#define NORMAL_EPS 1e-6         // |grad |w|| below this gives no direction (hydro.reference.smoke)

float abs_curl(ivec2 c) { return abs(texelFetch(u_curl, clamp(c, ivec2(0), u_size - 1), 0).r); }

vec2 confinement(ivec2 c) {
    vec2 g = 0.5 * vec2(abs_curl(c + ivec2(1, 0)) - abs_curl(c - ivec2(1, 0)),
                        abs_curl(c + ivec2(0, 1)) - abs_curl(c - ivec2(0, 1)));
    float n = length(g);
    if (n <= NORMAL_EPS) return vec2(0.0);
    float w = texelFetch(u_curl, c, 0).r;
    return u_eps_h * w * vec2(g.y, -g.x) / n;
}

float lift(ivec2 c) {
    vec4 s = texelFetch(u_s, c, 0);
    return -u_buoyancy.x * s.r + u_buoyancy.y * (s.g - u_ambient);
}

void main() {
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    if (f.x > u_size.x || f.y > u_size.y) return;
    if (f.y < u_size.y) {
        float value = texelFetch(u_vx, f, 0).r;
        if (face_type_x(f) == FACE_FLUID)
            value += u_dt * 0.5 * (confinement(f - ivec2(1, 0)).x + confinement(f).x);
        imageStore(u_vx_out, f, vec4(value));
    }
    if (f.x < u_size.x) {
        float value = texelFetch(u_vy, f, 0).r;
        if (face_type_y(f) == FACE_FLUID) {
            ivec2 b = f - ivec2(0, 1);
            value += u_dt * 0.5 * (confinement(b).y + lift(b) + confinement(f).y + lift(f));
        }
        imageStore(u_vy_out, f, vec4(value));
    }
}
