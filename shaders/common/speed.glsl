// The planner's bound on a column's speed (world units/s), which bounds the substep with inertia
// (hydro/params.py): the sum over the lattice's axes of the mean of its two faces' velocities, for a
// column h deep between faces `width` wide whose flows add up to `sums` per axis (x, y, HEX z; the
// square grid's z 0). Films no deeper than SPEED_DEPTH count 0: the model caps their momentum's speed.
#define SPEED_DEPTH 0.05

float speed_bound(vec3 sums, float h, float width) {
    if (h <= SPEED_DEPTH) return 0.0;
    float total = abs(sums.x) + abs(sums.y) + abs(sums.z);
    return 0.5 * total / (width * h);
}
