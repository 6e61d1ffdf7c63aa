// The erosion model's arithmetic, each piece once (docs/design.md, "Erosion"); the passes
// water/erode_mix.comp, water/erode.comp and water/slump.comp are its schedule after each water
// substep of the cell-wise kernel, blocked_tile.comp's EROSION phases that of the blocked kernel, and
// hydro/reference/erosion.py states each function in float64. Needs common/model.glsl.
uniform float u_capacity;           // s: sediment carried per unit speed and slope
uniform float u_dissolve_rate;      // min(dissolve dt, 1)
uniform float u_deposit_rate;       // min(deposit dt, 1)
uniform float u_talus_drop;         // l tan(talus): the height difference a face's slope may hold
uniform float u_slump_rate;         // min(slump dt, 1 / faces a cell)

#define SLOPE_FLOOR 0.01            // the slope a flat bed counts for
#define NO_FLOOR -3.0e38            // the bedrock where none is set

// A cell's concentration: its sediment over the water that stayed and the water that left it this
// substep (volume rate out_rate), so what its faces carry out is never more than it holds; 0 where
// there is neither.
float concentration(float s, float h, float out_rate) {
    precise float mixed = h + out_rate * (u_dt / u_cell_area);
    return mixed > 0.0 ? s / mixed : 0.0;
}

// The sediment a face carries (volume rate): its flow times the concentration upwind.
float sediment_flow(float q, float c_from, float c_to) {
    precise float g = q * (q > 0.0 ? c_from : c_to);
    return g;
}

// sin of the bed's slope from its gradient.
float slope_sine(vec2 gradient) {
    float g2 = dot(gradient, gradient);
    return sqrt(g2 / (1.0 + g2));
}

// The sediment water of depth h moving at `speed` on a bed of slope sine `sine` can carry, as settled
// height: capacity |v| max(sin a, SLOPE_FLOOR), no more than its depth.
float transport_capacity(float speed, float sine, float h) {
    return min(u_capacity * speed * max(sine, SLOPE_FLOOR), h);
}

// What the bed gives the water over the substep (negative: takes from it): u_dissolve_rate of the
// shortfall below capacity, never below the bedrock, or u_deposit_rate of the excess.
float exchanged(float s, float cap, float z, float rock) {
    if (s < cap) return min(u_dissolve_rate * (cap - s), max(z - rock, 0.0));
    return -(u_deposit_rate * (s - cap));
}

// The material a face carries from cell a to cell b (negative: b to a), as height: u_slump_rate of
// half the height difference beyond u_talus_drop, from the higher, no more than its share (1 /
// `faces`) of what it has above its bedrock. Both cells work it out from the same values.
float slump_flow(float z_a, float z_b, float rock_a, float rock_b, float faces) {
    precise float d = z_a - z_b;
    precise float excess = abs(d) - u_talus_drop;
    if (!(excess > 0.0)) return 0.0;
    precise float t = u_slump_rate * (0.5 * excess);
    precise float spare = max(d > 0.0 ? z_a - rock_a : z_b - rock_b, 0.0) / faces;
    return sign(d) * min(t, spare);
}

// A terrain height z changed by `change`, what was owed to it from earlier substeps (`owed`, updated)
// included: float32 heights drop changes below half their last bit (1e-6 on a 100 m bed), so
// rounding's part is owed and added next time, and material is conserved to the rounding of the
// amounts moved.
float terrain_changed(float z, float change, inout float owed) {
    precise float want = change + owed;
    precise float after = z + want;
    owed = sum_error(change, owed, want) + sum_error(z, want, after);
    return after;
}

#ifdef BED_AT
// The bed's gradient at c, bed z there, cells `span` / 2 apart (central differences; HEX: the
// least-squares gradient of the three axes), for passes that read a neighbour's bed as BED_AT(c, own)
// (the cell's own where the neighbour is off the grid): water/erode.comp, fragment/erode.frag.
vec2 bed_gradient(ivec2 c, float z, float pipe_length) {
    float span = 2.0 * pipe_length;
    float dx = (BED_AT(c + ivec2(1, 0), z) - BED_AT(c - ivec2(1, 0), z)) / span;
    float dy = (BED_AT(c + ivec2(0, 1), z) - BED_AT(c - ivec2(0, 1), z)) / span;
#if HEX
    float dz = (BED_AT(c + ivec2(-1, 1), z) - BED_AT(c + ivec2(1, -1), z)) / span;
    return (2.0 / 3.0) * vec2(dx + 0.5 * dy - 0.5 * dz, 0.8660254037844386 * (dy + dz));
#else
    return vec2(dx, dy);
#endif
}

// A cell's suspended sediment s carried by its faces' sediment flows g (sediment_flow's) over the
// substep, then exchanged with its bed z above bedrock `rock` by water of depth h moving at `velocity`:
// (bed, sediment) after, what rounding owes the bed in `owed`. Cells `pipe_length` apart.
vec2 eroded_cell(float s, Faces g, ivec2 c, float h, vec2 velocity, float z, float rock, inout float owed,
                 float pipe_length) {
    float suspended = moved(s, move_rate(), net_inflow(g));
    float cap = transport_capacity(length(velocity), slope_sine(bed_gradient(c, z, pipe_length)), h);
    float e = exchanged(suspended, cap, z, rock);
    return vec2(terrain_changed(z, -e, owed), suspended + e);
}
#endif

#ifdef ERODED_AT
// What slumps across the face from -> to of a cell with `faces` faces, for passes that read the bed
// erosion left and the bedrock as ERODED_AT(c), BEDROCK_AT(c); nothing where either cell is off the
// grid: water/slump.comp, fragment/slump.frag.
float slumped(ivec2 from, ivec2 to, float faces) {
    if (!(inside(from) && inside(to))) return 0.0;
    return slump_flow(ERODED_AT(from), ERODED_AT(to), BEDROCK_AT(from), BEDROCK_AT(to), faces);
}

#if HEX
#define FACES 6.0
#else
#define FACES 4.0
#endif
// What slumps across each face of cell c (of FACES), as model.glsl's Faces.
Faces slumped_faces(ivec2 c) {
    ivec2 dx = ivec2(1, 0), dy = ivec2(0, 1);
    Faces t;
    t.left = slumped(c - dx, c, FACES);
    t.right = slumped(c, c + dx, FACES);
    t.bottom = slumped(c - dy, c, FACES);
    t.top = slumped(c, c + dy, FACES);
#if HEX
    t.z_in = slumped(c + dx - dy, c, FACES);
    t.z_out = slumped(c, c - dx + dy, FACES);
#endif
    return t;
}
#endif
