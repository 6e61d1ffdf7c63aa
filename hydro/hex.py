"""HexWaterGrid: virtual-pipes water on a triangular lattice (the dual of pointy-top hexagons).

Water lives at lattice vertices in axial coordinates: vertex (x, y) sits at world
x*(s, 0) + y*(s/2, s*sqrt(3)/2), s = cell_size (the lattice spacing), and exchanges with six
neighbours (x+-1, y), (x, y+-1), (x+1, y-1), (x-1, y+1) through three flow arrays:
  flow_x (ny, nx+1)    from (x-1, y) to (x, y)
  flow_y (ny+1, nx)    from (x, y-1) to (x, y)
  flow_z (ny+1, nx+1)  from (x, y-1) to (x-1, y)      (corners [0, 0] and [ny, nx] unused)
Each vertex owns a hexagon of area S = (sqrt(3)/2) s^2; faces are w = s/sqrt(3) wide and pipes
l = s long, so with A = h*w waves travel at sqrt(g h) as on the square grid, and more isotropically.
The kernels are the square grid's shaders compiled with HEX=1 (shaders/common/water.glsl holds the
lattice-specific indexing, shaders/common/model.glsl a cell's six faces); the stability bound uses mu = 9. The (nx, ny) index range covers a
rhombus in the world; `sample_heightmap` fills it from a square heightmap.
"""
from __future__ import annotations

import math

import numpy as np

from . import _validate as check
from . import lattice
from .water import _PipeGrid

SQRT3_2 = lattice.SQRT3_2


class HexWaterGrid(_PipeGrid):
    """Virtual-pipes water on a triangular lattice; the same API as WaterGrid plus `flow_z`.

    terrain: (ny, nx) heights at the lattice vertices, indexed [y, x] in axial coordinates.
    cell_size: lattice spacing s (world units). Brush radii are world distances in lattice spacings.
    Attributes as WaterGrid's (ctx, nx, ny, shape, params, geometry, water_texture, terrain_texture).
    """

    _hexagonal = True
    _kind = "HexWaterGrid"

    # its own signature, so that a call missing an argument is told HexWaterGrid.__init__()
    def __init__(self, ctx, terrain, cell_size=1.0, gravity=9.81, friction=0.02, *, pipe_area="depth",
                 water=None, kernel=None, manning=0.0, fixed_substep=None, inertia=False, sleep=True):
        super().__init__(ctx, terrain, cell_size, gravity, friction, pipe_area=pipe_area, water=water,
                         kernel=kernel, manning=manning, fixed_substep=fixed_substep, inertia=inertia, sleep=sleep)

    @property
    def flow_z(self) -> np.ndarray:
        """Signed flow (ny+1, nx+1), volume/s, from vertex (x, y-1) to (x-1, y); a NumPy copy."""
        return self._flow(2)

    @flow_z.setter
    def flow_z(self, flow):
        self._set_flow(2, "flow_z", flow)

    def grid_to_world(self, x, y):
        """World position of grid point (x, y) (axial, floats allowed); arrays broadcast."""
        return grid_to_world(x, y, self.params.cell_size)

    def world_to_grid(self, wx, wy):
        """Axial grid coordinates (floats) of a world position; round with `nearest_vertex`."""
        return world_to_grid(wx, wy, self.params.cell_size)


def grid_to_world(x, y, spacing=1.0):
    """World (wx, wy) of axial lattice point (x, y): x*(s, 0) + y*(s/2, s*sqrt(3)/2)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return spacing * (x + 0.5 * y), spacing * SQRT3_2 * y


def world_to_grid(wx, wy, spacing=1.0):
    """Axial (x, y), floats, of world position (wx, wy); the inverse of grid_to_world."""
    wx, wy = np.asarray(wx, np.float64), np.asarray(wy, np.float64)
    y = wy / (spacing * SQRT3_2)
    return wx / spacing - 0.5 * y, y


def nearest_vertex(x, y):
    """The lattice vertex nearest to axial point (x, y) (cube-coordinate rounding): ints for scalar
    x and y, int64 arrays for arrays."""
    rx, ry = lattice.nearest_cell(x, y, hexagonal=True)
    if rx.ndim == 0:
        return int(rx), int(ry)
    return rx, ry


def sample_heightmap(heights, cell_size, shape, spacing, origin=(0.0, 0.0)):
    """Resample a square heightmap onto a lattice of `shape` = (ny, nx) vertices.

    heights: (H, W) square-grid heights; sample [j, i] is the centre of the square cell at world
    ((i + 0.5) * cell_size, (j + 0.5) * cell_size). Vertex (x, y) is read at world origin +
    grid_to_world(x, y, spacing), bilinearly; points outside the map take the nearest edge value.
    """
    heights = check.field("heights", heights, dtype=np.float64)
    if heights.ndim != 2:
        raise ValueError(f"heights: expected a 2D array (H, W), got shape {heights.shape}")
    cell_size, spacing = check.positive("cell_size", cell_size), check.positive("spacing", spacing)
    try:
        ny, nx = (check.integer("shape", v, low=2) for v in shape)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"shape: expected (ny, nx) with both >= 2, got {shape!r}") from None
    ox, oy = check.pair("origin", origin, "(x, y) world offset")
    gy, gx = np.mgrid[0:ny, 0:nx]
    wx, wy = grid_to_world(gx, gy, spacing)
    u = np.clip((wx + ox) / cell_size - 0.5, 0, heights.shape[1] - 1)
    v = np.clip((wy + oy) / cell_size - 0.5, 0, heights.shape[0] - 1)
    i0, j0 = np.minimum(u.astype(int), heights.shape[1] - 2), np.minimum(v.astype(int), heights.shape[0] - 2)
    fu, fv = u - i0, v - j0
    h = heights
    return ((h[j0, i0] * (1 - fu) + h[j0, i0 + 1] * fu) * (1 - fv)
            + (h[j0 + 1, i0] * (1 - fu) + h[j0 + 1, i0 + 1] * fu) * fv)
