// Smooth round brush: weight (1 - (d/R)^2)^2 inside radius R, 0 outside; d is measured in world
// distance on the lattice (cells on the square grid, lattice spacings on the hex one).
// hydro/water.py computes the same weights in float64 to normalise volumes exactly.
uniform ivec2 u_origin;     // first cell of the dispatched box
uniform vec2 u_center;      // brush centre, grid coordinates
uniform float u_radius;     // > 0

vec2 lattice_position(vec2 g) {
#if HEX
    return vec2(g.x + 0.5 * g.y, 0.8660254037844386 * g.y);
#else
    return g;
#endif
}

float brush_weight(ivec2 c) {
    float s = distance(lattice_position(vec2(c)), lattice_position(u_center)) / u_radius;
    float t = max(1.0 - s * s, 0.0);
    return t * t;
}
