// Heightfield mesh over a hydro grid, built from gl_VertexID alone (no vertex buffer, no readback).
// Vertex (i, j) of an (mx+2) x (my+2) lattice (u_mesh), i, j in [-1, mx] x [-1, my]: the inner vertices
// sit on every u_mesh_step-th cell (square) or lattice vertex (HEX), the last row and column on the
// grid's last; the outer ring repeats the edge positions and becomes the skirt that closes the sides of
// the world, like a diorama cut out of the ground.
// World space: x, y horizontal (grid axes), z up (height); square cell [y, x] is centred at
// ((x + 0.5), (y + 0.5)) * cell_size, hex vertex (x, y) at x * (s, 0) + y * (s/2, s*sqrt(3)/2).
uniform ivec2 u_size;                   // (nx, ny)
uniform ivec2 u_mesh;                   // inner vertices (mx, my): ceil((n - 1) / u_mesh_step) + 1 a side
uniform int u_mesh_step;                // cells between two vertices of the mesh
uniform float u_cell_size;              // world units per cell (hex: lattice spacing)
uniform mat4 u_view_projection;         // clip = u_view_projection * vec4(world, 1)
uniform sampler2D u_terrain;            // r32f, (nx, ny), read with texelFetch
uniform sampler2D u_water;              // r32f, (nx, ny)

// The cell of this vertex: -1 or n on the outer ring.
ivec2 mesh_index() {
    int w = u_mesh.x + 2;
    ivec2 k = ivec2(gl_VertexID % w, gl_VertexID / w) - 1;
    ivec2 c = min(k * u_mesh_step, u_size - 1);
    return ivec2(k.x < 0 ? -1 : k.x >= u_mesh.x ? u_size.x : c.x, k.y < 0 ? -1 : k.y >= u_mesh.y ? u_size.y : c.y);
}

ivec2 clamp_cell(ivec2 c) { return clamp(c, ivec2(0), u_size - 1); }

vec2 world_xy(ivec2 c) {
#if HEX
    return u_cell_size * vec2(float(c.x) + 0.5 * float(c.y), 0.8660254037844386 * float(c.y));
#else
    return u_cell_size * (vec2(c) + 0.5);
#endif
}

vec2 texture_uv(ivec2 c) { return (vec2(c) + 0.5) / vec2(u_size); }

float terrain_at(ivec2 c) { return texelFetch(u_terrain, clamp_cell(c), 0).r; }
float water_at(ivec2 c) { return texelFetch(u_water, clamp_cell(c), 0).r; }

// Lattice neighbours: 8 around a square cell (for the shoreline), 6 around a hex vertex.
#if HEX
#define N_NEIGHBOURS 6
const ivec2 NEIGHBOURS[6] = ivec2[](ivec2(1, 0), ivec2(0, 1), ivec2(-1, 1), ivec2(-1, 0), ivec2(0, -1), ivec2(1, -1));
#else
#define N_NEIGHBOURS 8
const ivec2 NEIGHBOURS[8] = ivec2[](ivec2(1, 0), ivec2(1, 1), ivec2(0, 1), ivec2(-1, 1), ivec2(-1, 0),
                                    ivec2(-1, -1), ivec2(0, -1), ivec2(1, -1));
#endif

// Normal of the surface through the heights at c -/+ x and c -/+ y (clamped at the edges, so the
// differences stay one-sided there); works for the skewed hex axes too.
vec3 heightfield_normal(ivec2 c, float left, float right, float down, float up) {
    ivec2 l = clamp_cell(c - ivec2(1, 0)), r = clamp_cell(c + ivec2(1, 0));
    ivec2 d = clamp_cell(c - ivec2(0, 1)), u = clamp_cell(c + ivec2(0, 1));
    vec3 ax = vec3(world_xy(r) - world_xy(l), right - left);
    vec3 ay = vec3(world_xy(u) - world_xy(d), up - down);
    return normalize(cross(ax, ay));
}

// Water surface (x) and depth (y) drawn at vertex c. A dry vertex next to wet ones carries the highest
// neighbouring surface flat into the bank, where it meets the terrain along the true shoreline and
// hides beneath it; its depth (surface - terrain) is then negative, so interpolated depth crosses zero
// exactly at the shoreline. A dry vertex with no wet neighbour sinks one cell below its terrain.
float surface_or(ivec2 c, float dry_depth, float fallback) {
    float h = water_at(c);
    return h > dry_depth ? terrain_at(c) + h : fallback;
}

vec2 water_surface(ivec2 c, float dry_depth) {
    float t = terrain_at(c), h = water_at(c);
    if (h > dry_depth) return vec2(t + h, h);
    float best = -3.0e38;
    for (int k = 0; k < N_NEIGHBOURS; ++k) best = max(best, surface_or(c + NEIGHBOURS[k], dry_depth, -3.0e38));
    if (best > -1.0e38) return vec2(min(best, t), min(best, t) - t);
    return vec2(t - u_cell_size, -u_cell_size);
}
