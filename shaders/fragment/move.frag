#version 410
// Scale each cell's accelerated faces by their upwind cells' outflow scale (fragment/scaled.glsl) and
// move its column by their net flow (common/model.glsl's net_inflow, moved); with the water cycle on
// (CYCLE, fragment/cycle.glsl), then through the substep's cycle (cycled()), owed what the move lost to
// rounding (moved_error()). Texel t writes cell t's depth, the scaled faces it holds in the flows'
// layout (a render target an axis: the flows the next substep accelerates, that the ledger books and a
// game reads; a face is scaled alike by both its cells, hence to the same bits) and with CYCLE the
// cell's record. The targets are a texel wider and taller than the grid, for the faces on its right
// and top edges; there the depth and the record are 0.
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/scaled.glsl"
#include "fragment/cycle.glsl"

float face_value(int k, ivec2 f) { return scaled_face(k, f); }
#include "fragment/faces.glsl"

uniform sampler2D u_water;
layout(location = 0) out float o_depth;
layout(location = 1) out float o_flow_x;
layout(location = 2) out float o_flow_y;
#if HEX
layout(location = 3) out float o_flow_z;
#define RECORD_TARGET 4
#else
#define RECORD_TARGET 3
#endif
#if CYCLE
layout(location = RECORD_TARGET) out vec4 o_record;
#endif

void main() {
    ivec2 c = texel();
    Faces f = faces_around(c);
    o_flow_x = f.left;
    o_flow_y = f.bottom;
#if HEX
    o_flow_z = face_value(2, c);
#endif
    float before = face_at(u_water, c), rate = move_rate(), net = net_inflow(f);
    float h = moved(before, rate, net);
#if CYCLE
    vec4 rec = cycle_record(c);
    h = cycle_step(h, moved_error(before, rate, net, h), cycle_rates(c), rec);
    o_record = inside(c) ? rec : vec4(0.0);
#endif
    o_depth = inside(c) ? h : 0.0;
}
