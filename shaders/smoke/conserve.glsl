// The scalars' totals and their conservation fix (SmokeGrid, conserve=True; hydro.reference.smoke
// outflow, conserve_weights). A total sums phi over the fluid cells: density, heat T - T_ambient and
// fuel. A conserving advection pass (advect.comp or maccormack.comp with TOTALS) sums per scalar
// P = phi before the step less what crossed the open sides, the outflow F, A = phi after it and
// M = |phi| after it, packed in three dvec4 as (P, F.x), (A, F.y), (M, F.z); conserve.comp then moves
// each cell's phi to phi + w |phi| with w = (P decay - A) / M, so the total is P decay exactly.
#include "smoke/velocity.glsl"

struct ScalarSums { dvec3 kept; dvec3 outflow; dvec3 after; dvec3 absolute; };

ScalarSums unpack_sums(dvec4 s0, dvec4 s1, dvec4 s2) {
    return ScalarSums(s0.xyz, dvec3(s0.w, s1.w, s2.w), s1.xyz, s2.xyz);
}

vec3 scalar_phi(vec4 s, float ambient) { return s.rgb - vec3(0.0, ambient, 0.0); }

// w per scalar: 0 where nothing is left to scale; at least -1 (density and fuel stay >= 0) and, for
// the heat, at most 1 (each cell keeps its sign).
// Component by component, not a loop writing w[k]: a double vector written at a loop index does not
// compile on every driver.
double conserve_weight(double kept, double decay, double after, double absolute) {
    return absolute > 0.0 ? (kept * decay - after) / absolute : 0.0;
}

vec3 conserve_weights(ScalarSums t, dvec3 decay) {
    dvec3 w = dvec3(conserve_weight(t.kept.x, decay.x, t.after.x, t.absolute.x),
                    conserve_weight(t.kept.y, decay.y, t.after.y, t.absolute.y),
                    conserve_weight(t.kept.z, decay.z, t.after.z, t.absolute.z));
    return vec3(clamp(w, dvec3(-1.0), dvec3(1e30, 1.0, 1e30)));
}

// What cell c's scalars `phi` lose through its open sides over the step, dt_h = dt / cell_size:
// outward face velocity * dt_h * phi (first-order upwind; gas entering an open side carries the edge
// cell's value, as the clamped sampling of the advection has it), from the carrying velocity.
vec3 outflow(ivec2 c, vec3 phi, float dt_h) {
    float rate = 0.0;
    if (c.x == 0 && face_type_x(c) == FACE_OPEN) rate -= texelFetch(u_vx, c, 0).r;
    if (c.x == u_size.x - 1 && face_type_x(c + ivec2(1, 0)) == FACE_OPEN) rate += texelFetch(u_vx, c + ivec2(1, 0), 0).r;
    if (c.y == 0 && face_type_y(c) == FACE_OPEN) rate -= texelFetch(u_vy, c, 0).r;
    if (c.y == u_size.y - 1 && face_type_y(c + ivec2(0, 1)) == FACE_OPEN) rate += texelFetch(u_vy, c + ivec2(0, 1), 0).r;
    return rate * dt_h * phi;
}
