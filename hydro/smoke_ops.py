"""What SmokeGrid works out on the CPU: the box's boundaries and the type of every velocity face, what a
splat adds to the scalars' totals, and the coefficients of the viscosity and density-diffusion solves.

Grid conventions (shaders/smoke/mac.glsl spells out the same): vx (ny, nx+1) on vertical faces, face
[j, i] between cells [j, i-1] and [j, i]; vy (ny+1, nx) on horizontal faces; the scalars (density,
temperature, fuel) at cell centres; y points up, row 0 is the bottom side. Sides are (left, right,
bottom, top). hydro.reference.smoke states the same model in float64, apart from this module, and the
tests compare the two.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

FREE_SLIP, NO_SLIP, OPEN = 0, 1, 2
KINDS = {"free-slip": FREE_SLIP, "no-slip": NO_SLIP, "open": OPEN}
SIDES = ("left", "right", "bottom", "top")
FACE_FLUID, FACE_FIXED, FACE_OPEN = 0, 1, 2
DIFFUSION_TOLERANCE = 1e-5     # an implicit diffusion solve (viscosity, density) runs until its error bound
                               # |v - v_exact| / |v*| is below this


class Bc(NamedTuple):
    """Per side (left, right, bottom, top): kind code and the wall's tangential velocity (v on the
    left and right walls, u on the bottom and top ones; a no-slip wall slides with it: a lid)."""
    kind: tuple = (FREE_SLIP,) * 4
    tangent: tuple = (0.0,) * 4


def face_types(solid: np.ndarray, bc: Bc):
    """FACE_FLUID / FACE_FIXED (a wall or an obstacle's face: velocity 0) / FACE_OPEN of every vx and vy
    face. The cells are padded with a ring of outside cells, solid past a wall and gas past an open
    side: a face between two gas cells is free, and open where one of them is outside."""
    ny, nx = solid.shape
    gas = np.zeros((ny + 2, nx + 2), bool)
    gas[1:-1, 1:-1] = ~solid
    for side, index in ((0, (slice(1, -1), 0)), (1, (slice(1, -1), -1)), (2, (0, slice(1, -1))), (3, (-1, slice(1, -1)))):
        gas[index] = bc.kind[side] == OPEN
    outside = np.ones((ny + 2, nx + 2), bool)
    outside[1:-1, 1:-1] = False

    def types(a, b, out_a, out_b):
        free = a & b
        return np.where(free & (out_a | out_b), FACE_OPEN, np.where(free, FACE_FLUID, FACE_FIXED)).astype(np.int32)

    tx = types(gas[1:-1, :-1], gas[1:-1, 1:], outside[1:-1, :-1], outside[1:-1, 1:])
    ty = types(gas[:-1, 1:-1], gas[1:, 1:-1], outside[:-1, 1:-1], outside[1:, 1:-1])
    return tx, ty


def solid_scalars(t_ambient) -> np.ndarray:
    """What a solid cell stores (density, temperature, fuel): no gas, the ambient temperature."""
    return np.array([0.0, t_ambient, 0.0])


def centre_velocity(vx, vy) -> np.ndarray:
    """The faces' velocity at cell centres (ny, nx, 2), each component the mean of its two faces."""
    return np.stack([(vx[:, :-1] + vx[:, 1:]) / 2, (vy[:-1] + vy[1:]) / 2], axis=-1)


def brush_sum(solid, x, y, radius) -> float:
    """The sum over fluid cells of a splat's weight w = (1 - (d/R)^2)^2 (shaders/smoke/splat.comp),
    d the distance of the cell's centre from (x, y): what a splat of amount 1 adds to a scalar's total,
    in cells (times the cell area in world units)."""
    ny, nx = solid.shape
    x0, x1 = max(math.floor(x - radius), 0), min(math.ceil(x + radius), nx - 1)
    y0, y1 = max(math.floor(y - radius), 0), min(math.ceil(y + radius), ny - 1)
    if x1 < x0 or y1 < y0:
        return 0.0
    gy, gx = np.mgrid[y0:y1 + 1, x0:x1 + 1]
    w = np.maximum(1.0 - ((gx - x) ** 2 + (gy - y) ** 2) / (radius * radius), 0.0) ** 2
    return float(w[~solid[y0:y1 + 1, x0:x1 + 1]].sum())


def cfl_substeps(speed, dt, cell_size, max_cfl, cap=10_000) -> int:
    """Substeps of a step of dt that carry gas at `speed` (world units/s) at most `max_cfl` cells each:
    ceil(speed dt / (max_cfl h)), at least 1, at most `cap` (a diverged field should not hang a frame)."""
    cells = speed * dt / (max_cfl * cell_size)
    if not math.isfinite(cells):
        return cap
    return min(max(math.ceil(cells - 1e-9), 1), cap)


def planned_speed(speed, pushes, lift, seconds, vorticity) -> float:
    """A bound on the face speed `seconds` after a record of `speed`, for max_cfl's plan: the forces
    add at most the buoyancy `lift` and the confinement 4 eps v (|curl| <= 4 v / h) a second, and the
    splats `pushes` (each splat's largest |v|), so v <= (speed + pushes + lift t) exp(4 eps t)."""
    return (speed + pushes + lift * seconds) * math.exp(4.0 * vorticity * seconds)


def chebyshev_coefficients(a, tol, cap):
    """Coefficients (c1, c2) of each Chebyshev iteration v' = v + c1 (v - v_prev) + c2 (v* - A v) of an
    implicit diffusion solve A v = v*, A = I - a Laplacian (a = k dt / h^2, k the viscosity or the
    density diffusion) with its spectrum in [1, 1 + 8a] (Saad 2003, alg. 12.1: theta = 1 + 4a,
    delta = 4a, sigma = theta / delta), as many as bring the error bound 1 / T_m(sigma) (relative to
    |v*|) below `tol`, at most `cap`. Returns the list and the bound reached; a = 0: none, bound 0."""
    if a <= 0.0:
        return [], 0.0
    theta, delta = 1.0 + 4.0 * a, 4.0 * a
    sigma = theta / delta
    m = min(cap, max(1, int(np.ceil(np.arccosh(1.0 / tol) / np.arccosh(sigma)))))
    coeffs = [(0.0, 1.0 / theta)]
    rho = 1.0 / sigma
    for _ in range(m - 1):
        rho_new = 1.0 / (2.0 * sigma - rho)
        coeffs.append((rho_new * rho, 2.0 * rho_new / delta))
        rho = rho_new
    return coeffs, float(1.0 / np.cosh(m * np.arccosh(sigma)))


def chebyshev_iterations(rhs, free, coeffs, iterate):
    """Chebyshev iterations from x_0 = rhs: iterate(cur, prev, out, c1, c2) writes each into the
    next of the `free` textures (or pairs of them), which rotate. Returns the one holding the
    result and the others."""
    free = list(free)
    cur, prev = rhs, rhs
    for c1, c2 in coeffs:
        out = free.pop(0)
        iterate(cur, prev, out, c1, c2)
        if prev is not rhs:
            free.append(prev)
        cur, prev = out, cur
    if prev is not rhs:
        free.append(prev)
    return cur, [t for t in free if t is not cur]
