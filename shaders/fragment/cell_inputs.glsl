// What a per-cell pass reads: the cell's depth and its faces, from the flows bound at u_flow_*
// (accelerated or scaled, as the pass says). Needs fragment/lattice.glsl.
uniform sampler2D u_water;
uniform sampler2D u_flow_x, u_flow_y;
#if HEX
uniform sampler2D u_flow_z;
#endif

// The faces of cell c as the flows hold them.
Faces faces_of(ivec2 c) {
#if HEX
    return cell_faces(u_flow_x, u_flow_y, u_flow_z, c);
#else
    return cell_faces(u_flow_x, u_flow_y, c);
#endif
}
