"""Peer benchmark: the virtual-pipes water step as plain PyTorch tensor ops (float32).

Shows how a Python user would write hydro's step (twin of hydro.reference.water.step
for a square grid, pipe_area="depth", all-wall boundaries) with torch on a GPU: whole-array slicing,
no Python loop over cells, in-place updates where they are obvious, no custom kernels. Runs on 'cuda'
when available, else on the CPU. `compile=True` wraps the step in torch.compile (opt-in: it needs a
working Triton/C compiler and a warm-up compile of a few seconds).

Arrays are [y, x]; flow_x (ny, nx+1) runs from cell x-1 to x, flow_y (ny+1, nx) from row y-1 to y.
Faces on the grid edge are walls and stay 0.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


def substep(z, h, qx, qy, dt: float, r: float, gravity: float, cs: float):
    """One step; returns the new (h, qx, qy). r = (1 - friction)^dt."""
    area_cell, width, coef = cs * cs, cs, gravity / cs      # S, w, g/l
    eta = z + h

    # accelerate: q <- q r + dt g A / l (eta_from - eta_to), A = max(max eta - max z, 0) w
    a = (torch.maximum(eta[:, :-1], eta[:, 1:]) - torch.maximum(z[:, :-1], z[:, 1:])).clamp_(min=0)
    qx[:, 1:-1].mul_(r).add_(a * (eta[:, :-1] - eta[:, 1:]), alpha=dt * coef * width)
    a = (torch.maximum(eta[:-1], eta[1:]) - torch.maximum(z[:-1], z[1:])).clamp_(min=0)
    qy[1:-1].mul_(r).add_(a * (eta[:-1] - eta[1:]), alpha=dt * coef * width)

    # scale outflow: K = min(1, h S / (dt sum of outgoing)); each face scaled by its upwind cell's K
    out = ((-qx[:, :-1]).clamp(min=0) + qx[:, 1:].clamp(min=0)
           + (-qy[:-1]).clamp(min=0) + qy[1:].clamp(min=0)) * dt
    held = h * area_cell
    k = torch.where(out > held, held / out, torch.ones_like(out))   # out > held >= 0 where taken: no 0/0
    k = F.pad(k, (1, 1, 1, 1), value=1.0)                           # walls: K = 1 outside the grid
    qx = torch.where(qx > 0, qx * k[1:-1, :-1], qx * k[1:-1, 1:])
    qy = torch.where(qy > 0, qy * k[:-1, 1:-1], qy * k[1:, 1:-1])

    # move: h <- max(h + dt/S (in - out), 0)
    net = qx[:, :-1] - qx[:, 1:] + qy[:-1] - qy[1:]
    return (h + (dt / area_cell) * net).clamp_(min=0), qx, qy


class TorchPipes:
    def __init__(self, terrain, water, gravity=9.81, friction=0.02, cell_size=1.0, device=None,
                 compile=False):
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        as_tensor = lambda a: torch.as_tensor(np.asarray(a, np.float32), device=self.device).clone()
        self.z, self.h = as_tensor(terrain), as_tensor(water)
        ny, nx = self.h.shape
        self.qx = torch.zeros(ny, nx + 1, device=self.device)
        self.qy = torch.zeros(ny + 1, nx, device=self.device)
        self.gravity, self.friction, self.cell_size = gravity, friction, cell_size
        self._substep = torch.compile(substep) if compile else substep

    @torch.inference_mode()
    def step(self, dt: float, n: int = 1) -> None:
        """Advance n steps of dt seconds each (no synchronisation, no readback)."""
        r = (1.0 - self.friction) ** dt if self.friction < 1.0 else 0.0
        for _ in range(n):
            self.h, self.qx, self.qy = self._substep(self.z, self.h, self.qx, self.qy, float(dt), float(r),
                                                     self.gravity, self.cell_size)

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def water(self) -> np.ndarray:
        return self.h.cpu().numpy().copy()


def make(terrain, water, gravity=9.81, friction=0.02, cell_size=1.0, **kw) -> TorchPipes:
    return TorchPipes(terrain, water, gravity, friction, cell_size, **kw)
