// 2D dispatch over a grid of cells: one invocation per cell or face, bounds-checked by the caller.
#define LOCAL_SIZE 16
layout(local_size_x = LOCAL_SIZE, local_size_y = LOCAL_SIZE) in;

uniform ivec2 u_size;       // cells: (nx, ny); arrays are indexed [y, x], images at (x, y)

bool inside(ivec2 c) { return all(greaterThanEqual(c, ivec2(0))) && all(lessThan(c, u_size)); }
