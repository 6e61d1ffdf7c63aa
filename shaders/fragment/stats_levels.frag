#version 410
// A further level of the planning record (fragment/stats.glsl): each texel a block of the level before.
#include "common/model.glsl"
#include "fragment/stats.glsl"

uniform sampler2D u_level;          // the level before
#if TAKEN
uniform sampler2D u_taken_level;    // its taken pairs
#endif
#if SPEED
uniform sampler2D u_speed_level;    // its fastest water
#endif

void main() {
    ivec2 first = block_first(), size = textureSize(u_level, 0);
    vec2 sum = vec2(0.0);
    float deepest = 0.0, lowest = NO_BED, fastest = 0.0;
#if TAKEN
    vec2 evaporated = vec2(0.0), drained = vec2(0.0);
#endif
    for (int dy = 0; dy < STATS_BLOCK; ++dy) {
        for (int dx = 0; dx < STATS_BLOCK; ++dx) {
            bool in_level;
            ivec2 t = clamped(first + ivec2(dx, dy), size, in_level);
            vec4 record = texelFetch(u_level, t, 0);
            if (!in_level) record = vec4(0.0, 0.0, 0.0, NO_BED);
            sum = pair_sum(sum, record.xy);
            deepest = max(deepest, record.z);
            lowest = min(lowest, record.w);
#if SPEED
            fastest = max(fastest, in_level ? texelFetch(u_speed_level, t, 0).r : 0.0);
#endif
#if TAKEN
            vec4 taken = in_level ? texelFetch(u_taken_level, t, 0) : vec4(0.0);
            evaporated = pair_sum(evaporated, taken.xy);
            drained = pair_sum(drained, taken.zw);
#endif
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
