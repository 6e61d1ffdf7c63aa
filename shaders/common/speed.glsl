// The planner's bound on a column's speed (world units/s), which bounds the substep with inertia
// (hydro/params.py): the sum over the lattice's axes of the mean of its two faces' velocities.
#define SPEED_DEPTH 0.05

// Whether a column h deep counts: films no deeper than SPEED_DEPTH do not (the model caps their
// momentum's speed), and a pass reads no flow of theirs.
bool has_speed(float h) { return h > SPEED_DEPTH; }

// The bound of a column h deep (has_speed) between faces `width` wide whose flows add up to `sums` per
// axis (x, y, HEX z; the square grid's z 0).
float speed_bound(vec3 sums, float h, float width) {
    float total = abs(sums.x) + abs(sums.y) + abs(sums.z);
    return 0.5 * total / (width * h);
}
