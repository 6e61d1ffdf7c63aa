// The ledger of the blocked kernel (blocked_tile.comp, blocked_climb.comp, pack.comp): what crossed
// each boundary face.
// The owner of a boundary face stores the flow that crossed it at each substep of a launch in one of
// BOOK_SLOTS floats (a plain store: the substep waits on no load of the double ledger entry), and
// whoever owns the face at the next launch, or the unpack at the end of the call, adds them to the
// ledger in substep order: the same double sums, in the same order, as booking each substep in place.
// A launch of fewer substeps than BOOK_SLOTS stores 0 in the slots it does not take, and the unpack
// clears every slot it folds, so a fold always adds BOOK_SLOTS values, the extra ones +0.0: adding
// +0.0 leaves a ledger entry's bits as they are (an entry is never -0.0: it starts at +0.0, and
// +0.0 + -0.0 is +0.0).
// Storing beats booking in place on grids with open sides (docs/benchmarks-log.md).
#include "common/model.glsl"
#include "common/ledger.glsl"

layout(std430, binding = B_BOOKED) restrict buffer Booked { float u_booked[]; };    // BOOK_SLOTS a face

// Whether the owner of face bi (from -> to) books it: a boundary face with a cell in the grid.
bool booked_face(ivec2 from, ivec2 to, int bi) { return bi >= 0 && (inside(from) || inside(to)); }

// What the last launch stored at boundary face bi, added to its ledger entry in order; the face's
// owner calls this. `clear` zeroes the slots (the unpack, for the next call).
void fold_face(int bi, bool clear) {
    double sum = u_ledger[bi];
    for (int s = 0; s < BOOK_SLOTS; s++) {
        sum += booked_volume(u_dt, u_booked[bi * BOOK_SLOTS + s]);
        if (clear) u_booked[bi * BOOK_SLOTS + s] = 0.0;
    }
    u_ledger[bi] = sum;
}

// The same for face bi (from -> to) where its owner books it.
void fold_booked(ivec2 from, ivec2 to, int bi, bool clear) {
    if (booked_face(from, to, bi)) fold_face(bi, clear);
}

#ifdef STEPS
// Stores what crossed boundary face bi into the grid (volume rate) at substep s of a launch of STEPS;
// its owner calls this. At the launch's last substep it stores 0 in the slots of the substeps a
// launch of fewer does not take.
void store_booked(int bi, int s, float rate_in) {
    u_booked[bi * BOOK_SLOTS + s] = rate_in;
    if (s == STEPS - 1)
        for (int r = STEPS; r < BOOK_SLOTS; r++) u_booked[bi * BOOK_SLOTS + r] = 0.0;
}
#endif
