#version 430
// SmokeGrid._conserve: the conservation fix of the scalars the last advection pass left, in place:
// each fluid cell's phi (density, heat T - T_ambient, fuel) becomes phi + w |phi|, with w from the
// sums that pass reduced (conserve.glsl), so each total is what the step keeps of the total before
// it: P decay exactly. One pass; solid cells keep solid_scalars.
#include "smoke/mac.glsl"
#include "smoke/conserve.glsl"

layout(std430, binding = B_SMOKE_SUMS) restrict readonly buffer Sums { uint u_sum_groups_done; dvec4 u_sums[3]; };
layout(binding = B_SMOKE_S_OUT, rgba32f) uniform restrict image2D u_s_io;     // own texel only

uniform vec3 u_decay;           // density, temperature, fuel
uniform float u_ambient;

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c) || solid(c)) return;
    vec3 w = conserve_weights(unpack_sums(u_sums[0], u_sums[1], u_sums[2]), dvec3(u_decay));
    vec4 s = imageLoad(u_s_io, c);
    s.rgb += w * abs(scalar_phi(s, u_ambient));
    imageStore(u_s_io, c, s);
}
