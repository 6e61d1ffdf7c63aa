"""Peer benchmark: the virtual-pipes water step as three CuPy RawKernels (float32, CUDA C).

Shows what a Python user who writes their own CUDA gets for hydro's step (twin of
hydro.reference.water.step for a square grid, pipe_area="depth", all-wall boundaries): one thread per
cell, three launches per step named after the passes (accelerate, scale, move), like hydro's shaders.

Arrays are [y, x] row-major; flow_x (ny, nx+1) runs from cell x-1 to x, flow_y (ny+1, nx) from row y-1
to y. Wall faces on the grid edge are never written and stay 0.
"""
from __future__ import annotations

import cupy as cp
import numpy as np

_SOURCE = r"""
#define QX(x, y) qx[(y) * (nx + 1) + (x)]
#define QY(x, y) qy[(y) * nx + (x)]

// q <- q r + dt g A / l (eta_from - eta_to), A = max(max eta - max z, 0) w. Each cell owns the
// face on its left (x >= 1) and the one below it (y >= 1).
extern "C" __global__ void accelerate(const float* z, const float* h, float* qx, float* qy,
                                      int nx, int ny, float r, float dt_g_w_over_l) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int c = y * nx + x;
    float zc = z[c], ec = zc + h[c];
    if (x > 0) {
        float zf = z[c - 1], ef = zf + h[c - 1];
        float a = fmaxf(fmaxf(ef, ec) - fmaxf(zf, zc), 0.0f);
        QX(x, y) = QX(x, y) * r + dt_g_w_over_l * a * (ef - ec);
    }
    if (y > 0) {
        float zf = z[c - nx], ef = zf + h[c - nx];
        float a = fmaxf(fmaxf(ef, ec) - fmaxf(zf, zc), 0.0f);
        QY(x, y) = QY(x, y) * r + dt_g_w_over_l * a * (ef - ec);
    }
}

// K = min(1, h S / (dt sum of outgoing)); the cell scales its own outgoing faces in place. A face is
// outgoing for one cell only and scaling keeps its sign, so a neighbour reading it concurrently
// counts it as 0 either way: the result does not depend on the order.
extern "C" __global__ void scale(const float* h, float* qx, float* qy, int nx, int ny, float dt,
                                 float cell_area) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    float left = QX(x, y), right = QX(x + 1, y), down = QY(x, y), up = QY(x, y + 1);
    float out = (fmaxf(-left, 0.0f) + fmaxf(right, 0.0f) + fmaxf(-down, 0.0f) + fmaxf(up, 0.0f)) * dt;
    float held = h[y * nx + x] * cell_area;
    if (out <= held) return;
    float k = held / out;
    if (left < 0.0f) QX(x, y) = left * k;
    if (right > 0.0f) QX(x + 1, y) = right * k;
    if (down < 0.0f) QY(x, y) = down * k;
    if (up > 0.0f) QY(x, y + 1) = up * k;
}

// h <- max(h + dt/S (in - out), 0)
extern "C" __global__ void move(float* h, const float* qx, const float* qy, int nx, int ny,
                                float dt_over_s) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    float net = QX(x, y) - QX(x + 1, y) + QY(x, y) - QY(x, y + 1);
    h[y * nx + x] = fmaxf(h[y * nx + x] + dt_over_s * net, 0.0f);
}
"""

_module = None


def _kernels():
    global _module
    if _module is None:
        _module = cp.RawModule(code=_SOURCE)
    return (_module.get_function(name) for name in ("accelerate", "scale", "move"))


class CupyPipes:
    BLOCK = (32, 8)

    def __init__(self, terrain, water, gravity=9.81, friction=0.02, cell_size=1.0):
        self.z = cp.asarray(np.ascontiguousarray(terrain, np.float32))
        self.h = cp.asarray(np.ascontiguousarray(water, np.float32))
        ny, nx = self.h.shape
        self.nx, self.ny = nx, ny
        self.qx = cp.zeros((ny, nx + 1), cp.float32)
        self.qy = cp.zeros((ny + 1, nx), cp.float32)
        self.gravity, self.friction, self.cell_size = gravity, friction, cell_size
        self.grid = (-(-nx // self.BLOCK[0]), -(-ny // self.BLOCK[1]))
        self._accelerate, self._scale, self._move = _kernels()

    def step(self, dt: float, n: int = 1) -> None:
        """Advance n steps of dt seconds each on the current stream (no synchronisation, no readback)."""
        cs, f32 = self.cell_size, np.float32
        r = (1.0 - self.friction) ** dt if self.friction < 1.0 else 0.0
        nx, ny = np.int32(self.nx), np.int32(self.ny)
        dt_g_w_over_l = dt * self.gravity / cs * cs
        acc_args = (self.z, self.h, self.qx, self.qy, nx, ny, f32(r), f32(dt_g_w_over_l))
        scale_args = (self.h, self.qx, self.qy, nx, ny, f32(dt), f32(cs * cs))
        move_args = (self.h, self.qx, self.qy, nx, ny, f32(dt / (cs * cs)))
        for _ in range(n):
            self._accelerate(self.grid, self.BLOCK, acc_args)
            self._scale(self.grid, self.BLOCK, scale_args)
            self._move(self.grid, self.BLOCK, move_args)

    def sync(self) -> None:
        cp.cuda.get_current_stream().synchronize()

    def water(self) -> np.ndarray:
        return cp.asnumpy(self.h)


def make(terrain, water, gravity=9.81, friction=0.02, cell_size=1.0) -> CupyPipes:
    return CupyPipes(terrain, water, gravity, friction, cell_size)
