// The flows of every axis as textures (u_flow_x, u_flow_y, HEX u_flow_z; fragment/lattice.glsl's
// layout), scaled or accelerated as the pass that binds them says. Needs fragment/grid.glsl.
uniform sampler2D u_flow_x, u_flow_y;
#if HEX
uniform sampler2D u_flow_z;
#endif

// The flow texel of face f of axis k.
float flow_at(int k, ivec2 f) {
#if HEX
    if (k == 2) return face_at(u_flow_z, f);
#endif
    return k == 0 ? face_at(u_flow_x, f) : face_at(u_flow_y, f);
}
