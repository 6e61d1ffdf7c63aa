#version 410
// Each cell's water-cycle record with what evaporation and drains took cleared (fragment/cycle.glsl's
// cycle_record() under u_fresh), once the stats passes added it to the ledger, into both record
// textures: the move pass rewrites only the awake tiles' records, and a sleeping tile's must not keep
// amounts already booked (hydro/water_fragment.py's sleeping tiles).
#include "fragment/grid.glsl"
#include "fragment/cycle.glsl"

layout(location = 0) out vec4 o_record;

void main() { o_record = cycle_record(texel()); }
