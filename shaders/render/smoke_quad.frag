#version 330
// demo_game.smoke_scene.SmokeScene.draw: smoke density as grey over a dark background, temperature
// as a blackbody-like ramp (red -> orange -> yellow-white), fuel in green, obstacles in slate blue.
uniform sampler2D u_scalars;   // SmokeGrid.density_texture: r density, g temperature, b fuel
uniform sampler2D u_solid;
uniform float u_ambient;       // SmokeGrid ambient_temperature: the ramp shows T - ambient
in vec2 v_uv;
out vec4 f_color;
void main() {
    vec4 s = texture(u_scalars, v_uv);
    float d = clamp(s.r, 0.0, 1.5);
    float t = clamp((s.g - u_ambient) / 3.0, 0.0, 1.0);
    vec3 fire = vec3(smoothstep(0.0, 0.4, t), smoothstep(0.25, 0.8, t), smoothstep(0.6, 1.0, t));
    vec3 colour = mix(vec3(0.04, 0.05, 0.07), vec3(0.85), 1.0 - exp(-1.5 * d)) + 1.4 * fire + vec3(0.2, 0.5, 0.1) * s.b;
    if (texture(u_solid, v_uv).r > 0.5) colour = vec3(0.25, 0.32, 0.45);
    f_color = vec4(colour, 1.0);
}
