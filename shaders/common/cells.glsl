// The grid of cells, for passes that choose their own workgroup shape (grid.glsl is the 2D default).
uniform ivec2 u_size;       // cells: (nx, ny); arrays are indexed [y, x], images at (x, y)

bool inside(ivec2 c) { return all(greaterThanEqual(c, ivec2(0))) && all(lessThan(c, u_size)); }
