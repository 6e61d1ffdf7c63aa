#version 430
// SmokeGrid._maccormack: phi = hat + (phi_n - back) / 2 (Selle et al. 2008), hat = A(phi_n) from an
// advect pass and back = A^R(hat) traced here, at the node only (no pass of its own). Limiter: clamp
// to the min/max of the four nodes of phi_n around the back-traced point (GPU Gems 3 ch. 30), so the
// scheme stays unconditionally bounded.
// SCALARS 0: phi_n is the velocity itself (u_vx, u_vy), which carries itself; SCALARS 1: phi_n is
// the cell scalars (u_s), carried by (u_vx, u_vy), with the bounds taken over fluid cells only
// (bilinear_fluid) and solid cells set to solid_scalars(u_ambient). u_decay and TOTALS as in
// advect.comp.
#include "smoke/mac.glsl"
#include "smoke/velocity.glsl"

#if SCALARS
layout(binding = B_SMOKE_S) uniform sampler2D u_s;
layout(binding = B_SMOKE_S_HAT) uniform sampler2D u_hat_s;
layout(binding = B_SMOKE_S_OUT, rgba32f) uniform restrict writeonly image2D u_s_out;
#else
layout(binding = B_SMOKE_VX_HAT) uniform sampler2D u_hat_x;
layout(binding = B_SMOKE_VY_HAT) uniform sampler2D u_hat_y;
layout(binding = B_SMOKE_VX_OUT, r32f) uniform restrict writeonly image2D u_vx_out;
layout(binding = B_SMOKE_VY_OUT, r32f) uniform restrict writeonly image2D u_vy_out;
#endif

uniform float u_dt_h;
uniform vec4 u_decay;
uniform float u_ambient;

#if SCALARS
vec4 corrected_scalars(ivec2 c) {
    vec4 lo, hi;
    traced_scalars(u_s, c, u_dt_h, lo, hi);
    vec4 back = vec4(traced_scalars(u_hat_s, c, -u_dt_h).rgb, 0.0);
    vec4 value = texelFetch(u_hat_s, c, 0) + 0.5 * (texelFetch(u_s, c, 0) - back);
    return clamp(value, lo, hi);
}

vec4 scalars_before(ivec2 c) { return texelFetch(u_s, c, 0); }
vec4 carried_scalars(ivec2 c) { return vec4(corrected_scalars(c).rgb * u_decay.yzw, 0.0); }
#include "smoke/scalar_pass.glsl"
#else
// back = A^R(hat) at a node is hat traced forward by dt (-u_dt_h), as advect.comp would trace it
float corrected(sampler2D phi, sampler2D hat, ivec2 dims, ivec2 node, vec2 offset) {
    float lo, hi;
    traced(phi, dims, node, offset, u_dt_h, lo, hi);
    float back = traced(hat, dims, node, offset, -u_dt_h);
    float value = texelFetch(hat, node, 0).r + 0.5 * (texelFetch(phi, node, 0).r - back);
    return clamp(value, lo, hi);
}
#endif

void main() {
#if SCALARS
    scalar_pass();
#else
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    if (f.x > u_size.x || f.y > u_size.y) return;
    if (f.y < u_size.y) {
        float value = 0.0;
        if (face_type_x(f) != FACE_FIXED)
            value = corrected(u_vx, u_hat_x, dims_x(), f, vec2(0.5, 0.0)) * u_decay.x;
        imageStore(u_vx_out, f, vec4(value));
    }
    if (f.x < u_size.x) {
        float value = 0.0;
        if (face_type_y(f) != FACE_FIXED)
            value = corrected(u_vy, u_hat_y, dims_y(), f, vec2(0.0, 0.5)) * u_decay.x;
        imageStore(u_vy_out, f, vec4(value));
    }
#endif
}
