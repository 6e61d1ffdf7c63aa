"""NumPy float64 reference of the virtual-pipes water step (square grid and triangular lattice).

Each function mirrors one shader in shaders/water/ and the WaterGrid method that dispatches it:
accelerate (accelerate.comp), scale_outflow (scale_outflow.comp), move (move.comp), dig, add_water.
Conventions: arrays [y, x]; flow_x (ny, nx+1) from (x-1, y) to (x, y);
flow_y (ny+1, nx) from (x, y-1) to (x, y); hex flow_z (ny+1, nx+1) from (x, y-1) to (x-1, y).
References: Mei, Decaudin & Hu 2007 (outflow scaling); lisyarus, "Simulating water over terrain"
(2025, signed staggered flows, friction (1-f)^dt); Bates, Horritt & Fewtrell 2010 (A = h_face * w).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import boundary as bnd
from ..params import Geometry, WaterParams, stable_face_depth


@dataclass
class State:
    """Everything one step reads and writes, in float64."""
    terrain: np.ndarray
    water: np.ndarray
    flow_x: np.ndarray
    flow_y: np.ndarray
    flow_z: np.ndarray | None = None
    table: np.ndarray | None = None                     # boundary table (hydro.boundary)
    ledger: np.ndarray | None = None                    # volume into the grid per boundary face
    params: WaterParams = field(default_factory=WaterParams)

    @property
    def hexagonal(self) -> bool:
        return self.flow_z is not None

    @property
    def geometry(self) -> Geometry:
        cs = self.params.cell_size
        return Geometry.hexagonal(cs) if self.hexagonal else Geometry.square(cs)

    @property
    def layout(self) -> bnd.Layout:
        ny, nx = self.water.shape
        return bnd.layout(nx, ny, self.hexagonal)

    def flows(self):
        return [self.flow_x, self.flow_y] + ([self.flow_z] if self.hexagonal else [])

    def volume(self) -> float:
        return float(self.water.sum() * self.geometry.cell_area)

    @staticmethod
    def new(terrain, water=None, *, hexagonal=False, params=None) -> "State":
        terrain = np.asarray(terrain, np.float64)
        ny, nx = terrain.shape
        water = np.zeros_like(terrain) if water is None else np.asarray(water, np.float64).copy()
        lay = bnd.layout(nx, ny, hexagonal)
        return State(terrain.copy(), water, np.zeros((ny, nx + 1)), np.zeros((ny + 1, nx)),
                     np.zeros((ny + 1, nx + 1)) if hexagonal else None, bnd.new_table(lay),
                     np.zeros(lay.size), params or WaterParams())


def _pipe_area(params, geo, eta_a, eta_b, z_a, z_b, cap):
    """h_face * w (capped at the substep's stable depth `cap`), or the constant area."""
    if params.depth_area:
        h_face = np.maximum(np.maximum(eta_a, eta_b) - np.maximum(z_a, z_b), 0.0)
        return np.minimum(h_face, cap) * geo.face_width
    return np.full(np.broadcast(eta_a, eta_b).shape, float(params.pipe_area))


def _interior_pairs(ny, nx, hexagonal):
    """(array index, face slice, from-cell slice, to-cell slice) for the faces between two cells."""
    pairs = [(0, np.s_[:, 1:nx], np.s_[:, 0:nx - 1], np.s_[:, 1:nx]),
             (1, np.s_[1:ny, :], np.s_[0:ny - 1, :], np.s_[1:ny, :])]
    if hexagonal:   # z face (x, y): from (x, y-1) to (x-1, y)
        pairs.append((2, np.s_[1:ny, 1:nx], np.s_[0:ny - 1, 1:nx], np.s_[1:ny, 0:nx - 1]))
    return pairs


def accelerate(s: State, dt: float) -> list[np.ndarray]:
    """Accelerated (not yet scaled) flows, boundary faces re-imposed. Twin of accelerate.comp."""
    p, geo = s.params, s.geometry
    ny, nx = s.water.shape
    z, eta = s.terrain, s.terrain + s.water
    r, coef = p.friction_factor(dt), p.gravity / geo.pipe_length
    cap = stable_face_depth(dt, geo, p)
    out = [np.zeros_like(q) for q in s.flows()]
    for k, face, a, b in _interior_pairs(ny, nx, s.hexagonal):
        area = _pipe_area(p, geo, eta[a], eta[b], z[a], z[b], cap)
        out[k][face] = s.flows()[k][face] * r + dt * coef * area * (eta[a] - eta[b])
    lay = s.layout
    (fx, fy), (tx, ty) = lay.endpoints()
    to_in = (tx >= 0) & (tx < nx) & (ty >= 0) & (ty < ny)
    cx, cy = np.where(to_in, tx, fx), np.where(to_in, ty, fy)
    sign = np.where(to_in, 1.0, -1.0)
    kind, value = s.table["kind"], s.table["value"].astype(np.float64)
    q_old = np.array([s.flows()[a][j, i] for a, i, j in zip(lay.array, lay.i, lay.j)])
    zc, etac = z[cy, cx], eta[cy, cx]
    area = _pipe_area(p, geo, value, etac, zc, zc, cap)
    q = np.select([kind == bnd.KINDS["inflow"], kind == bnd.KINDS["outflow"], kind == bnd.KINDS["level"]],
                  [sign * value, -sign * value, q_old * r + dt * coef * area * sign * (value - etac)], 0.0)
    for a, i, j, qq in zip(lay.array, lay.i, lay.j, q):
        out[a][j, i] = qq
    return out


def outflow_scale(water, flows, dt, geo) -> np.ndarray:
    """K = min(1, h S / (dt * sum of outgoing flows)) per cell."""
    qx, qy = flows[0], flows[1]
    out = (np.maximum(-qx[:, :-1], 0) + np.maximum(qx[:, 1:], 0)
           + np.maximum(-qy[:-1, :], 0) + np.maximum(qy[1:, :], 0))
    if len(flows) == 3:
        ny, nx = water.shape
        qz = flows[2]
        out += np.maximum(-qz[0:ny, 1:nx + 1], 0) + np.maximum(qz[1:ny + 1, 0:nx], 0)
    held, leaving = water * geo.cell_area, out * dt
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(leaving > held, held / np.where(leaving > 0, leaving, 1.0), 1.0)


def scale_outflow(s: State, flows, dt: float):
    """Flows with every outgoing face scaled by its upwind cell's K, and the volume that crossed each
    boundary face (into the grid). Twin of scale_outflow.comp."""
    ny, nx = s.water.shape
    kp = np.ones((ny + 2, nx + 2))
    kp[1:-1, 1:-1] = outflow_scale(s.water, flows, dt, s.geometry)
    qx, qy = flows[0], flows[1]
    res = [np.where(qx > 0, qx * kp[1:-1, 0:nx + 1], qx * kp[1:-1, 1:nx + 2]),
           np.where(qy > 0, qy * kp[0:ny + 1, 1:-1], qy * kp[1:ny + 2, 1:-1])]
    if s.hexagonal:
        qz = flows[2]
        res.append(np.where(qz > 0, qz * kp[0:ny + 1, 1:nx + 2], qz * kp[1:ny + 2, 0:nx + 1]))
    lay = s.layout
    (_, _), (tx, ty) = lay.endpoints()
    to_in = (tx >= 0) & (tx < nx) & (ty >= 0) & (ty < ny)
    q = np.array([res[a][j, i] for a, i, j in zip(lay.array, lay.i, lay.j)])
    return res, dt * np.where(to_in, q, -q)


def move(s: State, flows, dt: float) -> np.ndarray:
    """h + dt/S * (in - out), clamped at 0 against rounding. Twin of move.comp."""
    ny, nx = s.water.shape
    qx, qy = flows[0], flows[1]
    net = qx[:, :-1] - qx[:, 1:] + qy[:-1, :] - qy[1:, :]
    if s.hexagonal:
        qz = flows[2]
        net = net + qz[0:ny, 1:nx + 1] - qz[1:ny + 1, 0:nx]
    return np.maximum(s.water + dt / s.geometry.cell_area * net, 0.0)


def step(s: State, dt: float, substeps: int = 1) -> State:
    """Advance `s` in place by dt in `substeps` equal substeps (no stability check here)."""
    h = dt / substeps
    for _ in range(substeps):
        flows, crossed = scale_outflow(s, accelerate(s, h), h)
        s.water = move(s, flows, h)
        s.flow_x, s.flow_y = flows[0], flows[1]
        if s.hexagonal:
            s.flow_z = flows[2]
        s.ledger = s.ledger + crossed
    return s


# --------------------------------------------------------------------------------------------- brushes

def lattice_position(x, y, hexagonal: bool):
    """Position of grid point (x, y) in lattice units (cells, or lattice spacings on the hex lattice)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return (x + 0.5 * y, math.sqrt(3.0) / 2.0 * y) if hexagonal else (x, y)


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
    brush between centres); None where that cell is off the grid. WaterGrid uploads these weights, as
    float32, for its brush passes."""
    ny, nx = shape
    ry = radius / (math.sqrt(3.0) / 2.0) if hexagonal else radius
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


def brush_weights(shape, x, y, radius, hexagonal: bool) -> np.ndarray:
    """brush_box's weights over the whole (ny, nx) grid (zeros outside its box, all zeros where it
    touches no cell)."""
    w = np.zeros(shape)
    box = brush_box(shape, x, y, radius, hexagonal)
    if box is not None:
        x0, y0, b = box
        w[y0:y0 + b.shape[0], x0:x0 + b.shape[1]] = b
    return w


def dig(s: State, x, y, radius, depth) -> None:
    s.terrain = np.clip(s.terrain - depth * brush_weights(s.water.shape, x, y, radius, s.hexagonal), -3.0e38, 3.0e38)


def add_water(s: State, x, y, radius, volume) -> None:
    w = brush_weights(s.water.shape, x, y, radius, s.hexagonal)
    s.water = s.water + volume * w / (w.sum() * s.geometry.cell_area)
