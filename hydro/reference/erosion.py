"""NumPy float64 statement of the erosion model (shaders/common/erosion.glsl): the oracle the GPU passes
(water/erode_mix.comp, water/erode.comp, water/slump.comp) are tested against. It shares none of the
product's arithmetic; it takes the hydro.Erosion record (its fields are the contract) and a water
reference State (hydro.reference.water) with `sediment` and `bedrock` arrays.

After each water substep (its scaled flows and the water it left), three steps:
  mix: each cell's concentration c = s / (h + out dt / S), its sediment over the water that stayed and
       the water that left it this substep (so what leaves is never more than it holds);
  erode: suspended sediment carried by the substep's face flows (q times the upwind concentration,
       clear water entering through the sides; flux form), then the bed dissolves where the sediment is
       below the transport capacity C = capacity |v| max(sin a, 0.01) (no more than the water's depth)
       and takes deposits where it is above, never below the bedrock;
  slump: between lattice neighbours whose bed slope is steeper than the talus angle, the higher gives
       the lower `slump` of the excess height a second (no more than it has above its bedrock).
References: Mei, Decaudin & Hu 2007; Stava et al. 2008 (made conservative: flux form, no semi-Lagrangian
step).
"""
from __future__ import annotations

import math

import numpy as np

from .probes import cell_velocity
from .water import Lattice, State, _boundary_cells, _pairs

# velocities only where water is deeper than this many cells (a film's flow / depth is no speed); the
# slope a flat bed counts for
SPEED_DEPTH_CELLS = 1e-3
SLOPE_FLOOR = 0.01
NO_FLOOR = -3.0e38


def outgoing(flows, ny, nx) -> np.ndarray:
    """The volume rate each cell sends out through its faces."""
    qx, qy = flows[0], flows[1]
    out = (np.maximum(-qx[:, :-1], 0) + np.maximum(qx[:, 1:], 0)
           + np.maximum(-qy[:-1, :], 0) + np.maximum(qy[1:, :], 0))
    if len(flows) == 3:
        qz = flows[2]
        out += np.maximum(-qz[0:ny, 1:nx + 1], 0) + np.maximum(qz[1:ny + 1, 0:nx], 0)
    return out


def concentration(sediment, water, out_rate, dt, cell_area) -> np.ndarray:
    """c = s / (h + out dt / S); 0 where both are 0."""
    mixed = water + out_rate * dt / cell_area
    return np.where(mixed > 0, sediment / np.where(mixed > 0, mixed, 1.0), 0.0)


def sediment_flows(s: State, flows, conc) -> tuple[list, np.ndarray]:
    """Per face, the sediment it carries (volume rate): its flow times the concentration upwind; a
    boundary face carries its inside cell's where it leaves, nothing where clear water enters. Also the
    boundary faces' sediment entering the grid, as rates."""
    ny, nx = s.water.shape
    out = [np.zeros_like(q) for q in flows]
    for k, face, a, b in _pairs(ny, nx, s.hexagonal):
        q = flows[k][face]
        out[k][face] = q * np.where(q > 0, conc[a], conc[b])
    arr, i, j, cx, cy, sign = _boundary_cells(s)
    entering = np.zeros(len(arr))
    for n, (k, ii, jj) in enumerate(zip(arr, i, j)):
        q = flows[k][jj, ii]
        leaving = sign[n] * q < 0
        g = q * conc[cy[n], cx[n]] if leaving else 0.0
        out[k][jj, ii] = g
        entering[n] = sign[n] * g
    return out, entering


def net_inflow(flows, ny, nx) -> np.ndarray:
    qx, qy = flows[0], flows[1]
    net = qx[:, :-1] - qx[:, 1:] + qy[:-1, :] - qy[1:, :]
    if len(flows) == 3:
        qz = flows[2]
        net = net + qz[0:ny, 1:nx + 1] - qz[1:ny + 1, 0:nx]
    return net


def _neighbour(z, dy, dx):
    """z of the neighbour at offset (dy, dx), a cell's own where that is off the grid."""
    ny, nx = z.shape
    out = z.copy()
    ys, yd = (slice(0, ny - dy), slice(dy, ny)) if dy >= 0 else (slice(-dy, ny), slice(0, ny + dy))
    xs, xd = (slice(0, nx - dx), slice(dx, nx)) if dx >= 0 else (slice(-dx, nx), slice(0, nx + dx))
    out[ys, xs] = z[yd, xd]
    return out


def slope_sine(z, lat: Lattice, hexagonal: bool) -> np.ndarray:
    """sin of the bed's slope from central differences (a neighbour off the grid counts as level); on the
    hex lattice the least-squares gradient 2/3 sum_k d_k e_k of the three axes' differences d_k."""
    l = lat.pipe_length
    dx = (_neighbour(z, 0, 1) - _neighbour(z, 0, -1)) / (2 * l)
    dy = (_neighbour(z, 1, 0) - _neighbour(z, -1, 0)) / (2 * l)
    if hexagonal:                   # axes e1 (x), e2 (axial +y), e3 (axial (-1, +1))
        dz = (_neighbour(z, 1, -1) - _neighbour(z, -1, 1)) / (2 * l)
        gx = 2.0 / 3.0 * (dx + 0.5 * dy - 0.5 * dz)
        gy = 2.0 / 3.0 * math.sqrt(3.0) / 2.0 * (dy + dz)
    else:
        gx, gy = dx, dy
    g2 = gx * gx + gy * gy
    return np.sqrt(g2 / (1.0 + g2))


def capacity(erosion, speed, sine, water) -> np.ndarray:
    """The sediment the water can carry, as settled height: capacity |v| max(sin a, SLOPE_FLOOR), no more
    than the water's depth."""
    return np.minimum(erosion.capacity * speed * np.maximum(sine, SLOPE_FLOOR), water)


def exchanged(erosion, dt, sediment, cap, terrain, bedrock) -> np.ndarray:
    """What the bed gives the water this substep (negative: takes from it): min(dissolve dt, 1) of the
    shortfall below capacity, never below the bedrock, or min(deposit dt, 1) of the excess."""
    dissolve = min(erosion.dissolve * dt, 1.0) * (cap - sediment)
    dissolve = np.minimum(dissolve, np.maximum(terrain - bedrock, 0.0))
    deposit = min(erosion.deposit * dt, 1.0) * (sediment - cap)
    return np.where(sediment < cap, dissolve, -deposit)


def slump_flow(z_a, z_b, rock_a, rock_b, drop, rate, faces):
    """The material a face carries from cell a to cell b (negative: b to a) as height: `rate` of half
    the height difference beyond `drop`, from the higher, no more than 1/faces of what it has above its
    bedrock."""
    d = z_a - z_b
    excess = np.abs(d) - drop
    t = np.where(excess > 0, rate * 0.5 * excess, 0.0)
    spare = np.where(d > 0, z_a - rock_a, z_b - rock_b) / faces
    return np.sign(d) * np.minimum(t, np.maximum(spare, 0.0))


def slump(z, rock, erosion, dt, lat: Lattice, hexagonal: bool) -> np.ndarray:
    """The bed after a substep of slumping."""
    ny, nx = z.shape
    faces = 6 if hexagonal else 4
    drop = lat.pipe_length * math.tan(math.radians(erosion.talus))
    rate = min(erosion.slump * dt, 1.0 / faces)
    shapes = [(ny, nx + 1), (ny + 1, nx)] + [(ny + 1, nx + 1)] * hexagonal
    flows = [np.zeros(shape) for shape in shapes]
    for k, face, a, b in _pairs(ny, nx, hexagonal):
        flows[k][face] = slump_flow(z[a], z[b], rock[a], rock[b], drop, rate, faces)
    return z + net_inflow(flows, ny, nx)


def erode(s: State, erosion, dt: float) -> float:
    """One substep of erosion on `s` after its water substep (s.flow_*: the substep's scaled flows,
    s.water: the water it left); updates s.terrain and s.sediment. Returns the sediment volume that
    entered the grid through its sides (negative: left it)."""
    ny, nx = s.water.shape
    lat, flows = s.lattice, s.flows()
    rock = s.bedrock if s.bedrock is not None else np.full((ny, nx), NO_FLOOR)
    conc = concentration(s.sediment, s.water, outgoing(flows, ny, nx), dt, lat.cell_area)
    carried, entering = sediment_flows(s, flows, conc)
    sediment = np.maximum(s.sediment + dt / lat.cell_area * net_inflow(carried, ny, nx), 0.0)
    speed = np.hypot(*np.moveaxis(cell_velocity(s.water, flows, lat.face_width,
                                                SPEED_DEPTH_CELLS * s.params.cell_size), -1, 0))
    cap = capacity(erosion, speed, slope_sine(s.terrain, lat, s.hexagonal), s.water)
    e = exchanged(erosion, dt, sediment, cap, s.terrain, rock)
    s.sediment = sediment + e
    s.terrain = slump(s.terrain - e, rock, erosion, dt, lat, s.hexagonal)
    return float(dt * entering.sum())


def material(s: State) -> float:
    """(terrain + sediment) x cell area, summed."""
    return float((s.terrain + s.sediment).sum() * s.lattice.cell_area)
