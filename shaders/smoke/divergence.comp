#version 430
// SmokeGrid._divergence: the right-hand side of the pressure equation, D v = net outflow of each
// fluid cell (vx_R - vx_L + vy_T - vy_B, world velocity units; / cell_size gives 1/s), 0 in solids.
// Also where the pressure solve starts, into u_q_out: q = 0 (u_keep_q 0), or the last solve's q (u_q,
// another texture: Pressure.begin) kept for a warm start (u_keep_q 1; 0 in solid cells, which an
// obstacle may have covered since).
// With u_warm_sums 1 also the sums a warm start needs from that q0 and this b
// (Pressure.bind_warm_sums): per group (16 x 16 DIVERGENCE_ROWS cells) |L q0|^2 (into the record's r2)
// and <b, L q0> (into b2), and the last group to finish folds the group records into the record
// warm.glsl reads (as prolong_smooth.comp does its norms). L q0 is summed over cells with a diagonal
// (fluid cells), whose weights to a solid neighbour are 0, so it is the L q0 of the q0 kept, whose
// solid cells are cleared.
#include "smoke/mac.glsl"
#include "smoke/poisson.glsl"
#include "smoke/norms.glsl"

layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;
layout(binding = B_SMOKE_Q) uniform sampler2D u_q;          // q0: the last solve's q
layout(binding = B_SMOKE_RHS_OUT, r32f) uniform restrict writeonly image2D u_rhs_out;
layout(binding = B_SMOKE_Q_OUT, r32f) uniform restrict writeonly image2D u_q_out;
layout(std430, binding = B_SMOKE_WARM) coherent buffer WarmSums {
    Norms u_warm;                // r2 = |L q0|^2, b2 = <b, L q0>
    uint u_groups_done;          // groups that wrote their record; the last one resets it to 0
};
#include "smoke/fold_last.glsl"
uniform int u_keep_q;
uniform int u_warm_sums;

float q_at(ivec2 c) { return texelFetch(u_q, c, 0).r; }

// Each invocation takes DIVERGENCE_ROWS cells up its column, LOCAL_SIZE rows apart (a warp's texels stay
// side by side), and sums the warm start's terms over them: fewer groups whose records the last one folds.
void main() {
    double lq2 = 0.0, blq = 0.0;
    for (int k = 0; k < DIVERGENCE_ROWS; ++k) {
        ivec2 c = ivec2(gl_GlobalInvocationID.x, (int(gl_WorkGroupID.y) * DIVERGENCE_ROWS + k) * LOCAL_SIZE
                        + int(gl_LocalInvocationID.y));
        bool in_grid = inside(c);
        float d = 0.0;
        bool fluid = in_grid && !solid(c);
        if (fluid)
            d = texelFetch(u_vx, c + ivec2(1, 0), 0).r - texelFetch(u_vx, c, 0).r
              + texelFetch(u_vy, c + ivec2(0, 1), 0).r - texelFetch(u_vy, c, 0).r;
        if (in_grid) {
            imageStore(u_rhs_out, c, vec4(d));
            imageStore(u_q_out, c, vec4(u_keep_q != 0 && fluid ? q_at(c) : 0.0));
        }
        if (u_warm_sums != 0 && in_grid && coef(c).w > 0.0) {         // cells with a diagonal
            double lq = -double(residual_at(c, 0.0));                   // (L q0)_c = -(0 - L q0)_c
            lq2 += lq * lq;
            blq += double(d) * lq;
        }
    }
    if (u_warm_sums == 0) return;                   // uniform: no group waits at a barrier below
    uint i = gl_LocalInvocationIndex;
    group_norms(i, LOCAL_SIZE * LOCAL_SIZE, lq2, blq, 0.0, 0.0);
    if (!fold_if_last(i, LOCAL_SIZE * LOCAL_SIZE)) return;
    if (i == 0) {
        u_warm = Norms(s_r2[0], s_b2[0], 0.0, 0.0);
        u_groups_done = 0u;
    }
}
