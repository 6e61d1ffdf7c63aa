// The grids' point samples (hydro/water_probes.py): the water at u_sample_count points, bilinear in grid
// coordinates (integer (x, y) is cell [y, x]; axial on the HEX lattice) between the four cells around
// each point: depth, surface (bed + depth) and the cells' velocities (common/velocity.glsl, world
// units/s). A point is clamped to the cell centres first, so one within half a cell of the edge takes
// the edge's values. sample_point(i) is one point; water/sample.comp runs them alone, and on CPU
// rasterisers the next call's first boundary pass runs them as extra invocations (cells_boundary.comp).
// Needs u_water (B_WATER, readable), common/water.glsl and common/velocity.glsl before it.
// A pass with no images or storage buffers (fragment/sample.frag) defines WATER_AT(c), a cell's depth,
// SAMPLE_POINT(i), point i, and SAMPLE_VALUE(i), where its vec4 goes, first, and terrain_at(c) itself.
#ifndef WATER_AT
layout(std430, binding = B_SAMPLE_POINTS) restrict readonly buffer Points { vec2 u_points[]; };
layout(std430, binding = B_SAMPLE_VALUES) restrict writeonly buffer Values { vec4 u_values[]; };
uniform int u_sample_count;
#define WATER_AT(c) imageLoad(u_water, c).r
#define SAMPLE_POINT(i) u_points[i]
#define SAMPLE_VALUE(i) u_values[i]
#endif
uniform float u_sample_face_width;      // world units
uniform float u_sample_min_depth;       // world units: no velocity in shallower cells

// depth, surface, vx, vy of cell c
vec4 cell_values(ivec2 c) {
    float h = WATER_AT(c);
    return vec4(h, terrain_at(c) + h, cell_velocity(c, h, u_sample_face_width, u_sample_min_depth));
}

void sample_point(int i) {
    vec2 p = clamp(SAMPLE_POINT(i), vec2(0.0), vec2(u_size - 1));
    ivec2 c0 = min(ivec2(floor(p)), max(u_size - 2, ivec2(0)));      // the lower corner
    ivec2 c1 = min(c0 + 1, u_size - 1);
    vec2 f = p - vec2(c0);
    vec4 below = mix(cell_values(c0), cell_values(ivec2(c1.x, c0.y)), f.x);
    vec4 above = mix(cell_values(ivec2(c0.x, c1.y)), cell_values(c1), f.x);
    SAMPLE_VALUE(i) = mix(below, above, f.y);
}
