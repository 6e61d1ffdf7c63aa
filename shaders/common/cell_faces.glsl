// The faces of one cell, for the cell-wise step (accelerate_cells.comp, scale_and_move.comp), which
// walks CELL_ROWS cells up a column per invocation: the top face of one cell is the bottom face of
// the next, so it is read and computed once.
// Cell c = (x, y) owns (stores) its left and bottom faces (hex: also z out); the outer faces of the
// last column and row are boundary faces, stored by boundary_faces.comp.

struct Faces {
    float left, right, bottom, top;   // flow_x [y, x], [y, x+1]; flow_y [y, x], [y+1, x]
#if HEX
    float z_in, z_out;                // flow_z [y, x+1] (from (x+1, y-1) into c), [y+1, x] (from c to (x-1, y+1))
#endif
};

// Sum of the outgoing flows, in the order of scale_outflow.comp.
float outgoing(Faces f) {
    float total = max(-f.left, 0.0) + max(f.right, 0.0) + max(-f.bottom, 0.0) + max(f.top, 0.0);
#if HEX
    total += max(-f.z_in, 0.0) + max(f.z_out, 0.0);
#endif
    return total;
}

// Sum in - sum out, in the order of move.comp. `precise` keeps that order and the faces' values as
// stored (no multiply-add fused into the sum), so what a cell loses its neighbour gains to the bit.
float net_inflow(Faces f) {
    precise float net = f.left - f.right + f.bottom - f.top;
#if HEX
    net += f.z_in - f.z_out;
#endif
    return net;
}
