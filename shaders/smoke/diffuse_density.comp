#version 430
// SmokeGrid._diffuse_density: one Chebyshev iteration of the implicit density diffusion
//   A rho = rho*,   (A rho)_c = rho_c - a sum over fluid neighbours (rho_nb - rho_c),   a = kappa dt / h^2,
// the viscosity's iteration (diffuse.comp) on the cells: rho_{k+1} = rho_k + u_c1 (rho_k - rho_{k-1})
// + u_c2 (rho* - A rho_k), coefficients from hydro.smoke_ops.chebyshev_coefficients (A's spectrum lies
// in [1, 1 + 8a] too). No flux through walls, open sides or obstacles: A's columns sum to 1, so each
// iteration keeps the total the conservation fix set. Temperature and fuel are copied; solid cells
// keep theirs. Reads rho_k and rho_{k-1}, writes rho_{k+1}: never an image it reads.
#include "smoke/mac.glsl"

layout(binding = B_SMOKE_S_HAT) uniform sampler2D u_rhs;          // rho*
layout(binding = B_SMOKE_S) uniform sampler2D u_cur;              // rho_k
layout(binding = B_SMOKE_S_BACK) uniform sampler2D u_prev;        // rho_{k-1}
layout(binding = B_SMOKE_S_OUT, rgba32f) uniform restrict writeonly image2D u_s_out;

uniform float u_a;
uniform float u_c1;             // momentum coefficient (0 on the first iteration)
uniform float u_c2;             // residual coefficient

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    vec4 s = texelFetch(u_cur, c, 0);
    if (!solid(c)) {
        float flux = 0.0;
        for (int k = 0; k < 4; ++k) {
            ivec2 n = c + ivec2(k == 0 ? 1 : k == 1 ? -1 : 0, k == 2 ? 1 : k == 3 ? -1 : 0);
            if (inside(n) && !solid(n)) flux += texelFetch(u_cur, n, 0).r - s.r;
        }
        float r = texelFetch(u_rhs, c, 0).r - (s.r - u_a * flux);
        s.r += u_c1 * (s.r - texelFetch(u_prev, c, 0).r) + u_c2 * r;
    }
    imageStore(u_s_out, c, s);
}
