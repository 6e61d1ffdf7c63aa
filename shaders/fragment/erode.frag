#version 410
// _FragmentErosion, pass 2 of 3 (water/erode.comp's): each cell's suspended sediment carried by the
// substep's scaled faces (sediment_flow, the upwind cell's concentration; clear water enters through the
// sides), then the exchange with the bed (transport_capacity, exchanged). Writes the bed after it (the
// scratch bed slump.frag reads), the sediment and what rounding owes the bed; book_sediment.frag books
// what crossed the sides.
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/cell_inputs.glsl"
// no storage buffers on GL 4.1: cell_velocity reads the faces from the textures
#define FLOWS_DECLARED 1
#define FLOW_X(f) face_at(u_flow_x, f)
#define FLOW_Y(f) face_at(u_flow_y, f)
#define FLOW_Z(f) face_at(u_flow_z, f)
#include "common/velocity.glsl"

uniform sampler2D u_terrain, u_sediment, u_owed, u_concentration, u_bedrock;
uniform float u_pipe_length;
uniform float u_speed_depth;        // velocities only in water deeper than this
layout(location = 0) out float o_bed;
layout(location = 1) out float o_sediment;
layout(location = 2) out float o_owed;

// A neighbour's bed; the cell's own where the neighbour is off the grid (erosion.glsl's bed_gradient).
#define BED_AT(c, own) (inside(c) ? face_at(u_terrain, c) : (own))
#include "common/erosion.glsl"

// A cell's concentration; 0 outside the grid (clear water comes in through the sides).
float conc_at(ivec2 c) { return inside(c) ? face_at(u_concentration, c) : 0.0; }

float carried(float q, ivec2 from, ivec2 to) { return sediment_flow(q, conc_at(from), conc_at(to)); }

void main() {
    ivec2 c = texel(), dx = ivec2(1, 0), dy = ivec2(0, 1);
    float h = face_at(u_water, c), z = face_at(u_terrain, c), s = face_at(u_sediment, c);
    Faces g;
    g.left = carried(face_at(u_flow_x, c), c - dx, c);
    g.right = carried(face_at(u_flow_x, c + dx), c, c + dx);
    g.bottom = carried(face_at(u_flow_y, c), c - dy, c);
    g.top = carried(face_at(u_flow_y, c + dy), c, c + dy);
#if HEX
    g.z_in = carried(face_at(u_flow_z, c + dx), c + dx - dy, c);
    g.z_out = carried(face_at(u_flow_z, c + dy), c, c - dx + dy);
#endif
    float owed = face_at(u_owed, c);
    vec2 after = eroded_cell(s, g, c, h, cell_velocity(c, h, u_face_width, u_speed_depth), z,
                             face_at(u_bedrock, c), owed, u_pipe_length);
    o_bed = after.x;
    o_owed = owed;
    o_sediment = after.y;
}
