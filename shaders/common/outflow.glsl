// Outflow scaling (Mei et al. 2007), shared by scale_outflow.comp and (through pipes.glsl) step_fused.comp.
uniform float u_dt;                 // substep, s
uniform float u_cell_area;          // S

// K = min(1, h S / (dt * outgoing)): the share of its outgoing flows a cell can afford.
float outflow_scale(float h, float outgoing) {
    float out_volume = outgoing * u_dt;
    float held = h * u_cell_area;
    return out_volume > held ? held / out_volume : 1.0;
}
