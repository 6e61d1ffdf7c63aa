// A face's scaled flow: its accelerated flow (u_accelerated, as accelerate.frag left it: texel (x, y)
// holds the faces of axes x, y (HEX z) at (x, y), then the outflow scale K of cell (x, y)) by the outflow
// scale of its upwind cell (common/model.glsl's upwind_scaled, K = 1 outside the grid, so what enters
// through a boundary face is never scaled). Needs fragment/lattice.glsl.
uniform sampler2D u_accelerated;

float scale_at(ivec2 c) { return inside(c) ? texelFetch(u_accelerated, c, 0).a : 1.0; }

float scaled_face(int k, ivec2 f) {
    return upwind_scaled(texelFetch(u_accelerated, f, 0)[k], scale_at(face_from(k, f)), scale_at(face_to(k, f)));
}
