#version 430
// ErosionState.material: the material of each column of cells, bed + sediment + what rounding owes
// the bed, summed up the column in fp64 (the CPU adds the columns).
#include "common/cells.glsl"
#include "common/bindings.glsl"
layout(local_size_x = 64) in;

layout(binding = B_TERRAIN, r32f) uniform restrict readonly image2D u_terrain;
layout(binding = B_SEDIMENT, r32f) uniform restrict readonly image2D u_sediment;
layout(binding = B_TERRAIN_OWED, r32f) uniform restrict readonly image2D u_owed;
layout(std430, binding = B_PARTIALS) restrict writeonly buffer Columns { double u_columns[]; };

void main() {
    int x = int(gl_GlobalInvocationID.x);
    if (x >= u_size.x) return;
    double total = 0.0;
    for (int y = 0; y < u_size.y; ++y) {
        ivec2 c = ivec2(x, y);
        total += double(imageLoad(u_terrain, c).r) + double(imageLoad(u_sediment, c).r) + double(imageLoad(u_owed, c).r);
    }
    u_columns[x] = total;
}
