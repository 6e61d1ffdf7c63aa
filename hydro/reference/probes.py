"""NumPy float64 statements of what a game asks of the water (hydro.water_probes): the water at points
(bilinear in grid coordinates between cell values, velocities from the face flows) and what crossed a
gauge's line (the faces whose pipe, the segment between its two cells' centres, the line cuts).
Conventions as hydro.reference.water: arrays [y, x]; flow_x (ny, nx+1) from (x-1, y) to (x, y);
flow_y (ny+1, nx) from (x, y-1) to (x, y); hex flow_z (ny+1, nx+1) from (x, y-1) to (x-1, y); grid
coordinates (x, y) put cell [y, x] at integer (x, y) (axial on the hex lattice).
"""
from __future__ import annotations

import math

import numpy as np


def cell_velocity(water, flows, face_width: float, min_depth: float) -> np.ndarray:
    """(ny, nx, 2) velocity per cell, world units/s: the mean of each axis' two faces / (depth * face
    width); on the hex lattice v = 2/3 sum_k f_k e_k over e1 = (1, 0), e2 = (1/2, sqrt3/2),
    e3 = (-1/2, sqrt3/2); 0 where the depth is not above min_depth."""
    water = np.asarray(water, np.float64)
    ny, nx = water.shape
    qx, qy = (np.asarray(q, np.float64) for q in flows[:2])
    fx, fy = 0.5 * (qx[:, :-1] + qx[:, 1:]), 0.5 * (qy[:-1, :] + qy[1:, :])
    if len(flows) == 3:
        qz = np.asarray(flows[2], np.float64)
        fz = 0.5 * (qz[0:ny, 1:nx + 1] + qz[1:ny + 1, 0:nx])
        vx = 2.0 / 3.0 * (fx + 0.5 * fy - 0.5 * fz)
        vy = 2.0 / 3.0 * math.sqrt(3.0) / 2.0 * (fy + fz)
    else:
        vx, vy = fx, fy
    wet = water > min_depth
    area = np.where(wet, water * face_width, 1.0)
    return np.stack([np.where(wet, vx / area, 0.0), np.where(wet, vy / area, 0.0)], axis=-1)


def bilinear(values: np.ndarray, points) -> np.ndarray:
    """values (ny, nx, ...) at points (N, 2) of (x, y), bilinear between the four cells around each point
    after clamping it to the cell centres."""
    ny, nx = values.shape[:2]
    p = np.asarray(points, np.float64)
    x, y = np.clip(p[:, 0], 0, nx - 1), np.clip(p[:, 1], 0, ny - 1)
    x0, y0 = np.minimum(np.floor(x).astype(int), max(nx - 2, 0)), np.minimum(np.floor(y).astype(int), max(ny - 2, 0))
    x1, y1 = np.minimum(x0 + 1, nx - 1), np.minimum(y0 + 1, ny - 1)
    fx, fy = x - x0, y - y0
    extra = (slice(None),) + (None,) * (values.ndim - 2)
    fx, fy = fx[extra], fy[extra]
    below = values[y0, x0] * (1 - fx) + values[y0, x1] * fx
    above = values[y1, x0] * (1 - fx) + values[y1, x1] * fx
    return below * (1 - fy) + above * fy


def sample(terrain, water, flows, points, face_width: float, min_depth: float) -> np.ndarray:
    """(N, 4): depth, surface, vx, vy at the points (hydro's WaterGrid.sample)."""
    terrain, water = np.asarray(terrain, np.float64), np.asarray(water, np.float64)
    cells = np.concatenate([water[..., None], (terrain + water)[..., None],
                            cell_velocity(water, flows, face_width, min_depth)], axis=-1)
    return bilinear(cells, points)


def gauge_faces(p0, p1, nx: int, ny: int, hexagonal: bool) -> list:
    """The faces a gauge from p0 to p1 counts, with their signs, one face at a time: a face with a cell
    of the grid at one end at least whose pipe, from the centre of its from-cell a to that of its
    to-cell b, goes from the line's negative side (or the line itself) to its positive side (+1) or
    back (-1), meeting the line at a point p0 + t (p1 - p0) with t in [0, 1]. The positive side is that
    of the normal n = (y1 - y0, -(x1 - x0)). Returns [(array, i, j, sign)] in array, row, column order."""
    (x0, y0), (x1, y1) = (tuple(map(float, p)) for p in (p0, p1))
    dx, dy = x1 - x0, y1 - y0

    def side(x, y):                     # (point - p0) . n
        return (x - x0) * dy - (y - y0) * dx

    def in_grid(x, y):
        return 0 <= x < nx and 0 <= y < ny

    faces = []
    arrays = [(ny, nx + 1, (-1, 0), (0, 0)), (ny + 1, nx, (0, -1), (0, 0))]
    if hexagonal:
        arrays.append((ny + 1, nx + 1, (0, -1), (-1, 0)))
    for k, (rows, cols, a_off, b_off) in enumerate(arrays):
        for j in range(rows):
            for i in range(cols):
                ax, ay, bx, by = i + a_off[0], j + a_off[1], i + b_off[0], j + b_off[1]
                if not (in_grid(ax, ay) or in_grid(bx, by)):
                    continue
                sa, sb = side(ax, ay), side(bx, by)
                sign = 1 if sa <= 0 < sb else -1 if sb <= 0 < sa else 0
                if not sign:
                    continue
                u = sa / (sa - sb)
                mx, my = ax + u * (bx - ax), ay + u * (by - ay)
                t = ((mx - x0) * dx + (my - y0) * dy) / (dx * dx + dy * dy)
                if 0.0 <= t <= 1.0:
                    faces.append((k, i, j, sign))
    return faces


def gauge_volume(faces, flows, dt: float) -> float:
    """What crossed the faces [(array, i, j, sign)] in a substep of dt with scaled flows `flows`:
    (sum of sign * q) * dt, summed in the faces' order."""
    rate = 0.0
    for k, i, j, sign in faces:
        rate += sign * float(flows[k][j, i])
    return rate * float(dt)
