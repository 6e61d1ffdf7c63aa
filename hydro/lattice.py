"""Where the cells of a water grid lie, for the brushes: grid points in lattice units, the cell nearest a
point, and the cells a smooth round brush touches with their weights (square grid and triangular
lattice). The weights go to the GPU as float32 (common/brush.glsl)."""
from __future__ import annotations

import math

import numpy as np

SQRT3_2 = math.sqrt(3.0) / 2.0


def lattice_position(x, y, hexagonal: bool):
    """Position of grid point (x, y) in lattice units (cells, or lattice spacings on the hex lattice)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return (x + 0.5 * y, SQRT3_2 * y) if hexagonal else (x, y)


def nearest_cell(x, y, hexagonal: bool):
    """The cell (lattice vertex) nearest to grid point (x, y): rounding on the square grid, cube
    rounding of the axial coordinates on the hex lattice; int64 arrays (0-d for scalars)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if not hexagonal:
        return np.floor(x + 0.5).astype(np.int64), np.floor(y + 0.5).astype(np.int64)
    cz = -x - y
    rx, ry, rz = np.round(x), np.round(y), np.round(cz)
    dx, dy, dz = np.abs(rx - x), np.abs(ry - y), np.abs(rz - cz)
    fix_x = (dx > dy) & (dx > dz)
    fix_y = ~fix_x & (dy > dz)
    rx = np.where(fix_x, -ry - rz, rx)
    ry = np.where(fix_y, -rx - rz, ry)
    return rx.astype(np.int64), ry.astype(np.int64)


def brush_box(shape, x, y, radius, hexagonal: bool):
    """The cells of a (ny, nx) grid a smooth round brush touches: (x0, y0, weights), weights[j, i]
    = (1 - (d/R)^2)^2 for cell (x0 + i, y0 + j), d its lattice distance from (x, y), over the box that
    holds the brush's circle (hex: its ellipse in axial coordinates), clipped to the grid. A brush
    that reaches no cell's centre acts on the cell nearest to its own centre, with weight 1 (a small
    brush between centres); None where that cell is off the grid."""
    ny, nx = shape
    ry = radius / SQRT3_2 if hexagonal else radius
    rx = radius + 0.5 * ry if hexagonal else radius
    x0, x1 = max(math.floor(x - rx), 0), min(math.ceil(x + rx), nx - 1)
    y0, y1 = max(math.floor(y - ry), 0), min(math.ceil(y + ry), ny - 1)
    if x0 <= x1 and y0 <= y1:
        gy, gx = np.mgrid[y0:y1 + 1, x0:x1 + 1]
        px, py = lattice_position(gx, gy, hexagonal)
        cx, cy = lattice_position(x, y, hexagonal)
        w = np.maximum(1.0 - ((px - cx) ** 2 + (py - cy) ** 2) / (radius * radius), 0.0) ** 2
        if w.any():
            return x0, y0, w
    i, j = (int(v) for v in nearest_cell(x, y, hexagonal))
    return (i, j, np.ones((1, 1))) if 0 <= i < nx and 0 <= j < ny else None
