// A face's stencil with inertia (common/model.glsl's FaceStencil) gathered from the flows and columns
// around it, for the schedules that read the flows of the substep before from memory: the cell-wise
// kernel (cells_accelerate.comp) and the fragment backend (fragment/inertia.glsl). Needs model.glsl
// (INERTIA) and, before it, flow_of(k, f) (0 where there is no such face), depth_at(c), terrain_at(c);
// a pass that has the faces' velocities already (cells_velocity.comp's) defines VELOCITY_OF(k, f).

// Column c's (depth, bed), where it lies in the grid.
vec2 column_at(ivec2 c, bool in_grid) { return in_grid ? vec2(depth_at(c), terrain_at(c)) : vec2(0.0); }

// The velocity of face f of axis k (model.glsl's columns_velocity).
float velocity_of(int k, ivec2 f) {
    ivec2 a = f + from_cell(k), b = a + axis(k);
    bool a_in = inside(a), b_in = inside(b);
    return columns_velocity(flow_of(k, f), column_at(a, a_in), column_at(b, b_in), a_in, b_in);
}

#ifndef VELOCITY_OF
#define VELOCITY_OF(k, f) velocity_of(k, f)
#endif

// What the faces of axis m do beside face f of axis k (cells a, b).
Across across(int k, int m, ivec2 f, ivec2 a, ivec2 b) {
    return Across(flow_of(m, a + leaving_face(m)), flow_of(m, b + leaving_face(m)),
                  flow_of(m, a + entering_face(m)), flow_of(m, b + entering_face(m)),
                  VELOCITY_OF(k, f - axis(m)), VELOCITY_OF(k, f + axis(m)));
}

// The accelerated flow of interior face f of axis k, with inertia.
float inertial_face(int k, ivec2 f) {
    ivec2 a = f + from_cell(k), b = a + axis(k);
    FaceStencil st;
    st.q = flow_of(k, f);
    st.q_before = flow_of(k, a + entering_face(k));
    st.q_after = flow_of(k, b + leaving_face(k));
    st.u = VELOCITY_OF(k, f);
    st.u_before = VELOCITY_OF(k, a + entering_face(k));
    st.u_after = VELOCITY_OF(k, b + leaving_face(k));
    st.first = across(k, first_across(k), f, a, b);
#if HEX
    st.second = across(k, second_across(k), f, a, b);
#endif
    float z_a = terrain_at(a), h_a = depth_at(a), z_b = terrain_at(b), h_b = depth_at(b);
    return inertial_flow(st, columns_depth(vec2(h_a, z_a), vec2(h_b, z_b)), z_a + h_a, z_b + h_b);
}
