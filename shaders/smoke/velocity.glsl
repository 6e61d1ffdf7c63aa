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

// Face field t (`dims` texels; `offset` the face's place in its cell: (0.5, 0) for vx, (0, 0.5) for
// vy) sampled bilinearly where face `node` traces back to by dt_h; lo / hi: the four nodes' min / max.
float traced(sampler2D t, ivec2 dims, ivec2 node, vec2 offset, float dt_h, out float lo, out float hi) {
    return bilinear(t, dims, trace(vec2(node) - offset, dt_h) + offset, lo, hi);
}

float traced(sampler2D t, ivec2 dims, ivec2 node, vec2 offset, float dt_h) {
    float lo, hi;
    return traced(t, dims, node, offset, dt_h, lo, hi);
}

// The cell scalars t sampled over fluid cells (bilinear_fluid) where cell c traces back to by dt_h.
vec4 traced_scalars(sampler2D t, ivec2 c, float dt_h, out vec4 lo, out vec4 hi) {
    return bilinear_fluid(t, trace(vec2(c), dt_h), texelFetch(t, c, 0), lo, hi);
}

vec4 traced_scalars(sampler2D t, ivec2 c, float dt_h) {
    vec4 lo, hi;
    return traced_scalars(t, c, dt_h, lo, hi);
}
