// Velocity of the MAC field (samplers B_SMOKE_VX / B_SMOKE_VY) anywhere, and the RK2 back-trace.
layout(binding = B_SMOKE_VX) uniform sampler2D u_vx;
layout(binding = B_SMOKE_VY) uniform sampler2D u_vy;

vec2 velocity_at(vec2 p) {
    return vec2(bilinear(u_vx, dims_x(), p + vec2(0.5, 0.0)), bilinear(u_vy, dims_y(), p + vec2(0.0, 0.5)));
}

// Back-trace by dt (dt_h = dt / cell_size; negative traces forward), explicit midpoint rule.
vec2 trace(vec2 p, float dt_h) {
    vec2 mid = p - 0.5 * dt_h * velocity_at(p);
    return p - dt_h * velocity_at(mid);
}
