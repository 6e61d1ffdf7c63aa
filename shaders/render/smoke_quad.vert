#version 330
// hydro.smoke_render.SmokeRenderer.draw: a quad (triangle strip over [-1, 1]^2) covering the viewport,
// whose uv covers the smoke grid.
in vec2 in_pos;
out vec2 v_uv;
void main() { v_uv = in_pos * 0.5 + 0.5; gl_Position = vec4(in_pos, 0.0, 1.0); }
