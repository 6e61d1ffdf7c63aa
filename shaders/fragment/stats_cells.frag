#version 410
// The first level of the planning record (fragment/stats.glsl): each texel a block of cells.
#include "common/model.glsl"
#include "fragment/stats.glsl"

uniform sampler2D u_water, u_terrain;
#if TAKEN
uniform sampler2D u_record;         // fragment/cycle.glsl's, per cell
#endif
#if SPEED
uniform sampler2D u_flow_x, u_flow_y;
#if HEX
uniform sampler2D u_flow_z;
#endif
#include "common/speed.glsl"

// Cell c's speed bound, for a column h deep (faces u_face_width wide, common/model.glsl's uniform).
float speed_at(ivec2 c, float h) {
    if (!has_speed(h)) return 0.0;
    vec3 sums = vec3(texelFetch(u_flow_x, c, 0).r + texelFetch(u_flow_x, c + ivec2(1, 0), 0).r,
                     texelFetch(u_flow_y, c, 0).r + texelFetch(u_flow_y, c + ivec2(0, 1), 0).r, 0.0);
#if HEX
    sums.z = texelFetch(u_flow_z, c + ivec2(1, 0), 0).r + texelFetch(u_flow_z, c + ivec2(0, 1), 0).r;
#endif
    return speed_bound(sums, h, u_face_width);
}
#endif

void main() {
    ivec2 first = block_first();
    vec2 sum = vec2(0.0);
    float deepest = 0.0, lowest = NO_BED, fastest = 0.0;
#if TAKEN
    vec2 evaporated = vec2(0.0), drained = vec2(0.0);
#endif
    for (int dy = 0; dy < STATS_BLOCK; ++dy) {
        for (int dx = 0; dx < STATS_BLOCK; ++dx) {
            bool in_grid;
            ivec2 c = clamped(first + ivec2(dx, dy), u_size, in_grid);
            float h = in_grid ? texelFetch(u_water, c, 0).r : 0.0;
            sum = pair_sum(sum, vec2(h, 0.0));
            deepest = max(deepest, h);
#if SPEED
            if (in_grid) fastest = max(fastest, speed_at(c, h));
#endif
#if TAKEN
            vec2 taken = in_grid ? texelFetch(u_record, c, 0).xy : vec2(0.0);
            evaporated = pair_sum(evaporated, vec2(taken.x, 0.0));
            drained = pair_sum(drained, vec2(taken.y, 0.0));
#endif
        }
    }
    // the edge's beds, in the blocks that hold some of it
    ivec2 last = first + (STATS_BLOCK - 1);
    if (any(equal(first, ivec2(0))) || any(greaterThanEqual(last, u_size - 1))) {
        for (int dy = 0; dy < STATS_BLOCK; ++dy) {
            for (int dx = 0; dx < STATS_BLOCK; ++dx) {
                bool in_grid;
                ivec2 c = clamped(first + ivec2(dx, dy), u_size, in_grid);
                bool on_edge = any(equal(c, ivec2(0))) || any(equal(c, u_size - 1));
                if (in_grid && on_edge) lowest = min(lowest, texelFetch(u_terrain, c, 0).r);
            }
        }
    }
    o_record = vec4(sum, deepest, lowest);
#if TAKEN
    o_taken = vec4(evaporated, drained);
#endif
#if SPEED
    o_speed = fastest;
#endif
}
