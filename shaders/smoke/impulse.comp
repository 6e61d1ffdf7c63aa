#version 430
// SmokeGrid's pending impulse: what splats added to the velocity since the last step, held apart in
// its own face textures (u_ix, u_iy) until the next step has carried the velocity by itself, then
// added to its free faces (u_add) before the viscosity and the projection, and zeroed (u_clear) once
// the substep stands, in the same pass where nothing can run it again. Over the box of faces at
// u_origin the splats covered.
// Carrying a velocity that holds a fresh impulse (before any projection) let MacCormack grow a
// spike under a splat that pushes every frame (docs/benchmarks-log.md); a projected velocity carried,
// then the impulse, then the projection (Bridson, "Fluid Simulation for Computer Graphics", ch. 2)
// stays bounded.
#include "smoke/mac.glsl"

uniform ivec2 u_origin;         // first face of the dispatched box
uniform bool u_add;
uniform bool u_clear;

layout(binding = B_SMOKE_VX_OUT, r32f) uniform restrict image2D u_vx_io;      // own texel only
layout(binding = B_SMOKE_VY_OUT, r32f) uniform restrict image2D u_vy_io;
layout(binding = B_SMOKE_IMPULSE_X, r32f) uniform restrict image2D u_ix;
layout(binding = B_SMOKE_IMPULSE_Y, r32f) uniform restrict image2D u_iy;

void main() {
    ivec2 f = u_origin + ivec2(gl_GlobalInvocationID.xy);
    if (any(lessThan(f, ivec2(0))) || f.x > u_size.x || f.y > u_size.y) return;
    if (f.y < u_size.y) {
        if (u_add && face_type_x(f) != FACE_FIXED)  // a face made a wall since the splat takes none
            imageStore(u_vx_io, f, imageLoad(u_vx_io, f) + imageLoad(u_ix, f));
        if (u_clear)
            imageStore(u_ix, f, vec4(0.0));
    }
    if (f.x < u_size.x) {
        if (u_add && face_type_y(f) != FACE_FIXED)
            imageStore(u_vy_io, f, imageLoad(u_vy_io, f) + imageLoad(u_iy, f));
        if (u_clear)
            imageStore(u_iy, f, vec4(0.0));
    }
}
