// The velocity (world units/s) of water of depth h whose faces carry the mean flows `mean` along the
// lattice's axes (x, y; HEX also z), through faces of width face_width: zero where the column is no
// deeper than min_depth. On the triangular lattice (HEX) the axes e1 = (1, 0), e2 = (1/2, sqrt(3)/2),
// e3 = (-1/2, sqrt(3)/2) give v = 2/3 * sum_k f_k e_k, the least-squares vector whose projections on
// the three axes are the flows f_k. common/velocity.glsl reads the means from the stored flows; the
// blocked kernel's erosion (water/blocked_tile.comp) has them in registers.
vec2 flow_velocity(vec3 mean, float h, float face_width, float min_depth) {
    if (!(h > min_depth)) return vec2(0.0);
#if HEX
    vec2 v = (2.0 / 3.0) * (mean.x * vec2(1.0, 0.0) + mean.y * vec2(0.5, 0.8660254037844386)
                            + mean.z * vec2(-0.5, 0.8660254037844386));
#else
    vec2 v = mean.xy;
#endif
    return v / (h * face_width);
}
