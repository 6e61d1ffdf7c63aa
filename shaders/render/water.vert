#version 410
// Renderer water pass: the water surface terrain + depth, cut at the shoreline where the interpolated
// depth crosses zero (see water_surface). The outer ring is a wall from the bed up to the surface
// along the edges of the world.
#include "render/heightfield.glsl"

uniform float u_dry_depth;              // columns shallower than this count as dry, world units

out vec3 v_position;
out vec3 v_normal;
out vec2 v_uv;
out float v_depth;                      // water depth under this point, < 0 outside the water
out float v_wall;                       // 1 on the outer ring, so > 0 inside an edge-wall triangle

void main() {
    ivec2 ij = mesh_index();
    ivec2 c = clamp_cell(ij);
    bool wall = any(notEqual(ij, c));
    vec2 s = water_surface(c, u_dry_depth);
    float surface = s.x;
    v_position = vec3(world_xy(c), wall ? min(terrain_at(c), surface) : surface);
    v_normal = heightfield_normal(c, surface_or(c - ivec2(1, 0), u_dry_depth, surface),
                                  surface_or(c + ivec2(1, 0), u_dry_depth, surface),
                                  surface_or(c - ivec2(0, 1), u_dry_depth, surface),
                                  surface_or(c + ivec2(0, 1), u_dry_depth, surface));
    v_uv = texture_uv(c);
    v_depth = s.y;
    v_wall = wall ? 1.0 : 0.0;
    gl_Position = u_view_projection * vec4(v_position, 1.0);
}
