// The planning record of the water state (hydro/water_fragment.py's _reduce), reduced on the GPU level by
// level: (the sum of the depths as a float pair hi + lo, fragment/pairs.glsl; the deepest water; the
// lowest bed on the grid's edge, where level faces are). Each texel of a level combines a block of
// STATS_BLOCK x STATS_BLOCK texels of the level before (stats_cells.frag: of cells) in a fixed order,
// so the same water gives the same bits; the last level is one texel.
// TAKEN (the water cycle's records are added to the ledger): a second render target, what evaporation
// and drains took (fragment/cycle.glsl's record), each summed as a float pair the same way:
// (evaporated hi, lo, drained hi, lo) depth; book_cycle.frag adds the last level's to the ledger.
// SPEED (inertia: the planner bounds the substep by the fastest water): a render target after those, the
// fastest water (water/stats.comp's max_speed: each cell's sum over the axes of its mean face velocity,
// in cells deeper than SPEED_DEPTH), its maximum over the block.
#include "fragment/grid.glsl"
#include "fragment/pairs.glsl"

#define NO_BED 3.0e38               // above every bed (beds are finite float32)
layout(location = 0) out vec4 o_record;
#if TAKEN
layout(location = 1) out vec4 o_taken;
#endif
#if SPEED && TAKEN
layout(location = 2) out float o_speed;
#elif SPEED
layout(location = 1) out float o_speed;
#endif

// The first texel of the block this texel combines.
ivec2 block_first() { return texel() * STATS_BLOCK; }

// Texel c of a level (or cell c) of `size` texels, clamped into it; `in_range` says whether it was in.
ivec2 clamped(ivec2 c, ivec2 size, out bool in_range) {
    in_range = all(lessThan(c, size));
    return min(c, size - 1);
}
