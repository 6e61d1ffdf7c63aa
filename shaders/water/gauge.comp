#version 430
// Gauges.hook (hydro/water_probes.py): after each substep of a call, what crossed each gauge's faces,
// the sum of its faces' scaled flows times their signs (+1 where the face's positive flow crosses the
// gauge's line toward its normal), times the substep's dt, added in double precision to the gauge's
// volume since it was added and to its volume over the call (which the call's first substep starts
// again). One workgroup a gauge: each invocation sums a strided share of its faces, then a tree in
// shared memory adds the shares, in the same order every time, so the sums never depend on timing.
// The flows are read where the kernel left them: the flow buffers, or (PACKED) the blocked kernel's
// state after a launch of one substep (texel (x, y) + u_margin: depth, flow_x, flow_y, HEX flow_z;
// pack.comp).
#include "common/cells.glsl"
#include "common/water.glsl"
#define GROUP 64
layout(local_size_x = GROUP) in;

#if PACKED
layout(binding = B_PACKED_IN, rgba32f) uniform restrict readonly image2D u_state;
uniform int u_margin;
#else
layout(std430, binding = B_FLOW_X) restrict readonly buffer FlowX { float u_flow_x[]; };
layout(std430, binding = B_FLOW_Y) restrict readonly buffer FlowY { float u_flow_y[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict readonly buffer FlowZ { float u_flow_z[]; };
#endif
#endif
// per gauge slot its faces' (first, count), then every face: (array 0 x, 1 y, 2 z; column; row; sign)
layout(std430, binding = B_GAUGE_FACES) restrict readonly buffer Faces { ivec2 u_ranges[MAX_GAUGES]; ivec4 u_faces[]; };
layout(std430, binding = B_GAUGE_VOLUMES) restrict buffer Volumes { double u_volume[MAX_GAUGES]; double u_call[MAX_GAUGES]; };
uniform float u_dt;                 // the substep, s
uniform bool u_first;               // the call's first substep

float face_flow_at(ivec4 f) {
    ivec2 at = f.yz;
#if PACKED
    vec4 texel = imageLoad(u_state, at + u_margin);
    return f.x == 0 ? texel.y : f.x == 1 ? texel.z : texel.w;
#else
    if (f.x == 0) return u_flow_x[index_x(at)];
#if HEX
    if (f.x == 2) return u_flow_z[index_z(at)];
#endif
    return u_flow_y[index_y(at)];
#endif
}

shared double s_rate[GROUP];

void main() {
    int g = int(gl_WorkGroupID.x);
    uint i = gl_LocalInvocationIndex;
    ivec2 range = u_ranges[g];
    double rate = 0.0;
    for (int k = range.x + int(i); k < range.x + range.y; k += GROUP)
        rate += double(u_faces[k].w) * double(face_flow_at(u_faces[k]));
    s_rate[i] = rate;
    barrier();
    for (uint stride = GROUP / 2; stride > 0; stride >>= 1) {
        if (i < stride) s_rate[i] += s_rate[i + stride];
        barrier();
    }
    if (i == 0) {
        double crossed = s_rate[0] * double(u_dt);
        u_volume[g] += crossed;
        u_call[g] = u_first ? crossed : u_call[g] + crossed;
    }
}
