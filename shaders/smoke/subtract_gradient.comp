#version 430
// SmokeGrid._subtract_gradient: v_face -= q_to - q_from on every free face (q = p dt / (rho h));
// open sides see q = 0 outside (p = 0). On the MAC grid D G == L, so the result's divergence is
// exactly the pressure residual (the projection is exact, not approximate).
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;
layout(binding = B_SMOKE_Q) uniform sampler2D u_q;
layout(binding = B_SMOKE_Q_BEFORE) uniform sampler2D u_q_before;
layout(binding = B_SMOKE_VX_OUT, r32f) uniform restrict writeonly image2D u_vx_out;
layout(binding = B_SMOKE_VY_OUT, r32f) uniform restrict writeonly image2D u_vy_out;
// 1: subtract the gradient of q - q_before, the change a deferred solve's later cycles made to the q
// whose gradient the velocity already lost (projection is linear in q)
uniform int u_delta;

float q_at(ivec2 c) {
    if (!inside(c)) return 0.0;
    float q = texelFetch(u_q, c, 0).r;
    return u_delta != 0 ? q - texelFetch(u_q_before, c, 0).r : q;
}

void main() {
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    if (f.x > u_size.x || f.y > u_size.y) return;
    if (f.y < u_size.y) {
        float value = texelFetch(u_vx, f, 0).r;
        if (face_type_x(f) != FACE_FIXED) value -= q_at(f) - q_at(f - ivec2(1, 0));
        imageStore(u_vx_out, f, vec4(value));
    }
    if (f.x < u_size.x) {
        float value = texelFetch(u_vy, f, 0).r;
        if (face_type_y(f) != FACE_FIXED) value -= q_at(f) - q_at(f - ivec2(0, 1));
        imageStore(u_vy_out, f, vec4(value));
    }
}
