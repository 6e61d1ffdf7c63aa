// A cell's depth-averaged water velocity (world units/s) from its face flows, shared by the renderer's
// velocity texture (render/velocity.comp) and the grids' point samples (water/sample.comp): the mean of
// the two opposite face flows per axis, as common/flow_velocity.glsl turns them into a velocity.
// Needs common/water.glsl (the flows' indexing) before it.
// A pass that declares the flow buffers itself (to write them) defines FLOWS_DECLARED first.
#ifndef FLOWS_DECLARED
layout(std430, binding = B_FLOW_X) restrict readonly buffer FlowX { float u_flow_x[]; };
layout(std430, binding = B_FLOW_Y) restrict readonly buffer FlowY { float u_flow_y[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict readonly buffer FlowZ { float u_flow_z[]; };
#endif
#endif

// How face f's flow is read: from the storage buffers, unless the pass defines FLOW_X, FLOW_Y (HEX:
// FLOW_Z) first (render/velocity.frag reads the fragment backend's flow textures).
#ifndef FLOW_X
#define FLOW_X(f) u_flow_x[index_x(f)]
#define FLOW_Y(f) u_flow_y[index_y(f)]
#define FLOW_Z(f) u_flow_z[index_z(f)]
#endif

#include "common/flow_velocity.glsl"

// The velocity of cell c holding depth h; faces of width face_width (world units).
vec2 cell_velocity(ivec2 c, float h, float face_width, float min_depth) {
    if (!(h > min_depth)) return vec2(0.0);
    float fx = 0.5 * (FLOW_X(c) + FLOW_X(c + ivec2(1, 0)));
    float fy = 0.5 * (FLOW_Y(c) + FLOW_Y(c + ivec2(0, 1)));
#if HEX
    // z face (x+1, y) brings water into c from (x+1, y-1); z face (x, y+1) takes it to (x-1, y+1).
    float fz = 0.5 * (FLOW_Z(c + ivec2(1, 0)) + FLOW_Z(c + ivec2(0, 1)));
#else
    float fz = 0.0;
#endif
    return flow_velocity(vec3(fx, fy, fz), h, face_width, min_depth);
}
