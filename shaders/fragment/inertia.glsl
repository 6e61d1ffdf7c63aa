// The stencil of a face with inertia (common/model.glsl's FaceStencil) in the fragment backend: every
// axis's flows as the last substep left them are textures (u_flow_x, u_flow_y, HEX u_flow_z), read as a
// substep finds them: a wall's face and a face joining no cell carry nothing (the compute kernels' first
// pass of a call clears them). The stencil's assembly is common/stencil.glsl's; its arithmetic
// is model.glsl's. Needs fragment/lattice.glsl and common/model.glsl (INERTIA).
#include "fragment/flows.glsl"
uniform sampler2D u_terrain, u_water;

float terrain_at(ivec2 c) { return texelFetch(u_terrain, c, 0).r; }
float depth_at(ivec2 c) { return texelFetch(u_water, c, 0).r; }

// The flow of face f of axis k, 0 where there is no such face, it joins no cell or it is a wall.
float flow_of(int k, ivec2 f) {
    ivec2 a = f + from_cell(k), b = a + axis(k);
    if (!(inside(a) || inside(b))) return 0.0;
    int entry = boundary_index(k, f);
    if (entry >= 0 && boundary_entry(entry).kind == BC_WALL) return 0.0;
    return flow_at(k, f);
}

#include "common/stencil.glsl"
