#version 430
// SmokeGrid._queue_speed: the planning record of max_cfl (hydro.reference.smoke.max_speed, max_lift):
// the largest |velocity| over the vx and vy faces, the largest |buoyancy| -alpha rho + beta (T - T_amb)
// and the most fuel over the cells, each folded by atomicMax on the float's bits (they order as the
// values for v >= 0) into u_record, which the caller zeroes first.
#include "common/grid.glsl"
#include "common/bindings.glsl"

layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;
layout(binding = B_SMOKE_S) uniform sampler2D u_s;
layout(std430, binding = B_SMOKE_SPEED) coherent buffer Record { uint u_record[3]; };   // speed, lift, fuel

uniform vec2 u_buoyancy;        // (alpha, beta)
uniform float u_ambient;

shared uint s_record[3];

void main() {
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    uint i = gl_LocalInvocationIndex;
    if (i < 3u) s_record[i] = 0u;
    barrier();
    float speed = 0.0;
    if (f.x <= u_size.x && f.y < u_size.y) speed = abs(texelFetch(u_vx, f, 0).r);
    if (f.x < u_size.x && f.y <= u_size.y) speed = max(speed, abs(texelFetch(u_vy, f, 0).r));
    atomicMax(s_record[0], floatBitsToUint(speed));
    if (all(lessThan(f, u_size))) {
        vec4 s = texelFetch(u_s, f, 0);
        atomicMax(s_record[1], floatBitsToUint(abs(-u_buoyancy.x * s.r + u_buoyancy.y * (s.g - u_ambient))));
        atomicMax(s_record[2], floatBitsToUint(max(s.b, 0.0)));
    }
    barrier();
    if (i < 3u) atomicMax(u_record[i], s_record[i]);
}
