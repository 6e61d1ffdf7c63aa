#version 430
// StatsReduction.queue (hydro/water_stats.py), pass 1 of 2: partial Stats records.
// STATS_ROWS 0 (GPUs): a 16x16 workgroup walks u_walk tiles up the grid, each invocation summing one
// cell of each, and reduces its sums in shared memory into one record (u_walk keeps the records few,
// so the one group of stats_final.comp folds them quickly).
// STATS_ROWS n (CPU rasterisers, where a barrier is dear): one record per invocation, which walks
// n cells up a column; no shared memory, no barrier.
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/stats.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(std430, binding = B_PARTIALS) restrict writeonly buffer Partials { Stats u_partials[]; };

bool on_edge(ivec2 c) { return c.x == 0 || c.y == 0 || c.x == u_size.x - 1 || c.y == u_size.y - 1; }

#if SPEED
#include "common/velocity.glsl"
#include "common/speed.glsl"
uniform float u_face_width;

// Cell c's speed bound, for a column h deep.
float speed_at(ivec2 c, float h) {
    if (!has_speed(h)) return 0.0;
    vec3 sums = vec3(FLOW_X(c) + FLOW_X(c + ivec2(1, 0)), FLOW_Y(c) + FLOW_Y(c + ivec2(0, 1)), 0.0);
#if HEX
    sums.z = FLOW_Z(c + ivec2(1, 0)) + FLOW_Z(c + ivec2(0, 1));
#endif
    return speed_bound(sums, h, u_face_width);
}
#else
float speed_at(ivec2 c, float h) { return 0.0; }
#endif

#if CYCLE
layout(binding = B_CYCLE_RECORD_IMAGE, rgba32f) uniform restrict image2D u_cycle_record;
// the other texture of kernels that take two in turn: a tile the blocked kernel skips next keeps its
// records there as they are here (hydro/water_sleep.py), so it is cleared alike
layout(binding = B_CYCLE_RECORD_OUT, rgba32f) uniform restrict writeonly image2D u_cycle_record_out;

// What the water cycle took from cell c since the last pass (common/cycle.glsl's record), cleared.
dvec2 take(ivec2 c) {
    vec4 rec = imageLoad(u_cycle_record, c);
    if (rec.xy != vec2(0.0)) {
        imageStore(u_cycle_record, c, vec4(0.0, 0.0, rec.zw));
        imageStore(u_cycle_record_out, c, vec4(0.0, 0.0, rec.zw));
    }
    return dvec2(rec.xy);
}
#else
dvec2 take(ivec2 c) { return dvec2(0.0); }
#endif

#if STATS_ROWS
void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.x, gl_GlobalInvocationID.y * STATS_ROWS);
    double total = 0.0;
    dvec2 taken = dvec2(0.0);
    float hi = 0.0, lo = 3.0e38, fast = 0.0;
    if (inside(c)) {
        int stop = min(c.y + STATS_ROWS, u_size.y);
        for (; c.y < stop; ++c.y) {
            float h = imageLoad(u_water, c).r, z = imageLoad(u_terrain, c).r;
            total += double(h);
            hi = max(hi, h);
            lo = min(lo, on_edge(c) ? z : 3.0e38);      // where level faces are
            fast = max(fast, speed_at(c, h));
            taken += take(c);
        }
    }
    uint width = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    u_partials[gl_GlobalInvocationID.y * width + gl_GlobalInvocationID.x] = Stats(total, hi, lo, fast, 0.0, taken);
}
#else
#if CYCLE
#define TAKEN_SUM s_taken[0]
#else
#define TAKEN_SUM dvec2(0.0)
#endif
uniform int u_walk;                 // tiles each workgroup walks up the grid

void main() {
    uint i = gl_LocalInvocationIndex;
    ivec2 c = ivec2(gl_GlobalInvocationID.x, int(gl_WorkGroupID.y) * LOCAL_SIZE * u_walk + int(gl_LocalInvocationID.y));
    double total = 0.0;
    dvec2 taken = dvec2(0.0);
    float hi = 0.0, lo = 3.0e38, fast = 0.0;
    for (int k = 0; k < u_walk; ++k, c.y += LOCAL_SIZE) {
        if (!inside(c)) continue;
        float h = imageLoad(u_water, c).r;
        total += double(h);
        hi = max(hi, h);
        if (on_edge(c)) lo = min(lo, imageLoad(u_terrain, c).r);      // where level faces are
        fast = max(fast, speed_at(c, h));
        taken += take(c);
    }
    s_sum[i] = total;
#if CYCLE
    s_taken[i] = taken;
#endif
    s_max[i] = hi;
    s_min[i] = lo;
    s_speed[i] = fast;
    reduce_shared(i);
    if (i == 0)
        u_partials[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = Stats(s_sum[0], s_max[0], s_min[0], s_speed[0], 0.0, TAKEN_SUM);
}
#endif
