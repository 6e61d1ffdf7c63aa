#version 410
// _FragmentGauges.hook (hydro/water_fragment.py), the fragment backend's water/gauge.comp: after each
// substep, what crossed each gauge's faces, the sum of their scaled flows times their signs times the
// substep's dt, added to the gauge's volume since it was added and to its volume over the call (which
// the call's first substep starts again). One texel a gauge slot, its faces summed in their order as a
// float pair, so the sums keep about twice float's precision and never depend on timing.
#include "common/model.glsl"
#include "fragment/grid.glsl"
#include "fragment/pairs.glsl"

uniform sampler2D u_sums;           // per slot (since added hi, lo, over the call hi, lo), before this substep
uniform isampler2D u_ranges;        // per slot its faces' (first, count)
uniform isampler2D u_faces;         // per face (array 0 x, 1 y, 2 z; column; row; sign), rows of the texture's width
// the scaled flows
#include "fragment/flows.glsl"
uniform bool u_first;               // the call's first substep
layout(location = 0) out vec4 o_sums;

void main() {
    ivec2 t = texel();
    vec4 sums = texelFetch(u_sums, t, 0);
    ivec2 range = texelFetch(u_ranges, t, 0).xy;
    int row = textureSize(u_faces, 0).x;
    vec2 rate = vec2(0.0);          // sum of sign * q, volume/s
    for (int k = range.x; k < range.x + range.y; ++k) {
        ivec4 face = texelFetch(u_faces, ivec2(k % row, k / row), 0);
        precise float term = float(face.w) * flow_at(face.x, face.yz);     // exact: the sign is +-1
        precise float hi = rate.x + term;
        precise float lo = rate.y + sum_error(rate.x, term, hi);
        rate = vec2(hi, lo);
    }
    precise float product = rate.x * u_dt;
    precise float error = product_error(rate.x, u_dt, product) + rate.y * u_dt;
    vec2 crossed = renormalised(product, error);
    o_sums = vec4(pair_sum(sums.xy, crossed), u_first ? crossed : pair_sum(sums.zw, crossed));
}
