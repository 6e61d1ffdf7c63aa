#version 430
// hydro.smoke_render.SmokeRenderer._shade_pass: what each cell of a SmokeGrid looks like on screen, at
// the grid's resolution, for smoke_quad.frag to scale up (so a large window costs a few texture samples
// a pixel, not this):
//   opacity  alpha = 1 - exp(-opacity * density);
//   light    a distant light, exp(-extinction * the density crossed), marching u_samples cells towards
//            it (u_step: one cell, unit length) from the cell's centre, the density and the obstacles
//            sampled bilinearly (the renderer's sampler), an obstacle as OBSTACLE_DEPTH of density (a
//            soft shadow); past the grid's edge nothing more is in the way;
//   colour   the background gradient behind, smoke_color * (ambient_color + light_color * light) with
//            opacity alpha over it, plus the flame hot gas emits; then exposure, the tone curve
//            1 - exp(-x) (bright flame and lit smoke roll off instead of clipping) and the sRGB
//            transfer; an obstacle's cell holds the background (smoke_quad.frag draws the obstacle).
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_S) uniform sampler2D u_scalars;     // SmokeGrid.density_texture
layout(binding = B_SMOKE_SHADE_OUT, rgba8) uniform restrict writeonly image2D u_shade_out;

uniform vec2 u_step;
uniform int u_samples;
uniform float u_extinction;     // per unit density per cell
uniform float u_opacity;        // per unit density
uniform float u_ambient_temperature;
uniform vec3 u_smoke_color;
uniform vec3 u_light_color;
uniform vec3 u_ambient_color;
uniform float u_flame_temperature;
uniform float u_flame_brightness;
uniform vec3 u_background_top;
uniform vec3 u_background_bottom;
uniform float u_exposure;
#define OBSTACLE_DEPTH 12.0     // the density an obstacle's cell stands for: it blocks nearly all light

// Emission of gas at t = (T - T_ambient) / flame_temperature: dark red, orange, yellow-white.
vec3 flame(float t) {
    t = clamp(t, 0.0, 1.5);
    vec3 ramp = vec3(smoothstep(0.2, 0.55, t), smoothstep(0.45, 0.9, t) * 0.75, smoothstep(0.8, 1.4, t) * 0.55);
    return ramp * t * t;
}

vec3 srgb(vec3 linear) {
    return mix(linear * 12.92, 1.055 * pow(linear, vec3(1.0 / 2.4)) - 0.055, step(0.0031308, linear));
}

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float depth = 0.0;
    for (int k = 1; k <= u_samples; ++k) {
        vec2 p = vec2(c) + 0.5 + u_step * float(k);
        if (!inside(ivec2(floor(p)))) break;
        vec2 uv = p / vec2(u_size);
        depth += max(texture(u_scalars, uv).r, 0.0) + OBSTACLE_DEPTH * texture(u_solid, uv).r;
    }
    vec4 s = solid(c) ? vec4(0.0, u_ambient_temperature, 0.0, 0.0) : texelFetch(u_scalars, c, 0);
    float alpha = 1.0 - exp(-u_opacity * max(s.r, 0.0));
    vec3 lit = u_smoke_color * (u_ambient_color + u_light_color * exp(-u_extinction * depth));
    vec3 glow = u_flame_brightness * flame((s.g - u_ambient_temperature) / u_flame_temperature);
    vec3 back = mix(u_background_bottom, u_background_top, (float(c.y) + 0.5) / float(u_size.y));
    vec3 colour = 1.0 - exp(-u_exposure * (mix(back, lit, alpha) + glow));
    imageStore(u_shade_out, c, vec4(srgb(colour), 1.0));
}
