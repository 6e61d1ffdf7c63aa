#version 410
// The first level of the planning record (fragment/stats.glsl): each texel a block of cells.
#include "common/model.glsl"
#include "fragment/stats.glsl"

uniform sampler2D u_water, u_terrain;
#if TAKEN
uniform sampler2D u_record;         // fragment/cycle.glsl's, per cell
#endif

void main() {
    ivec2 first = block_first();
    vec2 sum = vec2(0.0);
    float deepest = 0.0, lowest = NO_BED;
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
}
