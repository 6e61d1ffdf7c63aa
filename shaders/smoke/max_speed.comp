#version 430
// SmokeGrid.max_speed: the largest |velocity| over the vx and vy faces (hydro.reference.smoke.max_speed),
// folded by atomicMax on the float's bits (they order as the values for v >= 0) into u_speed_bits,
// which the caller zeroes first: what step() sizes its substeps by (max_cfl).
#include "common/grid.glsl"
#include "common/bindings.glsl"

layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;
layout(std430, binding = B_SMOKE_PARTIALS) coherent buffer Speed { uint u_speed_bits; };

shared uint s_speed_bits;

void main() {
    ivec2 f = ivec2(gl_GlobalInvocationID.xy);
    bool first = gl_LocalInvocationIndex == 0u;
    if (first) s_speed_bits = 0u;
    barrier();
    float speed = 0.0;
    if (f.x <= u_size.x && f.y < u_size.y) speed = abs(texelFetch(u_vx, f, 0).r);
    if (f.x < u_size.x && f.y <= u_size.y) speed = max(speed, abs(texelFetch(u_vy, f, 0).r));
    atomicMax(s_speed_bits, floatBitsToUint(speed));
    barrier();
    if (first) atomicMax(u_speed_bits, s_speed_bits);
}
