// The boundary table (hydro/boundary.py): one entry per boundary face, in the order of common/water.glsl's
// boundary_x / boundary_y / boundary_z, its kind and value.
struct BoundaryFace { int kind; float value; };      // kinds as in hydro/boundary.py
layout(std430, binding = B_BOUNDARY) restrict readonly buffer Boundary { BoundaryFace u_boundary[]; };
#define BC_WALL 0
#define BC_INFLOW 1
#define BC_OUTFLOW 2
#define BC_LEVEL 3
