"""Peer benchmarks: hydro's virtual-pipes step (hydro.reference.water.step) written the way a Python user would
otherwise write it on a GPU, to time against hydro in the same run.

Each peer module (numpy_pipes, torch_pipes, cupy_pipes, taichi_pipes) has `make(terrain, water, gravity, friction,
cell_size)` returning an object with `.step(dt, n)` (n steps of dt, queued, no readback), `.sync()` and
`.water()` (a NumPy copy). All compute exactly hydro.reference.water.step for a square grid,
pipe_area="depth" and walls on every side, in float32. `run.py` times them and checks them.

This file holds the scenes both run.py and tests/test_peers.py use; it imports only NumPy and hydro.
"""
from __future__ import annotations

import math

import numpy as np

PEERS = ("numpy", "torch", "cupy", "taichi")
GRAVITY, FRICTION, CELL_SIZE = 9.81, 0.02, 1.0


def stable_dt(terrain, water, safety=0.5, gravity=GRAVITY, cell_size=CELL_SIZE) -> float:
    """A substep well inside the stability bound dt^2 (K/S) mu <= 2 (1 + r) (hydro.params.stable, r >= 0
    dropped), K/S = g A / (l S) for the deepest possible pipe (highest surface over the lowest bed)."""
    depth = float(np.max(terrain + water) - np.min(terrain))
    coupling = gravity * depth * cell_size / (cell_size * cell_size ** 2)
    return safety * math.sqrt(2.0 / (coupling * 8.0))


def random_case(nx=48, ny=40, seed=0):
    """Rough random terrain with random water and dry patches, so outflow scaling and drying both act."""
    rng = np.random.default_rng(seed)
    terrain = rng.uniform(0.0, 2.0, (ny, nx))
    water = rng.uniform(0.0, 1.0, (ny, nx)) * (rng.random((ny, nx)) > 0.3)
    return terrain, water


def bench_case(n):
    """An n x n valley: smooth hills, a lake filled to a level, a tall column of water dropped in one corner."""
    t = np.linspace(0.0, 1.0, n, dtype=np.float32)
    x, y = t[None, :], t[:, None]
    terrain = (2.0 + np.sin(6.0 * x) * np.cos(5.0 * y) + 1.5 * ((x - 0.5) ** 2 + (y - 0.5) ** 2)).astype(np.float32)
    water = np.maximum(2.6 - terrain, 0.0)
    water += 2.0 * ((x - 0.2) ** 2 + (y - 0.25) ** 2 < 0.01)
    return terrain, water.astype(np.float32)


def reference_water(terrain, water, dt, steps, gravity=GRAVITY, friction=FRICTION, cell_size=CELL_SIZE):
    """Water depth after `steps` steps of hydro.reference.water.step (float64)."""
    from hydro.params import WaterParams
    from hydro.reference import water as ref
    s = ref.State.new(terrain, water, params=WaterParams(cell_size, gravity, friction, "depth"))
    for _ in range(steps):
        ref.step(s, dt)
    return s.water


def compare(got, want) -> tuple[float, bool]:
    """Largest error relative to the deepest water, and whether it is within rtol 1e-4."""
    scale = float(np.max(np.abs(want)))
    err = float(np.max(np.abs(np.asarray(got, np.float64) - want))) / scale
    return err, err <= 1e-4
