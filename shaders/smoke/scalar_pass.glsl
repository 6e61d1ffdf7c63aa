// The main of a pass on the cell scalars (advect.comp, maccormack.comp with SCALARS), which defines
// before including this carried_scalars(c), a fluid cell's scalars after the step, and
// scalars_before(c), the ones it had: every cell's scalars go to u_s_out (solid cells
// solid_scalars). With TOTALS their sums and the step's ledger entries too (scalar_totals.glsl), each
// invocation taking SCALAR_ROWS cells up its column, LOCAL_SIZE rows apart (a warp's texels stay side
// by side): a quarter of the groups with four, whose records the last group folds.
#if TOTALS
#include "smoke/scalar_totals.glsl"
#endif

void scalar_pass() {
#if TOTALS
    dvec4 v[SUMS] = dvec4[SUMS](dvec4(0.0), dvec4(0.0), dvec4(0.0));
    for (int k = 0; k < SCALAR_ROWS; ++k) {
        ivec2 c = ivec2(gl_GlobalInvocationID.x,
                        (int(gl_WorkGroupID.y) * SCALAR_ROWS + k) * LOCAL_SIZE + int(gl_LocalInvocationID.y));
        if (!inside(c)) continue;
        bool fluid = !solid(c);
        vec4 after = fluid ? carried_scalars(c) : solid_scalars(u_ambient);
        imageStore(u_s_out, c, after);
        if (fluid) add_sums(v, c, scalars_before(c), after);
    }
    book_sums(v);
#else
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (!inside(c)) return;
    imageStore(u_s_out, c, solid(c) ? solid_scalars(u_ambient) : carried_scalars(c));
#endif
}
