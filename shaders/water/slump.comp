#version 430
// ErosionState, pass 3 of 3: thermal slumping. Every face between two cells carries slump_flow of the
// bed (common/erosion.glsl), worked out alike by both cells from the bed erode.comp left; each cell's
// bed changes by its faces' net (net_inflow), what rounding drops owed to it (terrain_changed).
#include "common/grid.glsl"
#include "common/bindings.glsl"
#include "common/model.glsl"

layout(binding = B_TERRAIN, r32f) uniform restrict writeonly image2D u_terrain_out;
layout(binding = B_TERRAIN_OWED, r32f) uniform restrict image2D u_owed;           // own texel only
// the bed erode.comp left and the bedrock, as erosion.glsl's slumped() reads them
#if NEIGHBOUR_IMAGES
layout(binding = B_ERODED_IMAGE, r32f) uniform restrict readonly image2D u_eroded;
layout(binding = B_BEDROCK_IMAGE, r32f) uniform restrict readonly image2D u_bedrock;
#define ERODED_AT(c) imageLoad(u_eroded, c).r
#define BEDROCK_AT(c) imageLoad(u_bedrock, c).r
#else
layout(binding = B_ERODED) uniform sampler2D u_eroded;
layout(binding = B_BEDROCK) uniform sampler2D u_bedrock;
#define ERODED_AT(c) texelFetch(u_eroded, c, 0).r
#define BEDROCK_AT(c) texelFetch(u_bedrock, c, 0).r
#endif
#include "common/erosion.glsl"

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    Faces t = slumped_faces(c);
    float owed = imageLoad(u_owed, c).r;
    imageStore(u_terrain_out, c, vec4(terrain_changed(ERODED_AT(c), net_inflow(t), owed)));
    imageStore(u_owed, c, vec4(owed));
}
