// The pipe equations, shared by the three-pass step (accelerate.comp, scale_outflow.comp) and the fused
// step (step_fused.comp). Needs PIPE_AREA_DEPTH; callers supply depths and heights however they store them.
#include "common/outflow.glsl"
#include "common/boundary_table.glsl"

uniform float u_friction_factor;    // (1 - friction)^dt, computed on the CPU
uniform float u_flow_gain;          // dt * g / l * w in depth mode, dt * g / l * A with a constant pipe
                                    // area A: the pipe equation's constants, multiplied on the CPU
uniform float u_max_face_depth;     // the deepest pipe this substep is stable for (params.stable_face_depth)

// The pipe's cross-section between two columns over its width w (depth mode), or 1 (constant area):
// the pipe area is this times u_flow_gain / (dt g / l).
float pipe_depth(float eta_a, float eta_b, float z_a, float z_b) {
#if PIPE_AREA_DEPTH
    // Depth of water above the higher bed, on the side of the higher surface: a dry side or a
    // step up in the bed narrows the pipe, which keeps a lake at rest still (Bates et al. 2010).
    // Capped at the depth the substep is stable for (DESIGN section 3's bound solved for h): water
    // that got deeper than step() planned for moves as if it were that deep, never unstably.
    return min(max(max(eta_a, eta_b) - max(z_a, z_b), 0.0), u_max_face_depth);
#else
    return 1.0;
#endif
}

// q <- q * (1 - f)^dt + dt * g * A / l * (eta_a - eta_b) for a pipe from column a to column b, whose
// surfaces are eta, of cross-section `depth` (pipe_depth's).
float pipe_flow(float q, float depth, float eta_a, float eta_b) {
    return q * u_friction_factor + (u_flow_gain * depth) * (eta_a - eta_b);
}

// The same for columns whose surfaces are eta and beds z.
float surface_flow(float q, float eta_a, float eta_b, float z_a, float z_b) {
    return pipe_flow(q, pipe_depth(eta_a, eta_b, z_a, z_b), eta_a, eta_b);
}

// The same for columns of bed z and depth h.
float interior_flow(float q, float z_a, float h_a, float z_b, float h_b) {
    return surface_flow(q, z_a + h_a, z_b + h_b, z_a, z_b);
}

// Flow of a boundary face (its boundary table entry) whose inside cell has bed z and surface eta;
// `enters` when positive flow points into the grid. The outside column of a level face stands on
// the inside cell's bed.
float boundary_face_flow(float q, BoundaryFace face, bool enters, float z, float eta) {
    float sign_in = enters ? 1.0 : -1.0;
    if (face.kind == BC_INFLOW) return sign_in * face.value;
    if (face.kind == BC_OUTFLOW) return -sign_in * face.value;
    if (face.kind == BC_LEVEL) {
        return q * u_friction_factor
             + (u_flow_gain * pipe_depth(face.value, eta, z, z)) * sign_in * (face.value - eta);
    }
    return 0.0;                                     // wall
}

// The same for boundary table entry b and an inside cell of bed z and depth h. The entry is copied
// first: NVIDIA's compiler takes no readonly buffer member as a function's argument (C1317).
float boundary_flow(float q, int b, bool enters, float z, float h) {
    BoundaryFace face = u_boundary[b];
    return boundary_face_flow(q, face, enters, z, z + h);
}

// The accelerated flow of face from -> to, whose columns hold bed and depth (z_a, h_a) and (z_b, h_b)
// (any values for a column outside the grid): an interior pipe, a boundary face (table entry b), or
// no face (0: the unused corner faces of the hex lattice).
float face_flow(float q, bool from_in, bool to_in, int b, float z_a, float h_a, float z_b, float h_b) {
    if (from_in && to_in) return interior_flow(q, z_a, h_a, z_b, h_b);
    if (b < 0 || !(from_in || to_in)) return 0.0;
    return to_in ? boundary_flow(q, b, true, z_b, h_b) : boundary_flow(q, b, false, z_a, h_a);
}
