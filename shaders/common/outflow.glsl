// Outflow scaling (Mei et al. 2007), shared by every water step (scale_outflow.comp, accelerate_cells.comp,
// and through pipes.glsl step_fused.comp, step_packed.comp and step_stream.comp).
uniform float u_dt;                 // substep, s
uniform float u_cell_area;          // S

// K = min(1, h S / (dt * outgoing)): the share of its outgoing flows a cell can afford. Worked out
// without a branch, through a reciprocal: the ternary with a division compiled to a branch around a
// division for each cell (NVIDIA's compiler), which kept the climb's stages (water/step_stream.comp)
// from running side by side; this form is 4-6 % faster there at 1024^2 (H100, 2026-12-06,
// docs/benchmarks-log.md). K lies in [+0, 1] and is finite: an outflow below the smallest normal float
// counts as that, and abs() makes a depth of -0.0 (which the depth checks let through) hold +0, so a
// dry cell with no outflow gets K = +0, never -0. Such a K scales no flow, but some steps multiply a
// face with no flow by a K (step_stream.comp, step_fused.comp, scale_and_move.comp): q * K must keep
// q's sign of zero, as the three passes, which leave such a face alone, do.
float outflow_scale(float h, float outgoing) {
    float out_volume = max(outgoing * u_dt, 1.17549435e-38);
    float held = abs(h) * u_cell_area;
    return min(held * (1.0 / out_volume), 1.0);
}
