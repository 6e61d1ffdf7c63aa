"""Peer benchmark: the virtual-pipes water step as NumPy float32 array code on the CPU.

What a Python user without a GPU would write for hydro's step (the model of hydro.reference.water for a
square grid, pipe_area="depth", all-wall boundaries): whole-array slicing, no Python loop over cells,
float32 arrays updated in place through preallocated scratch. The CPU-rasteriser figure hydro must
beat (docs/benchmarks.md).

Arrays are [y, x]; flow_x (ny, nx+1) runs from cell x-1 to x, flow_y (ny+1, nx) from row y-1 to y.
Faces on the grid edge are walls and stay 0.
"""
from __future__ import annotations

import numpy as np


class NumpyPipes:
    def __init__(self, terrain, water, gravity=9.81, friction=0.02, cell_size=1.0):
        f32 = np.float32
        self.z, self.h = np.array(terrain, f32), np.array(water, f32)
        ny, nx = self.h.shape
        self.qx, self.qy = np.zeros((ny, nx + 1), f32), np.zeros((ny + 1, nx), f32)
        self.gravity, self.friction, self.cell_size = gravity, friction, cell_size
        self.eta = np.empty((ny, nx), f32)
        self.k = np.ones((ny + 2, nx + 2), f32)          # outflow scale, 1 outside the grid (walls)
        self.ax, self.ay = np.empty((ny, nx - 1), f32), np.empty((ny - 1, nx), f32)
        self.tx, self.ty = np.empty((ny, nx - 1), f32), np.empty((ny - 1, nx), f32)
        self.out, self.tmp = np.empty((ny, nx), f32), np.empty((ny, nx), f32)

    def substep(self, dt: float, r: float) -> None:
        z, h, qx, qy, eta, k = self.z, self.h, self.qx, self.qy, self.eta, self.k
        cs = self.cell_size
        gain = np.float32(dt * self.gravity / cs * cs)             # dt g / l times the face width
        np.add(z, h, out=eta)
        # accelerate: q <- q r + gain * (max eta - max z) * (eta_from - eta_to)
        for q, a, t, e0, e1, z0, z1 in ((qx[:, 1:-1], self.ax, self.tx, eta[:, :-1], eta[:, 1:], z[:, :-1], z[:, 1:]),
                                        (qy[1:-1], self.ay, self.ty, eta[:-1], eta[1:], z[:-1], z[1:])):
            np.maximum(e0, e1, out=a)
            np.subtract(a, np.maximum(z0, z1, out=t), out=a)
            np.subtract(e0, e1, out=t)
            a *= t
            a *= gain
            q *= np.float32(r)
            q += a
        # outflow scale K = min(1, h S / (dt outgoing)), each face scaled by its upwind cell's K
        out, tmp = self.out, self.tmp
        np.maximum(qx[:, 1:], 0, out=out)
        out -= np.minimum(qx[:, :-1], 0, out=tmp)
        out += np.maximum(qy[1:], 0, out=tmp)
        out -= np.minimum(qy[:-1], 0, out=tmp)
        out *= np.float32(dt)
        np.maximum(out, np.float32(1.17549435e-38), out=out)
        np.multiply(h, np.float32(cs * cs), out=tmp)
        np.divide(tmp, out, out=tmp)
        np.minimum(tmp, 1, out=k[1:-1, 1:-1])
        qx *= np.where(qx > 0, k[1:-1, :-1], k[1:-1, 1:])
        qy *= np.where(qy > 0, k[:-1, 1:-1], k[1:, 1:-1])
        # move: h <- max(h + dt / S (in - out), 0)
        np.subtract(qx[:, :-1], qx[:, 1:], out=tmp)
        tmp += qy[:-1]
        tmp -= qy[1:]
        tmp *= np.float32(dt / (cs * cs))
        h += tmp
        np.maximum(h, 0, out=h)

    def step(self, dt: float, n: int = 1) -> None:
        r = (1.0 - self.friction) ** dt if self.friction < 1.0 else 0.0
        for _ in range(n):
            self.substep(dt, r)

    def sync(self) -> None:
        pass

    def water(self) -> np.ndarray:
        return self.h.copy()


def make(terrain, water, gravity=9.81, friction=0.02, cell_size=1.0, **kw) -> NumpyPipes:
    return NumpyPipes(terrain, water, gravity, friction, cell_size)
