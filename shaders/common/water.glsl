// Where the water state lives: the layout of the flows and of the boundary table, shared by every water
// kernel, square grid and triangular (HEX) lattice (the arithmetic is common/model.glsl's).
//
// Flows are signed volume rates (world units^3/s) stored once per face, row-major:
//   flow_x[y, x]  (ny, nx+1): from cell (x-1, y) to (x, y)
//   flow_y[y, x]  (ny+1, nx): from cell (x, y-1) to (x, y)
//   flow_z[y, x]  (ny+1, nx+1), HEX only: from vertex (x, y-1) to (x-1, y)
// Boundary faces (one end outside the grid) take their flow from the boundary table, in the order
// built by hydro/boundary.py: left, right, bottom, top; on the hex lattice each side lists its
// x or y faces first, then its z faces.
#include "common/bindings.glsl"

layout(binding = B_TERRAIN, r32f) uniform restrict readonly image2D u_terrain;

int index_x(ivec2 f) { return f.y * (u_size.x + 1) + f.x; }
int index_y(ivec2 f) { return f.y * u_size.x + f.x; }
#if HEX
int index_z(ivec2 f) { return f.y * (u_size.x + 1) + f.x; }
#endif

float terrain_at(ivec2 c) { return imageLoad(u_terrain, c).r; }

// The bed of the blocked kernel's ghost columns (water/pack.comp): the largest float32, above every
// surface (hydro/water_plan.py GHOST_BED)
#define GHOST_BED uintBitsToFloat(0x7f7fffffu)

// Boundary table index of a face, or -1 for an interior (or unused) face.
int boundary_x(ivec2 f) {
#if HEX
    int per_side = 2 * u_size.y;
#else
    int per_side = u_size.y;
#endif
    if (f.x == 0) return f.y;
    if (f.x == u_size.x) return per_side + f.y;
    return -1;
}

int boundary_y(ivec2 f) {
#if HEX
    int bottom = 4 * u_size.y;
    int top = bottom + 2 * u_size.x - 1;
#else
    int bottom = 2 * u_size.y;
    int top = bottom + u_size.x;
#endif
    if (f.y == 0) return bottom + f.x;
    if (f.y == u_size.y) return top + f.x;
    return -1;
}

#if HEX
// z face (x, y) joins (x, y-1) -> (x-1, y). Corner faces go to the left and right sides.
int boundary_z(ivec2 f) {
    int nx = u_size.x, ny = u_size.y;
    int bottom = 4 * ny, top = bottom + 2 * nx - 1;
    if (f.x == 0) return (f.y >= 1) ? ny + f.y - 1 : -1;                 // left: from (0, y-1) outward
    if (f.x == nx) return (f.y < ny) ? 2 * ny + ny + f.y : -1;           // right: from (nx, y-1) inward
    if (f.y == 0) return bottom + nx + f.x - 1;                          // bottom: into (x-1, 0)
    if (f.y == ny) return top + nx + f.x - 1;                            // top: out of (x, ny-1)
    return -1;
}
#endif
