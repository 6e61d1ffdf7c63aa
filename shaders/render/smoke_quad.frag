#version 330
// hydro.smoke_render.SmokeRenderer.draw: the grid's cells as smoke_shade.comp coloured them, scaled up
// to the screen with a cubic B-spline (four bilinear taps; Sigg & Hadwiger, GPU Gems 2 ch. 20), so a
// grid much coarser than the screen shows no cell staircase along a sharp front; obstacles flat over
// it, their edge where the bilinear sample of the obstacle mask crosses one half.
uniform sampler2D u_shade;      // sRGB colour per cell
uniform sampler2D u_solid;      // SmokeGrid.obstacle_texture, sampled bilinearly
uniform vec3 u_obstacle_color;  // sRGB
in vec2 v_uv;
out vec4 f_color;

vec4 bicubic(sampler2D t, vec2 uv) {
    vec2 size = vec2(textureSize(t, 0));
    vec2 p = uv * size - 0.5;
    vec2 f = fract(p);
    vec2 f2 = f * f, f3 = f2 * f;
    vec2 w0 = (1.0 - 3.0 * f + 3.0 * f2 - f3) / 6.0, w1 = (4.0 - 6.0 * f2 + 3.0 * f3) / 6.0;
    vec2 w2 = (1.0 + 3.0 * f + 3.0 * f2 - 3.0 * f3) / 6.0, w3 = f3 / 6.0;
    vec2 g0 = w0 + w1, g1 = w2 + w3;
    vec2 base = floor(p) + 0.5;
    vec2 h0 = (base - 1.0 + w1 / g0) / size, h1 = (base + 1.0 + w3 / g1) / size;
    return g0.y * (g0.x * texture(t, vec2(h0.x, h0.y)) + g1.x * texture(t, vec2(h1.x, h0.y)))
         + g1.y * (g0.x * texture(t, vec2(h0.x, h1.y)) + g1.x * texture(t, vec2(h1.x, h1.y)));
}

void main() {
    float edge = fwidth(v_uv.x) * float(textureSize(u_solid, 0).x);           // a pixel, in cells
    float solid = smoothstep(0.5 - edge, 0.5 + edge, texture(u_solid, v_uv).r);
    f_color = vec4(mix(bicubic(u_shade, v_uv).rgb, u_obstacle_color, solid), 1.0);
}
