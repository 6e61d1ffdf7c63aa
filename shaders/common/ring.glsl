// The ring of tiles around the blocked kernel's interior rectangle (hydro/water_plan.py, TileLayout),
// one workgroup each, numbered along rows: u_ring_x = (tiles per row, first and last interior column),
// u_ring_y = (first and last interior row, tiles in the ring). Shared by blocked_tile.comp's general
// program and blocked_climb.comp's EDGES one.
uniform ivec3 u_ring_x;
uniform ivec3 u_ring_y;

// The tile (column, row) of ring workgroup k < u_ring_y.z.
ivec2 ring_tile(int k) {
    int tiles_x = u_ring_x.x, first_x = u_ring_x.y, last_x = u_ring_x.z;
    int first_y = u_ring_y.x, last_y = u_ring_y.y;
    int below = first_y * tiles_x;                          // whole rows below the rectangle
    if (k < below) return ivec2(k % tiles_x, k / tiles_x);
    k -= below;
    int side = first_x + tiles_x - 1 - last_x;              // tiles beside it in each of its rows
    int beside = (last_y - first_y + 1) * side;
    if (k < beside) {
        int j = k % side;
        return ivec2(j < first_x ? j : last_x + 1 + j - first_x, first_y + k / side);
    }
    k -= beside;                                            // whole rows above it
    return ivec2(k % tiles_x, last_y + 1 + k / tiles_x);
}

// This workgroup's ring workgroup number, or -1 past the ring (the last row of workgroups is not full).
int ring_workgroup() {
    int k = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    return k < u_ring_y.z ? k : -1;
}
