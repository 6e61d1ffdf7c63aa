// The faces of the lattice (HEX: the triangular one), a texture per axis k laid out as common/water.glsl
// lays out the compute kernels' flows: flow_x (x, y) from cell (x-1, y) to (x, y), flow_y (x, y) from
// (x, y-1) to (x, y), HEX flow_z (x, y) from (x, y-1) to (x-1, y). Needs common/model.glsl's Faces.
#include "fragment/grid.glsl"

// The cells face f of axis k joins, from -> to.
ivec2 face_from(int k, ivec2 f) { return f - (k == 0 ? ivec2(1, 0) : ivec2(0, 1)); }
ivec2 face_to(int k, ivec2 f) { return k == 2 ? f - ivec2(1, 0) : f; }

// Boundary table index of face f of axis k (hydro/boundary.py's order), or -1 for an interior or
// unused face: common/water.glsl's boundary_x, boundary_y and boundary_z.
int boundary_index(int k, ivec2 f) {
    int nx = u_size.x, ny = u_size.y;
#if HEX
    int per_side = 2 * ny, bottom = 4 * ny, top = bottom + 2 * nx - 1;
#else
    int per_side = ny, bottom = 2 * ny, top = bottom + nx;
#endif
    if (k == 0) return f.x == 0 ? f.y : f.x == nx ? per_side + f.y : -1;
    if (k == 1) return f.y == 0 ? bottom + f.x : f.y == ny ? top + f.x : -1;
#if HEX
    if (f.x == 0) return f.y >= 1 ? ny + f.y - 1 : -1;          // left: from (0, y-1) outward
    if (f.x == nx) return f.y < ny ? 3 * ny + f.y : -1;         // right: from (nx, y-1) inward
    if (f.y == 0) return bottom + nx + f.x - 1;                 // bottom: into (x-1, 0)
    if (f.y == ny) return top + nx + f.x - 1;                   // top: out of (x, ny-1)
#endif
    return -1;
}

// The faces of cell c (common/model.glsl's Faces) from the flow textures of each axis.
#if HEX
Faces cell_faces(sampler2D flow_x, sampler2D flow_y, sampler2D flow_z, ivec2 c) {
#else
Faces cell_faces(sampler2D flow_x, sampler2D flow_y, ivec2 c) {
#endif
    Faces f;
    f.left = face_at(flow_x, c);
    f.right = face_at(flow_x, c + ivec2(1, 0));
    f.bottom = face_at(flow_y, c);
    f.top = face_at(flow_y, c + ivec2(0, 1));
#if HEX
    f.z_in = face_at(flow_z, c + ivec2(1, 0));
    f.z_out = face_at(flow_z, c + ivec2(0, 1));
#endif
    return f;
}
