// The boundary table (hydro/boundary.py): one entry per boundary face, in the order of common/water.glsl's
// boundary_x / boundary_y / boundary_z, its kind and value.
struct BoundaryFace { int kind; float value; };      // kinds as in hydro/boundary.py
#ifdef FRAGMENT
// The fragment backend (GL 4.1: no storage buffers) keeps the table in an rg32i texture of the entries'
// bytes, entry b at texel (b % width, b / width): (kind, the value's float bits).
uniform isampler2D u_boundary_table;
BoundaryFace boundary_entry(int b) {
    int width = textureSize(u_boundary_table, 0).x;
    ivec2 entry = texelFetch(u_boundary_table, ivec2(b % width, b / width), 0).rg;
    return BoundaryFace(entry.x, intBitsToFloat(entry.y));
}
#else
layout(std430, binding = B_BOUNDARY) restrict readonly buffer Boundary { BoundaryFace u_boundary[]; };
BoundaryFace boundary_entry(int b) { return u_boundary[b]; }
#endif
#define BC_WALL 0
#define BC_INFLOW 1
#define BC_OUTFLOW 2
#define BC_LEVEL 3
