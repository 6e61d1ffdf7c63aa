#version 330
// demo_game.smoke_scene.SmokeScene.draw: a full-screen quad (triangle strip over [-1, 1]^2) whose
// uv covers the smoke grid.
in vec2 in_pos;
out vec2 v_uv;
void main() { v_uv = in_pos * 0.5 + 0.5; gl_Position = vec4(in_pos, 0.0, 1.0); }
