#version 430
// Renderer._velocity: depth-averaged water velocity at each cell (world units/s) from the face flows,
//   v = mean of the two opposite face flows per axis / (depth * face width),
// zero where the column is shallower than u_min_depth. On the triangular lattice (HEX) the three
// axes e1 = (1, 0), e2 = (1/2, sqrt(3)/2), e3 = (-1/2, sqrt(3)/2) give v = 2/3 * sum_k f_k e_k, the
// least-squares vector whose projections on the three axes are the flows f_k.
#include "common/grid.glsl"
#include "common/water.glsl"

layout(binding = B_WATER, r32f) uniform restrict readonly image2D u_water_in;
layout(binding = B_OUT_IMAGE, rg32f) uniform restrict writeonly image2D u_velocity_out;
layout(std430, binding = B_FLOW_X) restrict readonly buffer FlowX { float u_flow_x[]; };
layout(std430, binding = B_FLOW_Y) restrict readonly buffer FlowY { float u_flow_y[]; };
#if HEX
layout(std430, binding = B_FLOW_Z) restrict readonly buffer FlowZ { float u_flow_z[]; };
#endif

uniform float u_face_width;             // world units
uniform float u_min_depth;              // world units

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    float h = imageLoad(u_water_in, c).r;
    vec2 v = vec2(0.0);
    if (h > u_min_depth) {
        float fx = 0.5 * (u_flow_x[index_x(c)] + u_flow_x[index_x(c + ivec2(1, 0))]);
        float fy = 0.5 * (u_flow_y[index_y(c)] + u_flow_y[index_y(c + ivec2(0, 1))]);
#if HEX
        // z face (x+1, y) brings water into c from (x+1, y-1); z face (x, y+1) takes it to (x-1, y+1).
        float fz = 0.5 * (u_flow_z[index_z(c + ivec2(1, 0))] + u_flow_z[index_z(c + ivec2(0, 1))]);
        v = (2.0 / 3.0) * (fx * vec2(1.0, 0.0) + fy * vec2(0.5, 0.8660254037844386)
                           + fz * vec2(-0.5, 0.8660254037844386));
#else
        v = vec2(fx, fy);
#endif
        v /= h * u_face_width;
    }
    imageStore(u_velocity_out, c, vec4(v, 0.0, 0.0));
}
