#version 410
// Renderer terrain pass: the heightfield displaced by the terrain texture; the skirt drops to u_base.
#include "render/heightfield.glsl"

uniform float u_base;                   // height of the bottom of the skirt, world units
uniform float u_dry_depth;              // columns shallower than this count as dry, world units

out vec3 v_position;
out vec3 v_normal;
out vec2 v_uv;
out float v_skirt;                      // 1 on the outer ring, so > 0 inside a skirt triangle
out float v_water_depth;                // as drawn by the water pass: < 0 above the shoreline

void main() {
    ivec2 ij = mesh_index();
    ivec2 c = clamp_cell(ij);
    bool skirt = any(notEqual(ij, c));
    float z = skirt ? u_base : terrain_at(c);
    v_position = vec3(world_xy(c), z);
    v_normal = heightfield_normal(c, terrain_at(c - ivec2(1, 0)), terrain_at(c + ivec2(1, 0)),
                                  terrain_at(c - ivec2(0, 1)), terrain_at(c + ivec2(0, 1)));
    v_uv = texture_uv(c);
    v_skirt = skirt ? 1.0 : 0.0;
    v_water_depth = water_surface(c, u_dry_depth).y;
    gl_Position = u_view_projection * vec4(v_position, 1.0);
}
