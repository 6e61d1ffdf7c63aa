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

// The edges layout of the boundary faces (accelerate_edges.frag's texture): a row a side and axis, a
// texel a face along it; rows x left, x right, y bottom, y top (HEX then z left, right, bottom, top),
// each side of an axis as boundary_index tells them apart. No division, unlike the table's layout.
#if HEX
#define EDGE_ROWS 8
#else
#define EDGE_ROWS 4
#endif

// The texel of face f of axis k, where f lies on the grid's edge.
ivec2 edge_texel(int k, ivec2 f) {
    if (k == 0) return ivec2(f.y, f.x == 0 ? 0 : 1);
    if (k == 1) return ivec2(f.x, f.y == 0 ? 2 : 3);
    return f.x == 0 ? ivec2(f.y, 4) : f.x == u_size.x ? ivec2(f.y, 5) : ivec2(f.x, f.y == 0 ? 6 : 7);
}

// The face (axis, x, y) of texel t of the edges layout (edge_texel's inverse).
ivec3 edge_face(ivec2 t) {
    int row = t.y, i = t.x, k = row < 4 ? row / 2 : 2;
    bool far = row % 2 == 1;
    if (k == 0 || (k == 2 && row < 6)) return ivec3(k, far ? u_size.x : 0, i);
    return ivec3(k, i, far ? u_size.y : 0);
}

