#version 410
// Accelerate every face of one axis (u_axis): a pipe between two cells, or a boundary face by its table
// entry (common/model.glsl's face_flow), from the flow it carried at the end of the last substep; with
// INERTIA an interior face by inertial_flow over its stencil of every axis's flows (fragment/inertia.glsl).
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#if INERTIA
#include "fragment/inertia.glsl"
#else
uniform sampler2D u_terrain, u_water;
#endif

uniform sampler2D u_flow;           // this axis's flows as the last substep left them
uniform int u_axis;
layout(location = 0) out float o_flow;

void main() {
    ivec2 f = texel(), a = face_from(u_axis, f), b = face_to(u_axis, f);
#if INERTIA
    if (inside(a) && inside(b)) {
        o_flow = inertial_face(u_axis, f);
        return;
    }
#endif
    o_flow = face_flow(face_at(u_flow, f), inside(a), inside(b), boundary_index(u_axis, f),
                       cell_at(u_terrain, a), cell_at(u_water, a), cell_at(u_terrain, b), cell_at(u_water, b));
}
