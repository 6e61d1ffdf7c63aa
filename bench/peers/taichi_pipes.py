"""Peer benchmark: the virtual-pipes water step in Taichi (ti.kernel over ti.field, float32).

Shows what a Python user gets for hydro's step (twin of hydro.reference.water.step
for a square grid, pipe_area="depth", all-wall boundaries) by writing it in Taichi: three kernels named
after the passes (accelerate, scale, move), one parallel loop per pass. `init()` asks for CUDA, then
Vulkan, and Taichi falls back to the CPU; call `init(ti.cpu)` before `make()` to force the CPU. (Not plain
`ti.gpu`: its OpenGL fallback segfaults in Taichi 1.7.4 on headless Mesa machines.)

Arrays are [y, x]; flow_x (ny, nx+1) runs from cell x-1 to x, flow_y (ny+1, nx) from row y-1 to y.
Wall faces on the grid edge are never written and stay 0. (No `from __future__ import annotations`:
Taichi reads the kernel argument annotations as types.)
"""

import numpy as np
import taichi as ti

_arch = None


def init(arch=None) -> str:
    """Initialise Taichi once (default CUDA, else Vulkan, else the CPU); returns the arch name."""
    global _arch
    if _arch is None:
        ti.init(arch=arch if arch is not None else [ti.cuda, ti.vulkan], default_fp=ti.f32)
        _arch = str(ti.lang.impl.current_cfg().arch).split(".")[-1]
    return _arch


@ti.data_oriented
class TaichiPipes:
    def __init__(self, terrain, water, gravity=9.81, friction=0.02, cell_size=1.0):
        init()
        terrain = np.ascontiguousarray(terrain, np.float32)
        ny, nx = terrain.shape
        self.z = ti.field(ti.f32, shape=(ny, nx))
        self.h = ti.field(ti.f32, shape=(ny, nx))
        self.qx = ti.field(ti.f32, shape=(ny, nx + 1))
        self.qy = ti.field(ti.f32, shape=(ny + 1, nx))
        self.k = ti.field(ti.f32, shape=(ny, nx))          # outflow scale of each cell
        self.z.from_numpy(terrain)
        self.h.from_numpy(np.ascontiguousarray(water, np.float32))
        self.gravity, self.friction, self.cell_size = gravity, friction, cell_size

    @ti.kernel
    def accelerate(self, r: ti.f32, dt_g_w_over_l: ti.f32):
        """q <- q r + dt g A / l (eta_from - eta_to), A = max(max eta - max z, 0) w, interior faces."""
        ny, nx = self.h.shape
        for y, x in ti.ndrange(ny, nx):
            zc = self.z[y, x]
            ec = zc + self.h[y, x]
            if x > 0:
                zf = self.z[y, x - 1]
                ef = zf + self.h[y, x - 1]
                a = ti.max(ti.max(ef, ec) - ti.max(zf, zc), 0.0)
                self.qx[y, x] = self.qx[y, x] * r + dt_g_w_over_l * a * (ef - ec)
            if y > 0:
                zf = self.z[y - 1, x]
                ef = zf + self.h[y - 1, x]
                a = ti.max(ti.max(ef, ec) - ti.max(zf, zc), 0.0)
                self.qy[y, x] = self.qy[y, x] * r + dt_g_w_over_l * a * (ef - ec)

    @ti.kernel
    def scale(self, dt: ti.f32, cell_area: ti.f32):
        """K = min(1, h S / (dt sum of outgoing)) per cell, then each face times its upwind cell's K."""
        ny, nx = self.h.shape
        for y, x in self.k:
            out = (ti.max(-self.qx[y, x], 0.0) + ti.max(self.qx[y, x + 1], 0.0)
                   + ti.max(-self.qy[y, x], 0.0) + ti.max(self.qy[y + 1, x], 0.0)) * dt
            held = self.h[y, x] * cell_area
            self.k[y, x] = held / out if out > held else 1.0
        for y, x in ti.ndrange(ny, (1, nx)):                # top-level loops run one after the other
            q = self.qx[y, x]
            self.qx[y, x] = q * (self.k[y, x - 1] if q > 0 else self.k[y, x])
        for y, x in ti.ndrange((1, ny), nx):
            q = self.qy[y, x]
            self.qy[y, x] = q * (self.k[y - 1, x] if q > 0 else self.k[y, x])

    @ti.kernel
    def move(self, dt_over_s: ti.f32):
        """h <- max(h + dt/S (in - out), 0)"""
        for y, x in self.h:
            net = self.qx[y, x] - self.qx[y, x + 1] + self.qy[y, x] - self.qy[y + 1, x]
            self.h[y, x] = ti.max(self.h[y, x] + dt_over_s * net, 0.0)

    def step(self, dt: float, n: int = 1) -> None:
        """Advance n steps of dt seconds each (kernels are queued; no ti.sync, no readback)."""
        cs = self.cell_size
        r = (1.0 - self.friction) ** dt if self.friction < 1.0 else 0.0
        for _ in range(n):
            self.accelerate(r, dt * self.gravity / cs * cs)      # dt g w / l
            self.scale(dt, cs * cs)
            self.move(dt / (cs * cs))

    def sync(self) -> None:
        ti.sync()

    def water(self) -> np.ndarray:
        return self.h.to_numpy()


def make(terrain, water, gravity=9.81, friction=0.02, cell_size=1.0) -> TaichiPipes:
    return TaichiPipes(terrain, water, gravity, friction, cell_size)
