#version 410
// Renderer water pass: colour and opacity from depth (turquoise shallows, deep blue, 1 - exp(-d/D)),
// Fresnel sky reflection and a sun glint, and foam where the flow is fast (streaks) or moving water
// meets the shore (surf): a noise pattern carried along the velocity texture in two cross-faded
// phases (the flow-map technique of Vlachos, "Water Flow in Portal 2", SIGGRAPH 2010), so it moves
// with the current but never stretches without bound. A film shallower than u_film_depth is the
// terrain pass's wet ground: all of this fades in with depth, foam included.
#include "render/shading.glsl"
#include "render/silt.glsl"

uniform sampler2D u_velocity;          // rg32f, world units/s (velocity.comp)
uniform float u_time;                  // seconds; drives the streaks
uniform float u_depth_scale;           // depth at which the water is 63 % opaque, world units
uniform float u_foam_depth;            // surf fades out by this depth, world units
uniform float u_film_depth;            // the water's look fades in up to this depth, world units
uniform float u_streak_speed;          // speed at which streaks are fully formed, world units/s
uniform float u_cell_size;

in vec3 v_position;
in vec3 v_normal;
in vec2 v_uv;
in float v_depth;
in float v_wall;
out vec4 f_color;

const vec3 SHALLOW = vec3(0.16, 0.58, 0.62);
const vec3 DEEP = vec3(0.03, 0.19, 0.33);
const vec3 FOAM = vec3(0.92, 0.96, 0.98);
const float MUD_SHADE = 0.85;          // muddy water's colour: the silt's, a little darker
const float MUD_ALPHA = 0.85;          // and its opacity, at any depth
const float MUD_FOAM = 0.6;            // foam on muddy water takes this much of the silt's colour
const float PERIOD = 1.5;              // seconds of one flow-map phase
// Surf needs waves running up the shore: still water at a shore has none, however thin it gets there.
const vec2 SURF_SPEED = vec2(0.10, 0.40);   // fraction of u_streak_speed where surf starts, is full

// Noise stretched along the flow direction, sampled in cells.
float streaks(vec2 q, vec2 along) {
    vec2 across = vec2(-along.y, along.x);
    vec2 s = vec2(dot(q, along) * 0.45, dot(q, across) * 2.2);
    return value_noise(s) * 0.65 + value_noise(2.1 * s + 5.3) * 0.35;
}

void main() {
    float d = v_depth;
    if (d <= 0.0) discard;
    vec3 view = view_direction(v_position);
    vec3 n = normalize(v_normal);
    if (v_wall > 1e-4) {
        n = normalize(cross(dFdx(v_position), dFdy(v_position)));
        if (dot(n, view) < 0.0) n = -n;
    }
    float absorb = 1.0 - exp(-d / u_depth_scale);
    vec3 body = mix(SHALLOW, DEEP, absorb);
    float muddy = mud(v_uv);            // sediment-laden water: silt-brown and nearly opaque
    body = mix(body, u_silt_color * MUD_SHADE, muddy);
    body *= 0.75 * ambient(n) + 0.45 * u_sun_color * max(dot(n, u_sun_direction), 0.0);

    float cosv = clamp(dot(n, view), 0.0, 1.0);
    float fresnel = 0.02 + 0.98 * pow(1.0 - cosv, 5.0);
    vec3 half_vector = normalize(u_sun_direction + view);
    float glint = pow(max(dot(n, half_vector), 0.0), 220.0) * 1.6;
    vec3 color = mix(body, u_sky_color, fresnel * 0.8) + u_sun_color * glint;
    float alpha = mix(mix(0.25 + 0.7 * absorb, MUD_ALPHA, muddy), 1.0, fresnel);

    // Foam: shore band plus streaks on fast water, carried along the current.
    vec2 velocity = texture(u_velocity, v_uv).xy;
    float speed = length(velocity);
    vec2 along = speed > 1e-5 ? velocity / speed : vec2(1.0, 0.0);
    vec2 q = v_position.xy / u_cell_size;
    vec2 shift = velocity / u_cell_size * PERIOD;
    float phase = fract(u_time / PERIOD);
    float a = streaks(q - shift * phase, along);
    float b = streaks(q - shift * fract(phase + 0.5) + 11.3, along);
    float pattern = mix(a, b, abs(2.0 * phase - 1.0));
    float shore = (1.0 - smoothstep(0.0, u_foam_depth, d))
                * smoothstep(SURF_SPEED.x, SURF_SPEED.y, speed / u_streak_speed);
    float rapids = smoothstep(0.25, 1.0, speed / u_streak_speed);
    float foam = smoothstep(0.55, 0.8, pattern) * rapids + smoothstep(0.35, 0.9, pattern + 0.6 * shore) * shore;
    // No foam on a film, however fast: it takes a body of water to break and trap air, so foam starts
    // only where the water is fully drawn as water and forms fully at twice that depth.
    float body_of_water = smoothstep(0.0, u_film_depth, d);
    float breaks = smoothstep(u_film_depth, 2.0 * u_film_depth, d);
    foam = clamp(foam, 0.0, 1.0) * (v_wall > 1e-4 ? 0.0 : 1.0) * breaks;
    vec3 lit_foam = mix(FOAM, u_silt_color, MUD_FOAM * muddy)
                  * (0.6 * ambient(n) + 0.6 * u_sun_color * max(dot(n, u_sun_direction), 0.0));
    color = mix(color, lit_foam, foam);
    alpha = max(alpha, foam);
    if (v_wall > 1e-4) alpha = max(alpha, 0.55 + 0.45 * absorb);
    f_color = vec4(apply_fog(color, v_position), clamp(alpha, 0.0, 1.0) * body_of_water);
}
