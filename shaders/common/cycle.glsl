// The water cycle's inputs, and each cell's record of what it took and is owed (hydro/water_cycle.py); its arithmetic is
// common/model.glsl's cycled() (which includes this file at its end). Everything here is under CYCLE (off: the kernels have no cycle at all);
// RAIN_FIELD: rain is a per-cell field; SOURCES: the grid has springs or drains.
#if CYCLE
uniform float u_rain;               // m/s of depth over every cell
uniform float u_evaporation;        // m/s of depth, where water is
// FRAGMENT (the GL 4.1 passes, shaders/fragment/): samplers bound by name, and each cell's record kept in
// a texture by fragment/cycle.glsl in place of the storage buffers below
#ifdef FRAGMENT
#define CYCLE_TEXTURE(unit) uniform sampler2D
#else
#define CYCLE_TEXTURE(unit) layout(binding = unit) uniform sampler2D
#endif
#if RAIN_FIELD
CYCLE_TEXTURE(B_RAIN_FIELD) u_rain_field;       // m/s a cell
#endif
#if SOURCES
CYCLE_TEXTURE(B_SOURCES) u_sources;             // (springs, drains) m/s a cell
#endif
// Each cell's record, an rgba32f texel of a texture the grid's size (which any grid fits, unlike a
// storage buffer past GL_MAX_SHADER_STORAGE_BLOCK_SIZE): the depth it lost to evaporation and to
// drains since the stats pass last added them to the ledger (water/stats.comp, which clears them), and
// what the cycle owes it (cycled()'s `owed`). A dispatch fetches the records at texture unit
// B_CYCLE_RECORD and a cell's owner writes its record at image unit B_CYCLE_RECORD_OUT: another tile's
// halo may read the cell's record while the owner updates it, so kernels with halos take two textures
// in turn (the cell-wise kernel, one bound at both: each invocation reads its cells before it writes
// them, and reads no other's). A pass that reads no record (the boundary faces' pass) defines
// NO_CYCLE_RECORDS first.
#if !defined(FRAGMENT) && !defined(NO_CYCLE_RECORDS)
#define CYCLE_RECORDS 1
layout(binding = B_CYCLE_RECORD) uniform sampler2D u_cycle_record;
layout(binding = B_CYCLE_RECORD_OUT, rgba32f) uniform writeonly image2D u_cycle_record_out;
#endif

// Cell c's rates, (supply, evaporation, drain) m/s of depth; 0 outside the grid (ghost columns).
vec3 cycle_rates(ivec2 c) {
#ifndef FRAGMENT
    if (!inside(c)) return vec3(0.0);       // a fragment pass writes cells of the grid alone
#endif
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


// Cell c's column of depth h, as the substep's move left it with rounding error `move_error`
// (moved_error()), through the substep's cycle; its record `rec` (as cycle_record() read it) brought up
// to date: what it took added, what it is owed carried.
float cycle_step(float h, float move_error, vec3 rates, inout vec4 rec) {
    vec2 owed = vec2(rec.z + move_error, rec.w);
    vec3 done = cycled(h, rates.x, rates.y, rates.z, owed);
    rec = vec4(rec.xy + done.yz, owed);
    return done.x;
}

#ifdef CYCLE_RECORDS
vec4 cycle_record(ivec2 c) { return inside(c) ? texelFetch(u_cycle_record, c, 0) : vec4(0.0); }

void store_record(ivec2 c, vec4 rec) { imageStore(u_cycle_record_out, c, rec); }

// The same on the record in memory, where `owner` (the cell's one owner, once a substep); a copy of
// the cell's column elsewhere (another tile's halo) takes the same step without writing it.
float cycle_cell(ivec2 c, float h, float move_error, bool owner) {
    vec4 rec = cycle_record(c);
    h = cycle_step(h, move_error, cycle_rates(c), rec);
    if (owner) store_record(c, rec);
    return h;
}
#endif
#endif
