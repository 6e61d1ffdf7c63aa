#version 410
// Move each column by the net flow of its scaled faces (common/model.glsl's net_inflow, moved); with
// the water cycle on (CYCLE, fragment/cycle.glsl), then through the substep's cycle (cycled()),
// owed what the move lost to rounding (moved_error()), its record written to a second render target.
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/cell_inputs.glsl"
#include "fragment/cycle.glsl"

layout(location = 0) out float o_depth;
#if CYCLE
layout(location = 1) out vec4 o_record;
#endif

void main() {
    ivec2 c = texel();
    float before = face_at(u_water, c), rate = move_rate(), net = net_inflow(faces_of(c));
    float h = moved(before, rate, net);
#if CYCLE
    vec4 rec = cycle_record(c);
    h = cycle_step(h, moved_error(before, rate, net, h), cycle_rates(c), rec);
    o_record = rec;
#endif
    o_depth = h;
}
