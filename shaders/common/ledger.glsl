// The ledger: the volume that crossed each boundary face into the grid, a double slot per boundary
// table entry (the last slot: what drains took). One writer per slot, so no atomics.
layout(std430, binding = B_LEDGER) restrict buffer Ledger { double u_ledger[]; };

// The volume a boundary face carried into the grid over a substep of dt at volume rate `rate_in`
// (common/model.glsl's entering()).
double booked_volume(float dt, float rate_in) { return double(dt) * double(rate_in); }

void book(int b, float dt, float rate_in) { u_ledger[b] += booked_volume(dt, rate_in); }
