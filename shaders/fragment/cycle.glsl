// The water cycle's record in the fragment backend (hydro/water_fragment.py): the rates and their
// arithmetic are common/cycle.glsl's (cycle_rates(), cycle_step(); common/model.glsl includes it under
// CYCLE), each cell's record an rgba32f texture that the move pass reads and writes as a second render
// target, ping-ponged like the water. Needs fragment/grid.glsl.
#if CYCLE
// Each cell's record (common/cycle.glsl's): the depth evaporation and drains took since the stats
// passes last added them to the ledger (stats_cells.frag under TAKEN), and what the cycle owes the
// column. u_fresh: they were added since the record was written, so what was taken starts again at 0
// (the compute stats pass clears them in place; here nothing writes the record but the move).
uniform sampler2D u_record;
uniform bool u_fresh;

// Cell c's record as the last substep left it, what was taken cleared where it was added since.
vec4 cycle_record(ivec2 c) {
    vec4 rec = texelFetch(u_record, c, 0);
    return u_fresh ? vec4(0.0, 0.0, rec.zw) : rec;
}
#endif
