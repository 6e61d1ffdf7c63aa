#version 430
// SmokeGrid.splat: adds the smooth brush w = (1 - (d/R)^2)^2 (as the water grids' brushes,
// hydro.reference.water.brush_weights, at face and cell positions) times u_velocity to every free face
// and times u_amounts (density, temperature, fuel) to every fluid cell in the box starting at
// u_origin. An impulse: it is added once, whatever dt the next step takes.
#include "smoke/mac.glsl"

uniform ivec2 u_origin;         // first face / cell of the dispatched box
uniform vec2 u_center;          // brush centre, grid coordinates
uniform float u_radius;         // cells, > 0

layout(binding = B_SMOKE_VX_OUT, r32f) uniform restrict image2D u_vx_io;      // own texel only
layout(binding = B_SMOKE_VY_OUT, r32f) uniform restrict image2D u_vy_io;
layout(binding = B_SMOKE_S_OUT, rgba32f) uniform restrict image2D u_s_io;

uniform vec2 u_velocity;
uniform vec3 u_amounts;

float weight(vec2 p) {
    float s = distance(p, u_center) / u_radius;
    float t = max(1.0 - s * s, 0.0);
    return t * t;
}

void main() {
    ivec2 f = u_origin + ivec2(gl_GlobalInvocationID.xy);
    if (any(lessThan(f, ivec2(0))) || f.x > u_size.x || f.y > u_size.y) return;
    vec2 p = vec2(f);
    if (f.y < u_size.y && face_type_x(f) != FACE_FIXED)
        imageStore(u_vx_io, f, imageLoad(u_vx_io, f) + weight(p - vec2(0.5, 0.0)) * u_velocity.x);
    if (f.x < u_size.x && face_type_y(f) != FACE_FIXED)
        imageStore(u_vy_io, f, imageLoad(u_vy_io, f) + weight(p - vec2(0.0, 0.5)) * u_velocity.y);
    if (inside(f) && !solid(f))
        imageStore(u_s_io, f, imageLoad(u_s_io, f) + weight(p) * vec4(u_amounts, 0.0));
}
