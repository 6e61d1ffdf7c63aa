// Outflow scaling (Mei et al. 2007), shared by scale_outflow.comp and (through pipes.glsl) step_fused.comp.
uniform float u_dt;                 // substep, s
uniform float u_cell_area;          // S

// K = min(1, h S / (dt * outgoing)): the share of its outgoing flows a cell can afford. Worked out
// without a branch, through a reciprocal: the ternary with a division compiled to a branch around a
// division for each cell (NVIDIA's compiler), which kept the climb's stages (water/step_stream.comp)
// from running side by side; this form is 4-6 % faster there at 1024^2 (H100, 2026-12-06,
// docs/benchmarks-log.md). The outflow below the smallest normal float counts as that: K stays
// finite, and a cell with no outflow scales no face (its K, whatever it is, is never used).
float outflow_scale(float h, float outgoing) {
    float out_volume = max(outgoing * u_dt, 1.17549435e-38);
    float held = h * u_cell_area;
    return min(held * (1.0 / out_volume), 1.0);
}
