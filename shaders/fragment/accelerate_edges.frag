#version 410
// Accelerate every boundary face by its table entry (common/model.glsl's face_flow), in the edges
// layout (fragment/lattice.glsl), for accelerate.frag to take: the boundary rule then runs once a face,
// not in every texel of the grid (a CPU rasteriser runs both sides of a branch). A texel of no face
// (the sides differ in length; the hex lattice's unused corner faces) holds 0.
#include "common/model.glsl"
#include "fragment/lattice.glsl"
#include "fragment/flows.glsl"

uniform sampler2D u_terrain, u_water;
layout(location = 0) out float o_flow;

void main() {
    ivec3 face = edge_face(texel());
    int k = face.x;
    ivec2 f = face.yz, a = face_from(k, f), b = face_to(k, f);
    o_flow = face_flow(flow_at(k, f), inside(a), inside(b), boundary_index(k, f), cell_at(u_terrain, a),
                       cell_at(u_water, a), cell_at(u_terrain, b), cell_at(u_water, b));
}
