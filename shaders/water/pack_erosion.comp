#version 430
// ErodingBlocked._pack / _unpack: the blocked kernel's erosion state (blocked_tile.comp, EROSION) at
// texel (x, y) + MARGIN, laid out as the water's state (pack.comp); the launches read no texel outside
// the grid's cells. Hex: one rgba32f texel a cell, (sediment, what rounding owes the bed, bed, bedrock).
// Square: one rg32f texel, (sediment, owed): the water's texels hold the beds and the launches read the
// bedrock from the grid's own texture.
// UNPACK 0: the grid's sediment, owed (hex: terrain and bedrock) into the state, before the first
// substep of a call. UNPACK 1: the state back into the grid's sediment, owed and terrain (square: from
// the water's last state, at B_EROSION_WATER), after the last.
#include "common/grid.glsl"
#include "common/bindings.glsl"

#if HEX
#define STATE_FORMAT rgba32f
#else
#define STATE_FORMAT rg32f
#endif
#if UNPACK
layout(binding = B_EROSION_IN, STATE_FORMAT) uniform restrict readonly image2D u_state;
#if !HEX
layout(binding = B_EROSION_WATER, rgba32f) uniform restrict readonly image2D u_water_state;
#endif
#define CELLS restrict writeonly
#else
layout(binding = B_EROSION_OUT, STATE_FORMAT) uniform restrict writeonly image2D u_state;
#define CELLS restrict readonly
#endif
layout(binding = B_SEDIMENT, r32f) uniform CELLS image2D u_sediment;
layout(binding = B_TERRAIN_OWED, r32f) uniform CELLS image2D u_owed;
#if UNPACK || HEX
layout(binding = B_TERRAIN, r32f) uniform CELLS image2D u_terrain;
#endif
#if !UNPACK && HEX
layout(binding = B_BEDROCK) uniform sampler2D u_bedrock;
#endif

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
#if UNPACK
    vec4 e = imageLoad(u_state, c + MARGIN);
    imageStore(u_sediment, c, vec4(e.x));
    imageStore(u_owed, c, vec4(e.y));
#if HEX
    imageStore(u_terrain, c, vec4(e.z));
#else
    imageStore(u_terrain, c, vec4(imageLoad(u_water_state, c + MARGIN).w));
#endif
#elif HEX
    imageStore(u_state, c + MARGIN, vec4(imageLoad(u_sediment, c).r, imageLoad(u_owed, c).r,
                                         imageLoad(u_terrain, c).r, texelFetch(u_bedrock, c, 0).r));
#else
    imageStore(u_state, c + MARGIN, vec4(imageLoad(u_sediment, c).r, imageLoad(u_owed, c).r, 0.0, 0.0));
#endif
}
