// The water model's arithmetic, each piece once (docs/design.md, "The model"). Every water kernel is
// a schedule that calls these functions; hydro/reference/water.py states each of them in float64.
// Needs PIPE_AREA_DEPTH, MANNING, INERTIA (and HEX, for the faces of a cell and the lattice's axes).
#include "common/boundary_table.glsl"

uniform float u_dt;                 // substep, s
uniform float u_cell_area;          // S
uniform float u_friction_factor;    // (1 - friction)^dt, worked out on the CPU
uniform float u_flow_gain;          // dt g / l times w (depth mode) or times the constant pipe area
uniform float u_max_face_depth;     // the deepest pipe the substep is stable for (params.stable_face_depth)
uniform float u_manning_gain;       // dt g n^2 / w (MANNING)
uniform float u_smoothing;          // 1 - theta of de Almeida et al. 2012, scaled to the substep (INERTIA)
uniform float u_advection_gain;     // dt / l, times 2/3 on the hex lattice (its axes' tight frame) (INERTIA)
uniform float u_face_width;         // w (INERTIA; erosion's speeds)
uniform float u_speed_cap;          // ADVECTIVE_COURANT l / dt: the fastest a face's momentum moves (INERTIA)

// A face's flow depth: the water above the higher bed, on the side of the higher surface (Bates et al.
// 2010), so a dry side or a step up in the bed narrows the pipe and a lake at rest stays still; capped
// at the depth the substep is stable for, so water deeper than planned moves slower, never unstably.
// Surfaces stand on their beds (eta = z + h, h >= 0), so it is never negative.
float face_depth(float eta_a, float eta_b, float z_a, float z_b) {
    return min(max(eta_a, eta_b) - max(z_a, z_b), u_max_face_depth);
}

// Manning's bed friction (Bates et al. 2010, implicit in the new flow): the divisor of a face's
// accelerated flow, 1 + dt g n^2 |q / w| / h^(7/3) for the flow q it had and its flow depth h.
float manning_divisor(float q, float depth) {
    return 1.0 + u_manning_gain * abs(q) / pow(max(depth, 1e-6), 7.0 / 3.0);
}

// The pipe flow from column a to b: q <- q (1 - f)^dt + dt g A / l (eta_a - eta_b), A = depth * w (or
// the constant area), divided by Manning's divisor where MANNING.
float pipe_flow(float q, float depth, float eta_a, float eta_b) {
#if PIPE_AREA_DEPTH
    float flow = q * u_friction_factor + (u_flow_gain * depth) * (eta_a - eta_b);
#else
    float flow = q * u_friction_factor + u_flow_gain * (eta_a - eta_b);
#endif
#if MANNING
    flow /= manning_divisor(q, depth);
#endif
    return flow;
}

#if INERTIA
// Inertia: the face flows carry momentum (docs/design.md, "Inertia"). A face's momentum and its
// pressure work with the mean of its two columns' depths (so the pressure term conserves momentum and
// shocks run at the right speed), no more than its flow depth.
float inertia_depth(float h_a, float h_b, float depth) {
    precise float mean = 0.5 * (h_a + h_b);
    return min(mean, depth);
}

// A face's velocity: its flow over w times its inertia depth; 0 below MIN_DEPTH (a film carries no
// momentum), and no faster than u_speed_cap, so upwind advection is stable whatever a thin film's flow
// (water pouring off a step can run far faster than its depth tells).
#define MIN_DEPTH 1e-4
float face_velocity(float q, float depth) {
    precise float speed = q / (u_face_width * depth);
    return depth > MIN_DEPTH ? clamp(speed, -u_speed_cap, u_speed_cap) : 0.0;
}

// The inertia depth of a face between columns a and b, each (depth, bed).
float columns_depth(vec2 a, vec2 b) {
    return inertia_depth(a.x, b.x, face_depth(a.y + a.x, b.y + b.x, a.y, b.y));
}

// The velocity of a face of flow q between columns a and b, each (depth, bed), where a_in and b_in say
// which lie in the grid: a boundary face takes its inside column for both sides, a face with no cell in
// the grid has none.
float columns_velocity(float q, vec2 a, vec2 b, bool a_in, bool b_in) {
    if (!(a_in || b_in)) return 0.0;
    return face_velocity(q, columns_depth(a_in ? a : b, b_in ? b : a));
}

// The momentum a side of a face's control volume passes on: the mean of the two flows across it
// (volume rate) times the velocity upwind of it, `behind` where the mean runs forward.
float momentum_flux(float q_1, float q_2, float u_behind, float u_ahead) {
    precise float across = 0.5 * (q_1 + q_2);
    precise float flux = across * (across > 0.0 ? u_behind : u_ahead);
    return flux;
}

// What a face needs of its neighbours: along its axis the faces before and after it (their flows and
// velocities); across it, per other axis of the lattice (one on the square grid, two on the hex
// lattice), the flows leaving and entering its two cells (a, b) along that axis and the velocities of
// its parallel faces behind and ahead.
struct Across { float out_a, out_b, in_a, in_b, u_behind, u_ahead; };
struct FaceStencil {
    float q, q_before, q_after;
    float u, u_before, u_after;
    Across first;
#if HEX
    Across second;
#endif
};

// The momentum the sides a face shares with its parallel faces along one other axis pass on, ahead less
// behind, for a face of velocity u.
float across_flux(Across c, float u) {
    precise float net = momentum_flux(c.out_a, c.out_b, u, c.u_ahead) - momentum_flux(c.in_a, c.in_b, c.u_behind, u);
    return net;
}

// The momentum a face's flow loses to advection over the substep (volume rate): the flux form on the
// staggered grid (Stelling & Duinmeijer 2003), along its axis through its two cells, across it through
// the sides it shares with its parallel faces; upwind.
float advected(FaceStencil f) {
    precise float total = momentum_flux(f.q, f.q_after, f.u, f.u_after) - momentum_flux(f.q_before, f.q, f.u_before, f.u);
    total += across_flux(f.first, f.u);
#if HEX
    total += across_flux(f.second, f.u);
#endif
    precise float lost = u_advection_gain * total;
    return lost;
}

// The lattice's axes: the cell offset across a face's positive direction (x, y, hex z); the cells a
// face of axis k at texel (face index) f joins, a = f + from_cell(k) -> b = a + axis(k); the faces
// (texel offsets from a cell) entering and leaving a cell along axis m; the other axes of axis k.
ivec2 axis(int k) { return k == 0 ? ivec2(1, 0) : k == 1 ? ivec2(0, 1) : ivec2(-1, 1); }
ivec2 from_cell(int k) { return k == 0 ? ivec2(-1, 0) : ivec2(0, -1); }
ivec2 entering_face(int m) { return m == 2 ? ivec2(1, 0) : ivec2(0); }
ivec2 leaving_face(int m) { return m == 0 ? ivec2(1, 0) : ivec2(0, 1); }
int first_across(int k) { return k == 0 ? 1 : 0; }
int second_across(int k) { return k == 2 ? 1 : 2; }

// The flow across a face's axis at the face, along another axis of the lattice: the mean of the four
// flows of that axis around it (Across's).
float across_flow(Across c) {
    precise float mean = 0.25 * ((c.out_a + c.out_b) + (c.in_a + c.in_b));
    return mean;
}

// The flow the water at a face carries whatever its direction, for Manning's friction: the face's own
// flow and those across it put together by the lattice's frame (square: orthogonal; hex: a tight frame,
// |v|^2 = 2/3 sum of (v.e_k)^2), so the friction acts on the water's speed, alike in every direction,
// not on the one component of it the face carries (docs/design.md, "Bed friction").
float carried_flow(FaceStencil f) {
    float first = across_flow(f.first);
    precise float sum = f.q * f.q + first * first;
#if HEX
    float second = across_flow(f.second);
    sum += second * second;
    precise float frame = (2.0 / 3.0) * sum;
    return sqrt(frame);
#else
    return sqrt(sum);
#endif
}

// The pipe flow with inertia: the flow smoothed against the grid-scale ripple (de Almeida et al. 2012:
// (1 - s) q + s / 2 (q_before + q_after)), less what advection carried away, accelerated by the
// surface difference over the inertia depth, divided by Manning's divisor of the flow it carried.
float inertial_flow(FaceStencil f, float depth, float eta_a, float eta_b) {
    precise float smoothed = (1.0 - u_smoothing) * f.q + 0.5 * u_smoothing * (f.q_before + f.q_after);
#if PIPE_AREA_DEPTH
    precise float flow = smoothed * u_friction_factor - advected(f) + (u_flow_gain * depth) * (eta_a - eta_b);
#else
    precise float flow = smoothed * u_friction_factor - advected(f) + u_flow_gain * (eta_a - eta_b);
#endif
#if MANNING
    flow /= manning_divisor(carried_flow(f), depth);
#endif
    return flow;
}
#endif

// The same for columns of surface eta and bed z.
float surface_flow(float q, float eta_a, float eta_b, float z_a, float z_b) {
    return pipe_flow(q, face_depth(eta_a, eta_b, z_a, z_b), eta_a, eta_b);
}

// The same for columns of bed z and depth h.
float interior_flow(float q, float z_a, float h_a, float z_b, float h_b) {
    return surface_flow(q, z_a + h_a, z_b + h_b, z_a, z_b);
}

// The boundary face rule: the flow of a face on the grid's edge whose inside cell has bed z and
// surface eta, by its table entry; `enters` when positive flow points into the grid. Wall 0; inflow
// and outflow their fixed rate; level a pipe to an outside surface standing on the inside cell's bed.
float boundary_face_flow(float q, BoundaryFace face, bool enters, float z, float eta) {
    float sign_in = enters ? 1.0 : -1.0;
    if (face.kind == BC_INFLOW) return sign_in * face.value;
    if (face.kind == BC_OUTFLOW) return -sign_in * face.value;
    if (face.kind == BC_LEVEL)
        return pipe_flow(q, face_depth(face.value, eta, z, z), sign_in * face.value, sign_in * eta);
    return 0.0;
}

// The accelerated flow of face from -> to whose columns hold (z_a, h_a) and (z_b, h_b), either of which
// may lie outside the grid (any values there): a pipe between two cells, a boundary face (table entry
// b), or no face at all (0: the hex lattice's unused corner faces).
float face_flow(float q, bool from_in, bool to_in, int b, float z_a, float h_a, float z_b, float h_b) {
    if (from_in && to_in) return interior_flow(q, z_a, h_a, z_b, h_b);
    if (b < 0 || !(from_in || to_in)) return 0.0;
    // an entry is copied to a local first: NVIDIA's compiler takes no readonly buffer member as a
    // function's argument (boundary_entry: the table's storage buffer, or the fragment backend's texture)
    BoundaryFace face = boundary_entry(b);
    return to_in ? boundary_face_flow(q, face, true, z_b, z_b + h_b)
                 : boundary_face_flow(q, face, false, z_a, z_a + h_a);
}

// The faces of cell (x, y): flow_x [y, x] and [y, x+1], flow_y [y, x] and [y+1, x]; hex also
// flow_z [y, x+1] (from (x+1, y-1) into the cell) and [y+1, x] (from the cell to (x-1, y+1)).
struct Faces {
    float left, right, bottom, top;
#if HEX
    float z_in, z_out;
#endif
};

// The volume rate a cell sends out.
float outgoing(Faces f) {
    float total = max(-f.left, 0.0) + max(f.right, 0.0) + max(-f.bottom, 0.0) + max(f.top, 0.0);
#if HEX
    total += max(-f.z_in, 0.0) + max(f.z_out, 0.0);
#endif
    return total;
}

// The outflow scale (Mei et al. 2007): K = min(1, h S / (dt * outgoing)), the share of its outgoing
// flows a cell can afford. Through a reciprocal, with no branch (docs/design.md, "Kernels"). K lies in
// [+0, 1]: an outflow below the smallest normal float counts as that, and abs() gives a depth of -0.0
// (which the depth checks let through) K = +0, so scaling keeps a flowless face's sign of zero.
float outflow_scale(float h, float out_rate) {
    float out_volume = max(out_rate * u_dt, 1.17549435e-38);
    float held = abs(h) * u_cell_area;
    return min(held * (1.0 / out_volume), 1.0);
}

// A face's flow scaled by the outflow scale of its upwind cell: k_from where it flows from -> to, else
// k_to; a cell outside the grid has K = 1. Each face is outgoing for one cell only, so no cell sends out
// more than it holds, and what one cell loses its neighbour gains.
float upwind_scaled(float q, float k_from, float k_to) {
    precise float scaled = q * (q > 0.0 ? k_from : k_to);
    return scaled;
}

// Sum in - sum out. `precise` keeps this order and the faces' values as they are (no multiply of the
// scaling fused into the sum), so every kernel moves a column to the same bits.
float net_inflow(Faces f) {
    precise float net = f.left - f.right + f.bottom - f.top;
#if HEX
    net += f.z_in - f.z_out;
#endif
    return net;
}

// The column update, h + rate * net with rate = dt / S (move_rate()), clamped at 0 against a last-bit
// rounding residue (the outflow scale keeps h >= 0). Flux form: water is conserved to rounding.
float move_rate() { return u_dt / u_cell_area; }

float moved(float h, float rate, float net) {
    precise float change = rate * net;
    precise float after = h + change;
    return max(after, 0.0);
}

// The rounding error of float sum s = a + b (Knuth's TwoSum): s + error is a + b exactly.
float sum_error(float a, float b, float s) {
    precise float b_part = s - a;
    precise float error = (a - (s - b_part)) + (b - b_part);
    return error;
}

// What moved(h, rate, net) = `after` lost to rounding, the clamp included: after + error is h + the
// float rate * net exactly. With the water cycle on, the column is owed it (cycled()).
float moved_error(float h, float rate, float net, float after) {
    precise float change = rate * net;
    precise float sum = h + change;
    precise float error = sum_error(h, change, sum) + (sum - after);
    return error;
}

// The water cycle over a substep, after the move (docs/design.md, "The water cycle"): rain and springs
// add `supply`, then evaporation takes up to `evaporation` and drains up to `drain` (each m/s of
// depth), never more than the column holds. A float32 column cannot take a change below half its last
// bit (2e-7 m of rain rounds away on a 10 m lake): what rounding kept from the column is owed to it and
// added at the next substep, so over time it gets its rates to a bit. `owed` (supply, evaporation)
// carries it: the supply's exactly, with the move's (moved_error) added by the caller, so that a
// column holds what its flows and rates brought, less what it is owed, and the water equals its
// ledger to the rounding of the amounts moved. Returns (depth, evaporated, drained): each taken
// amount is the float difference of the column before and after it is taken, exact by Sterbenz's
// lemma, so the ledger books what the column lost.
vec3 cycled(float h, float supply, float evaporation, float drain, inout vec2 owed) {
    precise float rained = u_dt * supply;
    precise float fresh = h + rained;
    precise float sum = fresh + owed.x;
    precise float wet = max(sum, 0.0);          // what is owed may be negative: no more than is there
    owed.x = sum_error(h, rained, fresh) + sum_error(fresh, owed.x, sum) + (sum - wet);
    precise float demand = owed.y + u_dt * evaporation;
    precise float left = wet - min(wet, demand);
    precise float evaporated = wet - left;
    owed.y = left > 0.0 ? demand - evaporated : 0.0;         // a dry column owes the air nothing
    precise float after = left - min(left, u_dt * drain);
    precise float drained = left - after;
    return vec3(after, evaporated, drained);
}

// What a boundary face carried into the grid this substep, as a volume rate: q where positive flow
// enters, else -q.
float entering(float q, bool enters) { return enters ? q : -q; }

#include "common/cycle.glsl"
