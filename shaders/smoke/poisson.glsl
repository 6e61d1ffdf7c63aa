// The pressure operator of one multigrid level (hydro.smoke_levels.coefficients / coarsen):
// coef = (W_right, W_top, D, diagonal) per cell, (L q)_c = sum_faces W (q_nb - q_c) - D q_c.
// Level 0 has W = 1 between fluid cells and D = number of open sides; coarser levels hold the
// halved Galerkin sums. The including pass defines q_at() (a sampler or its own image).
#include "common/grid.glsl"
#include "common/bindings.glsl"

layout(binding = B_SMOKE_COEF) uniform sampler2D u_coef;

float q_at(ivec2 c);

vec4 coef(ivec2 c) { return texelFetch(u_coef, c, 0); }

float neighbour_sum(ivec2 c) {
    vec4 k = coef(c);
    float s = 0.0;
    if (c.x + 1 < u_size.x) s += k.x * q_at(c + ivec2(1, 0));
    if (c.y + 1 < u_size.y) s += k.y * q_at(c + ivec2(0, 1));
    if (c.x > 0) s += coef(c - ivec2(1, 0)).x * q_at(c - ivec2(1, 0));
    if (c.y > 0) s += coef(c - ivec2(0, 1)).y * q_at(c - ivec2(0, 1));
    return s;
}

// r = b - L q; 0 where the diagonal is 0 (solid cells, empty coarse cells)
float residual_at(ivec2 c, float b) {
    float diag = coef(c).w;
    return diag > 0.0 ? b - (neighbour_sum(c) - diag * q_at(c)) : 0.0;
}
