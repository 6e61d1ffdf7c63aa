#version 410
// A further level of the planning record (fragment/stats.glsl): each texel a block of the level before.
#include "common/model.glsl"
#include "fragment/stats.glsl"

uniform sampler2D u_level;          // the level before

void main() {
    ivec2 first = block_first(), size = textureSize(u_level, 0);
    vec2 sum = vec2(0.0);
    float deepest = 0.0, lowest = NO_BED;
    for (int dy = 0; dy < STATS_BLOCK; ++dy) {
        for (int dx = 0; dx < STATS_BLOCK; ++dx) {
            bool in_level;
            vec4 record = texelFetch(u_level, clamped(first + ivec2(dx, dy), size, in_level), 0);
            if (!in_level) record = vec4(0.0, 0.0, 0.0, NO_BED);
            sum = pair_sum(sum, record.xy);
            deepest = max(deepest, record.z);
            lowest = min(lowest, record.w);
        }
    }
    o_record = vec4(sum, deepest, lowest);
}
