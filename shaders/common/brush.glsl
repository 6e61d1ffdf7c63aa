// A brush's weight per cell, computed by WaterGrid._brush on the CPU (hydro.lattice
// .brush_box, the smooth round brush (1 - (d/R)^2)^2) and uploaded as float32, row by row over the
// box of cells it touches, so the GPU adds exactly the weights whose sum scaled the brush's volume.
layout(std430, binding = B_BRUSH) restrict readonly buffer Brush { float u_weights[]; };
uniform ivec2 u_origin;     // first cell of the box
uniform ivec2 u_box;        // the box's cells (x, y)

// The weight of cell c: 0 outside the box.
float brush_weight(ivec2 c) {
    ivec2 k = c - u_origin;
    if (any(lessThan(k, ivec2(0))) || any(greaterThanEqual(k, u_box))) return 0.0;
    return u_weights[k.y * u_box.x + k.x];
}
