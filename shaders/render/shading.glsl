// Lighting shared by the terrain and water fragment shaders: one sun, a sky/ground hemisphere,
// distance fog, and a cheap value noise for texture variation and foam.
uniform vec3 u_sun_direction;          // unit vector toward the sun
uniform vec3 u_sun_color;
uniform vec3 u_sky_color;              // ambient from above, reflected by water, fog colour
uniform vec3 u_ground_color;           // ambient from below
uniform vec4 u_eye;                    // w = 1: camera position; w = 0: direction toward the camera
uniform float u_fog_density;           // per world unit; 0 = no fog

vec3 view_direction(vec3 p) {          // unit vector from p toward the camera
    return u_eye.w > 0.5 ? normalize(u_eye.xyz - p) : normalize(u_eye.xyz);
}

vec3 ambient(vec3 n) { return mix(u_ground_color, u_sky_color, 0.5 + 0.5 * n.z); }

vec3 apply_fog(vec3 color, vec3 p) {
    if (u_eye.w < 0.5 || u_fog_density <= 0.0) return color;
    float d = distance(u_eye.xyz, p);
    return mix(u_sky_color, color, exp(-d * u_fog_density));
}

float hash12(vec2 p) {
    vec3 p3 = fract(vec3(p.xyx) * 0.1031);
    p3 += dot(p3, p3.yzx + 33.33);
    return fract((p3.x + p3.y) * p3.z);
}

float value_noise(vec2 p) {
    vec2 i = floor(p), f = fract(p);
    vec2 u = f * f * (3.0 - 2.0 * f);
    return mix(mix(hash12(i), hash12(i + vec2(1, 0)), u.x),
               mix(hash12(i + vec2(0, 1)), hash12(i + vec2(1, 1)), u.x), u.y);
}

float fbm(vec2 p) {
    return 0.5 * value_noise(p) + 0.3 * value_noise(2.03 * p + 17.1) + 0.2 * value_noise(4.01 * p + 41.7);
}
