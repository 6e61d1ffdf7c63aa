#version 430
// ErosionState, pass 2 of 3: each cell's suspended sediment carried by the substep's face flows (each
// face's sediment_flow, its upwind cell's concentration; clear water enters through the sides), booked
// where it crosses a side, then the exchange with the bed (transport_capacity, exchanged): the bed
// after it goes to the scratch bed (B_OUT_IMAGE), which slump.comp reads.
// Two dispatches: the cells inside the grid's edge, and (RING) its edge cells, whose faces may cross a
// side and book there: a CPU rasteriser runs a branch's body for every cell whatever the cells take,
// so the booking is compiled into the ring's program only.
#if RING
#define GROUP_X 64
#define GROUP_Y 1
#endif
#include "common/grid.glsl"
#include "common/water.glsl"
#include "common/model.glsl"
// a neighbour's bed; the cell's own where the neighbour is off the grid (erosion.glsl's bed_gradient)
#define BED_AT(c, own) (inside(c) ? terrain_at(c) : (own))
#include "common/erosion.glsl"
// The substep's scaled flows (with BUFFER_VIEWS through their views, which CPU rasterisers load faster),
// for the faces' sediment and the cell's velocity alike.
#include "common/flows_stored.glsl"
#define FLOWS_DECLARED 1
#define FLOW_X(f) FLOW_X_IN(index_x(f))
#define FLOW_Y(f) FLOW_Y_IN(index_y(f))
#define FLOW_Z(f) FLOW_Z_IN(index_z(f))
#include "common/velocity.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water;
layout(binding = B_SEDIMENT, r32f) uniform restrict image2D u_sediment;           // own texel only
layout(binding = B_TERRAIN_OWED, r32f) uniform restrict image2D u_owed;           // own texel only
layout(binding = B_OUT_IMAGE, r32f) uniform restrict writeonly image2D u_terrain_out;
#if NEIGHBOUR_IMAGES
layout(binding = B_CONCENTRATION_IMAGE, r32f) uniform restrict readonly image2D u_concentration;
layout(binding = B_BEDROCK_IMAGE, r32f) uniform restrict readonly image2D u_bedrock;
#define NEIGHBOUR(tex, c) imageLoad(tex, c).r
#else
layout(binding = B_CONCENTRATION) uniform sampler2D u_concentration;
layout(binding = B_BEDROCK) uniform sampler2D u_bedrock;
#define NEIGHBOUR(tex, c) texelFetch(tex, c, 0).r
#endif
layout(std430, binding = B_SEDIMENT_LEDGER) restrict buffer SedimentLedger { double u_sediment_ledger[]; };
uniform float u_pipe_length;
uniform float u_speed_depth;        // velocities only in water deeper than this

// A cell's concentration; 0 outside the grid (clear water comes in through the sides).
float conc_at(ivec2 c) { return inside(c) ? NEIGHBOUR(u_concentration, c) : 0.0; }

// The sediment face from -> to (boundary table entry b) carries; where it is one of the grid's sides,
// what crossed it is booked (`enters`: positive flow comes into the grid).
float carried(float q, ivec2 from, ivec2 to, int b, bool enters) {
    float g = sediment_flow(q, conc_at(from), conc_at(to));
#if RING
    if (b >= 0 && !(inside(from) && inside(to)))
        u_sediment_ledger[b] += double(u_dt) * double(entering(g, enters));
#endif
    return g;
}

// This invocation's cell: RING, the k-th edge cell (rows 0 and ny - 1, then columns 0 and nx - 1
// between them, each cell once); otherwise one inside the edge, from (1, 1). False for none.
bool eroded_here(out ivec2 c) {
    ivec2 n = u_size;
#if RING
    int k = int(gl_GlobalInvocationID.x), rows = min(n.y, 2), inner = max(n.y - 2, 0);
    if (k < rows * n.x) {
        c = ivec2(k % n.x, k < n.x ? 0 : n.y - 1);
        return true;
    }
    k -= rows * n.x;
    c = ivec2(k < inner ? 0 : n.x - 1, 1 + k % max(inner, 1));
    return k < min(n.x, 2) * inner;
#else
    c = ivec2(gl_GlobalInvocationID.xy) + ivec2(1);
    return all(lessThan(c, n - 1));
#endif
}

void main() {
    ivec2 c;
    if (!eroded_here(c)) return;
    ivec2 dx = ivec2(1, 0), dy = ivec2(0, 1);
    float h = imageLoad(u_water, c).r, z = terrain_at(c), s = imageLoad(u_sediment, c).r;
    Faces g;
    g.left = carried(FLOW_X(c), c - dx, c, boundary_x(c), true);
    g.right = carried(FLOW_X(c + dx), c, c + dx, boundary_x(c + dx), false);
    g.bottom = carried(FLOW_Y(c), c - dy, c, boundary_y(c), true);
    g.top = carried(FLOW_Y(c + dy), c, c + dy, boundary_y(c + dy), false);
#if HEX
    g.z_in = carried(FLOW_Z(c + dx), c + dx - dy, c, boundary_z(c + dx), true);
    g.z_out = carried(FLOW_Z(c + dy), c, c - dx + dy, boundary_z(c + dy), false);
#endif
    float owed = imageLoad(u_owed, c).r;
    vec2 after = eroded_cell(s, g, c, h, cell_velocity(c, h, u_face_width, u_speed_depth), z,
                             NEIGHBOUR(u_bedrock, c), owed, u_pipe_length);
    imageStore(u_terrain_out, c, vec4(after.x));
    imageStore(u_owed, c, vec4(owed));
    imageStore(u_sediment, c, vec4(after.y));
}
