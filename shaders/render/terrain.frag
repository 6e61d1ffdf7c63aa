#version 410
// Renderer terrain pass: colour by height (sand, grass, highland, snow) and slope (rock); ground
// under a thin film of water, or damp just above the waterline, drawn soaked (darker, deeper colour,
// faint gloss); fresh sediment, where deposits are tracked, as silt; the skirt shows layered soil.
// Lambert sun + hemisphere ambient + fog.
#include "render/shading.glsl"
#include "render/silt.glsl"

uniform vec2 u_height_range;           // (low, high) terrain heights that span the colour bands
uniform float u_cell_size;
uniform float u_wet_depth;             // a film this deep soaks the ground's look fully, world units

in vec3 v_position;
in vec3 v_normal;
in vec2 v_uv;
in float v_skirt;
in float v_water_depth;
out vec4 f_color;

const vec3 SAND = vec3(0.78, 0.70, 0.50);
const vec3 GRASS = vec3(0.29, 0.43, 0.19);
const vec3 HIGHLAND = vec3(0.36, 0.39, 0.22);
const vec3 ROCK = vec3(0.47, 0.43, 0.39);
const vec3 SNOW = vec3(0.93, 0.94, 0.96);
const vec3 SOIL = vec3(0.42, 0.30, 0.20);

// Wet ground: water filling the pores and coating the surface leaves less light scattered back out,
// and the dim channels lose most, so the colour darkens and deepens rather than greying.
const float WET_DEEPEN = 1.25;         // exponent on the albedo: darkens dim channels most (saturates)
const float WET_DARKEN = 0.82;         // then an even darkening, so bright sand and rock darken too
const float WET_GLOSS = 0.10;          // sun highlight of a film: faint, so wet never reads whiter than dry
const float WET_SHININESS = 60.0;      // a film is smooth but follows the ground's bumps: a broad lobe
const float WET_SKY = 0.30;            // share of the Fresnel sky reflection a film shows (water's is 0.8)

vec3 soaked(vec3 albedo, float wetness) {
    return mix(albedo, pow(albedo, vec3(WET_DEEPEN)) * WET_DARKEN, wetness);
}

void main() {
    vec3 n = normalize(v_normal);
    vec3 color;
    float film = 0.0;                  // a film of water on the ground: 0 dry, 1 soaked
    vec2 q = v_position.xy / u_cell_size;
    float grain = 0.6 * value_noise(q * 0.35) + 0.4 * value_noise(q * 0.9 + 17.1);
    if (v_skirt > 1e-4) {
        // A side wall: flat-shaded from the triangle itself, coloured as strata of soil and rock.
        n = normalize(cross(dFdx(v_position), dFdy(v_position)));
        if (dot(n, view_direction(v_position)) < 0.0) n = -n;
        float layer = 0.5 + 0.5 * sin(v_position.z / u_cell_size * 1.7 + 2.0 * value_noise(q * 0.2));
        color = mix(SOIL, ROCK * 0.8, 0.35 * layer) * (0.85 + 0.3 * grain);
    } else {
        float span = max(u_height_range.y - u_height_range.x, 1e-6);
        float t = (v_position.z - u_height_range.x) / span + 0.06 * (grain - 0.5);
        color = mix(SAND, GRASS, smoothstep(0.10, 0.20, t));
        color = mix(color, HIGHLAND, smoothstep(0.45, 0.70, t));
        color = mix(color, ROCK, smoothstep(0.78, 0.90, t));
        color = mix(color, SNOW, smoothstep(0.92, 0.97, t));
        float steep = smoothstep(0.80, 0.62, n.z + 0.08 * (grain - 0.5));   // n.z = cos(slope)
        color = mix(color, ROCK, steep);
        color *= 0.88 + 0.24 * grain;
        // Fresh sediment: silt over the ground, by the depth the water laid down (or carries here).
        if (u_track_deposits) color = mix(color, u_silt_color * (0.9 + 0.2 * grain), silt_cover(v_uv));
        // Under water: darker, browner bed; under a film and in a band just above the waterline: soaked.
        float under = smoothstep(-0.02, 0.25, v_water_depth / u_cell_size);
        float damp = smoothstep(-0.35, 0.0, v_water_depth / u_cell_size) * (1.0 - under);
        color = mix(color, mix(color, SOIL, 0.45) * 0.6, under);
        color = soaked(color, damp);
        film = smoothstep(0.0, u_wet_depth, v_water_depth) * (1.0 - under);
    }
    vec3 light = u_sun_color * max(dot(n, u_sun_direction), 0.0) + ambient(n);
    vec3 lit = color * light;
    if (film > 0.0) {
        // The film's own gloss: a faint sun highlight and a little sky at grazing angles.
        vec3 view = view_direction(v_position);
        float fresnel = 0.02 + 0.98 * pow(1.0 - clamp(dot(n, view), 0.0, 1.0), 5.0);
        float highlight = pow(max(dot(n, normalize(u_sun_direction + view)), 0.0), WET_SHININESS);
        lit = mix(lit, u_sky_color, film * WET_SKY * fresnel) + film * WET_GLOSS * highlight * u_sun_color;
    }
    f_color = vec4(apply_fog(lit, v_position), 1.0);
}
