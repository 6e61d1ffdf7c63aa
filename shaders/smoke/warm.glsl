// The warm start's scale, read by the first pass of a solve that loads the finest level's q
// (smooth_restrict.comp, or coarse_cycle.comp on a grid with no tiled level): the solve starts from
// alpha q0, q0 the last solve's q and alpha = <b, L q0> / |L q0|^2 the scale that minimises
// |b - alpha L q0|_2 (0 when L q0 = 0), reduced in fp64 by divergence.comp (u_warm_sums) into the
// Norms record at B_SMOKE_WARM (r2 = |L q0|^2, b2 = <b, L q0>). hydro.reference.smoke.warm_scale.
layout(std430, binding = B_SMOKE_WARM) restrict readonly buffer Warm { double u_warm_lq2; double u_warm_blq; };
uniform int u_warm;              // 1: scale the loaded q by alpha (the first cycle of a warm solve)

float warm_scale() {
    if (u_warm == 0) return 1.0;
    return u_warm_lq2 > 0.0 ? float(u_warm_blq / u_warm_lq2) : 0.0;
}
