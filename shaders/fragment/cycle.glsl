// The water cycle in the fragment backend (docs/design.md, "The water cycle"; hydro/water_fragment.py):
// the rates as uniforms and textures, and each cell's record as an rgba32f texture that the move pass
// reads and writes as a second render target, ping-ponged like the water. Its arithmetic is
// common/model.glsl's cycled() and moved_error(); this file reads what common/cycle.glsl reads, which
// the fragment passes cannot include (storage buffers and binding layouts need GL 4.2-4.3), and keeps
// the record as its cycle_step() does. WATER_CYCLE: the cycle is on; RAIN_FIELD: rain is a per-cell
// field; SOURCES: the grid has springs or drains. Needs fragment/grid.glsl.
#if WATER_CYCLE
uniform float u_rain;               // m/s of depth over every cell (0 where RAIN_FIELD)
uniform float u_evaporation;        // m/s of depth, where water is
#if RAIN_FIELD
uniform sampler2D u_rain_field;     // m/s a cell
#endif
#if SOURCES
uniform sampler2D u_sources;        // (springs, drains) m/s a cell
#endif
// Each cell's record (common/cycle.glsl's): the depth evaporation and drains took since the stats
// passes last added them to the ledger (stats_cells.frag under TAKEN), and what the cycle owes the
// column. u_fresh: they were added since the record was written, so what was taken starts again at 0
// (the compute stats pass clears them in place; here nothing writes the record but the move).
uniform sampler2D u_record;
uniform bool u_fresh;

// Cell c's rates, (supply, evaporation, drain) m/s of depth: common/cycle.glsl's cycle_rates() for a
// cell of the grid (every texel a pass writes is one), in its order.
vec3 cycle_rates(ivec2 c) {
    float supply = u_rain, drain = 0.0;
#if RAIN_FIELD
    supply += texelFetch(u_rain_field, c, 0).r;
#endif
#if SOURCES
    vec2 s = texelFetch(u_sources, c, 0).rg;
    supply += s.x;
    drain = s.y;
#endif
    return vec3(supply, u_evaporation, drain);
}

// Cell c's record as the last substep left it, what was taken cleared where it was added since.
vec4 cycle_record(ivec2 c) {
    vec4 rec = texelFetch(u_record, c, 0);
    return u_fresh ? vec4(0.0, 0.0, rec.zw) : rec;
}

// Cell c's column of depth h, as the substep's move left it with rounding error `move_error`
// (moved_error()), through the substep's cycle (cycled()); its record brought up to date as
// common/cycle.glsl's cycle_step() does: what it took added, what it is owed carried.
float cycle_step(float h, float move_error, vec3 rates, inout vec4 rec) {
    vec2 owed = vec2(rec.z + move_error, rec.w);
    vec3 done = cycled(h, rates.x, rates.y, rates.z, owed);
    rec = vec4(rec.xy + done.yz, owed);
    return done.x;
}
#endif
