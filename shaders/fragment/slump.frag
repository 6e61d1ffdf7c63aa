#version 410
// _FragmentErosion, pass 3 of 3 (water/slump.comp's): thermal slumping. Every face between two cells
// carries slump_flow of the bed erode.frag left (common/erosion.glsl's slumped), worked out alike by
// both cells; each cell's bed changes by its faces' net, what rounding drops owed to it.
#include "common/model.glsl"
#include "fragment/grid.glsl"

uniform sampler2D u_eroded, u_bedrock, u_owed;
layout(location = 0) out float o_terrain;
layout(location = 1) out float o_owed;
#define ERODED_AT(c) face_at(u_eroded, c)
#define BEDROCK_AT(c) face_at(u_bedrock, c)
#include "common/erosion.glsl"

void main() {
    ivec2 c = texel();
    Faces t = slumped_faces(c);
    float owed = face_at(u_owed, c);
    o_terrain = terrain_changed(face_at(u_eroded, c), net_inflow(t), owed);
    o_owed = owed;
}
