#version 410
#if GATHER == 2
#extension GL_ARB_texture_gather : require
#endif
// Which blocks of BLOCK x BLOCK cells a substep changed, for the sleeping tiles (hydro/water_fragment.py): a
// texel a block, 1 where a cell's water (FACES 0), or a face it stores (its left and bottom faces, HEX
// also its z face toward (x - 1, y + 1): hydro/reference/sleep.py's changed_cells) or with CYCLE its
// record (FACES 1), differs in any bit, -0 from 0 too, between the textures before and after the
// substep; else 0. The water runs over the awake tiles' blocks, the faces over those of the awake
// tiles whose water did not change: most that change, change their water. GATHER reads 2 x 2 texels at
// once (1: GLSL 4, 2: GL_ARB_texture_gather), which a CPU rasteriser reads much faster than four
// texelFetch.
#include "fragment/grid.glsl"

#if FACES
uniform sampler2D u_flow_x, u_flow_x_before, u_flow_y, u_flow_y_before;
#else
uniform sampler2D u_water, u_water_before;
#endif
#if HEX && FACES
uniform sampler2D u_flow_z, u_flow_z_before;
#endif
#if CYCLE && FACES
uniform sampler2D u_record, u_record_before;
#endif
layout(location = 0) out float o_changed;

// The bits of the texels c + (0, 1), c + (1, 1), c + (1, 0) and c (textureGather's order).
uvec4 quad(sampler2D s, ivec2 c) {
#if GATHER
    return floatBitsToUint(textureGather(s, vec2(c + 1) / vec2(textureSize(s, 0))));
#else
    ivec2 last = textureSize(s, 0) - 1;
    return floatBitsToUint(vec4(texelFetch(s, min(c + ivec2(0, 1), last), 0).r,
                                texelFetch(s, min(c + ivec2(1, 1), last), 0).r,
                                texelFetch(s, min(c + ivec2(1, 0), last), 0).r, texelFetch(s, min(c, last), 0).r));
#endif
}

// Whether a texel of quad(before, c) and quad(after, c) that `keep` keeps differs.
bool differs(sampler2D after, sampler2D before, ivec2 c, uvec4 keep) {
    return any(notEqual(quad(after, c) & keep, quad(before, c) & keep));
}

void main() {
    ivec2 block = texel() * BLOCK;
    bool changed = false;
    for (int j = 0; j < BLOCK; j += 2) {
        for (int i = 0; i < BLOCK; i += 2) {
            ivec2 c = block + ivec2(i, j);
            // the cells of the quad from c inside the grid
            uvec4 keep = uvec4(bvec4(inside(c + ivec2(0, 1)), inside(c + ivec2(1, 1)), inside(c + ivec2(1, 0)),
                                     inside(c))) * 0xffffffffu;
#if FACES
            changed = changed || differs(u_flow_x, u_flow_x_before, c, keep)
                      || differs(u_flow_y, u_flow_y_before, c, keep);
#if HEX
            changed = changed || differs(u_flow_z, u_flow_z_before, c + ivec2(0, 1), keep);
#endif
#else
            changed = changed || differs(u_water, u_water_before, c, keep);
#endif
        }
    }
#if CYCLE && FACES
    ivec2 last = textureSize(u_record, 0) - 1;
    for (int k = 0; k < BLOCK * BLOCK; ++k) {
        ivec2 d = block + ivec2(k % BLOCK, k / BLOCK), c = min(d, last);
        changed = changed || inside(d) && any(notEqual(floatBitsToUint(texelFetch(u_record, c, 0)),
                                                       floatBitsToUint(texelFetch(u_record_before, c, 0))));
    }
#endif
    o_changed = changed ? 1.0 : 0.0;
}
