#version 430
// WaterGrid.remove_water: takes depth u_amount * brush weight from each cell under the brush, never more
// than the cell holds, and books the volume actually taken in the ledger's drain slot. One workgroup
// walks the whole brush box, so the sum needs no atomics and nothing is read back.
#include "common/bindings.glsl"
#include "common/brush.glsl"
#include "common/ledger.glsl"
#define GROUP 256
layout(local_size_x = GROUP) in;

layout(binding = B_WATER, r32f) uniform restrict image2D u_water_out;       // own texel only
uniform ivec2 u_size;               // grid cells (nx, ny)
uniform int u_slot;                 // ledger slot of the drains
uniform float u_amount;             // depth at brush weight 1
uniform float u_cell_area;
shared double s_taken[GROUP];

void main() {
    uint i = gl_LocalInvocationIndex;
    double taken = 0.0;
    for (int k = int(i); k < u_box.x * u_box.y; k += GROUP) {
        ivec2 c = u_origin + ivec2(k % u_box.x, k / u_box.x);
        if (any(lessThan(c, ivec2(0))) || any(greaterThanEqual(c, u_size))) continue;
        float w = brush_weight(c);
        if (w <= 0.0) continue;
        float h = imageLoad(u_water_out, c).r;
        float h_new = max(h - u_amount * w, 0.0);
        imageStore(u_water_out, c, vec4(h_new));
        taken += double(h) - double(h_new);           // exact: both are the stored float32 values
    }
    s_taken[i] = taken;
    barrier();
    for (uint stride = GROUP / 2; stride > 0; stride >>= 1) {
        if (i < stride) s_taken[i] += s_taken[i + stride];
        barrier();
    }
    if (i == 0) u_ledger[u_slot] -= s_taken[0] * double(u_cell_area);
}
