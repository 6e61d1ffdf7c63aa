#version 410
// Scale every face of one axis by the outflow scale of its upwind cell (common/model.glsl's
// upwind_scaled; K = 1 outside the grid, so what enters through a boundary face is never scaled).
#include "common/model.glsl"
#include "fragment/lattice.glsl"

uniform sampler2D u_flow;           // this axis's accelerated flows
uniform sampler2D u_scale;          // K per cell
uniform int u_axis;
layout(location = 0) out float o_flow;

float scale_at(ivec2 c) { return inside(c) ? cell_at(u_scale, c) : 1.0; }

void main() {
    ivec2 f = texel();
    o_flow = upwind_scaled(face_at(u_flow, f), scale_at(face_from(u_axis, f)), scale_at(face_to(u_axis, f)));
}
