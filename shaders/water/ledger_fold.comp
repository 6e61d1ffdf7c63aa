#version 430
// WaterGrid._fold_ledger: before set_boundary changes the kinds of the boundary faces, what each face
// has booked (common/ledger.glsl) is added to the total of the kind it was booked under, in the
// ledger's KINDS slots from u_totals (BC_WALL .. BC_LEVEL), and the face's slot starts again from 0.
// One workgroup: each invocation sums a strided share of the faces per kind, then a tree in shared
// memory adds the shares in the same order every time; nothing is read back, no atomics are needed.
#include "common/bindings.glsl"
#include "common/boundary_table.glsl"
#include "common/ledger.glsl"
#define GROUP 256
#define KINDS 4
layout(local_size_x = GROUP) in;

uniform int u_count;                // boundary faces
uniform int u_totals;               // the ledger slot of the first kind's total
shared double s_sum[KINDS][GROUP];

void main() {
    uint i = gl_LocalInvocationIndex;
    double sum[KINDS] = double[KINDS](0.0, 0.0, 0.0, 0.0);
    for (int b = int(i); b < u_count; b += GROUP) {
        sum[clamp(u_boundary[b].kind, 0, KINDS - 1)] += u_ledger[b];
        u_ledger[b] = 0.0;
    }
    for (int k = 0; k < KINDS; k++) s_sum[k][i] = sum[k];
    barrier();
    for (uint stride = GROUP / 2; stride > 0; stride >>= 1) {
        if (i < stride)
            for (int k = 0; k < KINDS; k++) s_sum[k][i] += s_sum[k][i + stride];
        barrier();
    }
    if (i == 0)
        for (int k = 0; k < KINDS; k++) u_ledger[u_totals + k] += s_sum[k][0];
}
