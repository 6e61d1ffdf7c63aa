#version 430
// SmokeGrid._advect: semi-Lagrangian advection (Stam 1999). Each vx and vy face (SCALARS 0) or each
// cell centre (SCALARS 1) is traced back through the velocity (u_vx, u_vy) by dt with the midpoint
// rule and the source fields are sampled bilinearly there; the cell scalars over fluid cells only
// (bilinear_fluid). Walls and obstacle faces get 0, solid cells solid_scalars(u_ambient). A negative
// u_dt_h traces forward: MacCormack's reverse step A^R. u_decay: dissipation factors exp(-k dt).
// Two passes of a step, apart: the velocity carries itself before the projection, the scalars move
// with the velocity the projection left (SmokeGrid.step). TOTALS 1 (the scalars' last pass): also
// their sums and the step's ledger entries, for the conservation fix (scalar_pass.glsl).
#include "smoke/mac.glsl"
#include "smoke/velocity.glsl"

#if SCALARS
layout(binding = B_SMOKE_S_HAT) uniform sampler2D u_src_s;
layout(binding = B_SMOKE_S_OUT, rgba32f) uniform restrict writeonly image2D u_s_out;
#else
layout(binding = B_SMOKE_VX_HAT) uniform sampler2D u_src_x;
layout(binding = B_SMOKE_VY_HAT) uniform sampler2D u_src_y;
layout(binding = B_SMOKE_VX_OUT, r32f) uniform restrict writeonly image2D u_vx_out;
layout(binding = B_SMOKE_VY_OUT, r32f) uniform restrict writeonly image2D u_vy_out;
#endif

uniform float u_dt_h;
uniform vec4 u_decay;           // velocity, density, temperature, fuel
uniform float u_ambient;        // ambient temperature, stored in solid cells

#if SCALARS
vec4 scalars_before(ivec2 c) { return texelFetch(u_src_s, c, 0); }
vec4 carried_scalars(ivec2 c) { return vec4(traced_scalars(u_src_s, c, u_dt_h).rgb * u_decay.yzw, 0.0); }
#include "smoke/scalar_pass.glsl"
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
            value = traced(u_src_x, dims_x(), f, vec2(0.5, 0.0), u_dt_h) * u_decay.x;
        imageStore(u_vx_out, f, vec4(value));
    }
    if (f.x < u_size.x) {
        float value = 0.0;
        if (face_type_y(f) != FACE_FIXED)
            value = traced(u_src_y, dims_y(), f, vec2(0.0, 0.5), u_dt_h) * u_decay.x;
        imageStore(u_vy_out, f, vec4(value));
    }
#endif
}
