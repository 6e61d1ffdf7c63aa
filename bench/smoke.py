"""Benchmark of hydro.SmokeGrid: milliseconds per step, pressure residual reached and divergence left,
for our default solver (MAC grid, multigrid to 1e-4) beside the popular demos' configuration (20 or 40
Jacobi sweeps), on the same buoyant, stirred smoke scene. Also the divergence a collocated grid (the
demos' storage) keeps even with an exact pressure solve, measured in NumPy on the same velocity in the
same walled box (a cosine-basis solve with the walls' zero-flux ends, so no periodic seams).

    python bench/smoke.py                      # small sizes (llvmpipe) or 256..2048 on a GPU
    python bench/smoke.py --sizes 256 512 1024 2048 --steps 20
    python bench/smoke.py --sizes 1024 --dispatches     # GPU passes and readbacks per step, no timing

Needs only moderngl and numpy (and hydro from this repository).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import moderngl
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import hydro  # noqa: E402
from hydro.smoke import SmokeGrid  # noqa: E402

CONFIGS = [
    ("ours: MAC + multigrid 1e-4", dict(pressure="multigrid", pressure_tolerance=1e-4)),
    ("ours: MAC + multigrid 1e-3", dict(pressure="multigrid", pressure_tolerance=1e-3)),
    ("ours: MAC + multigrid, 2 cycles", dict(pressure="multigrid", pressure_tolerance=None, pressure_iterations=2)),
    ("demo: Jacobi 20", dict(pressure="jacobi", pressure_iterations=20)),
    ("demo: Jacobi 40", dict(pressure="jacobi", pressure_iterations=40)),
]


def scene(ctx, n, **options):
    g = SmokeGrid(ctx, (n, n), advection="maccormack", vorticity=2.0, buoyancy=(0.2, 2.0), **options)
    return g


def stir(g, k):
    n = g.nx
    r = max(n / 24, 2.0)
    angle = 0.7 * k
    g.splat(n / 2 + 0.25 * n * np.cos(angle), n / 4, r, velocity=(0.2 * n * np.sin(angle), 0.1 * n),
            density=1.0, temperature=1.0)


def run(ctx, n, steps, options):
    g = scene(ctx, n, **options)
    dt = 1.0 / 60.0
    for k in range(3):                       # warm-up: compile, first allocations
        stir(g, k)
        g.step(dt)
    g.divergence()                           # sync
    t0 = time.perf_counter()
    for k in range(steps):
        stir(g, k + 3)
        g.step(dt)
    g.ctx.finish()
    ms = (time.perf_counter() - t0) * 1e3 / steps
    out = dict(ms=ms, residual=g.pressure_residual, cycles=g.pressure_cycles,
               div_rms=g.divergence("rms"), div_max=g.divergence("max"))
    velocity = g.velocity.astype(np.float64)
    g.release()
    return out, velocity


def count_dispatches(ctx, n, options, steps=3):
    """Compute dispatches and buffer readbacks of each of `steps` steps (after one warm-up step),
    counted by wrapping moderngl's ComputeShader.run and Buffer.read: at game sizes the step time is
    about dispatches x the per-dispatch cost, and each readback is a CPU-GPU sync."""
    counts = {"run": 0, "read": 0}
    run, read = moderngl.ComputeShader.run, moderngl.Buffer.read

    def counted(method, key):
        def wrapper(self, *args, **kwargs):
            counts[key] += 1
            return method(self, *args, **kwargs)
        return wrapper

    g = scene(ctx, n, **options)
    stir(g, 0)
    g.step(1.0 / 60.0)
    out = []
    moderngl.ComputeShader.run, moderngl.Buffer.read = counted(run, "run"), counted(read, "read")
    try:
        for k in range(steps):
            stir(g, k + 1)
            counts.update(run=0, read=0)
            g.step(1.0 / 60.0)
            out.append((counts["run"], counts["read"], g.pressure_cycles))
    finally:
        moderngl.ComputeShader.run, moderngl.Buffer.read = run, read
        g.release()
    return out


def _neumann_basis(n):
    """Orthonormal eigenvectors (columns) and eigenvalues of the 1D compact Laplacian with zero-flux
    (Neumann) ends, q[-1] = q[0] and q[n] = q[n-1]: cos(pi k (j + 1/2) / n), 2 cos(pi k / n) - 2 (the DCT-II)."""
    j = np.arange(n) + 0.5
    k = np.arange(n)
    basis = np.cos(np.pi * np.outer(j, k) / n)
    basis /= np.linalg.norm(basis, axis=0)
    return basis, 2.0 * np.cos(np.pi * k / n) - 2.0


def collocated_left(velocity):
    """Relative divergence a collocated grid (the demos' storage) keeps after an EXACT solve of its
    pressure equation, on the same walled box: central-difference divergence and gradient with the
    walls' ghosts (normal velocity odd, tangential even, pressure even: zero flux), and the compact
    5-point Laplacian with the matching Neumann ends, solved exactly by its cosine eigenbasis. What
    is left is D G p != L p (the collocated inconsistency), not solver error or boundary seams."""
    u, v = velocity[..., 0], velocity[..., 1]

    def pad(a, odd_x, odd_y):
        a = np.concatenate([(-1 if odd_x else 1) * a[:, :1], a, (-1 if odd_x else 1) * a[:, -1:]], axis=1)
        return np.concatenate([(-1 if odd_y else 1) * a[:1], a, (-1 if odd_y else 1) * a[-1:]], axis=0)

    def div(a, b):
        pa, pb = pad(a, True, False), pad(b, False, True)
        return 0.5 * (pa[1:-1, 2:] - pa[1:-1, :-2] + pb[2:, 1:-1] - pb[:-2, 1:-1])

    d = div(u, v)
    ny, nx = d.shape
    cy, ly = _neumann_basis(ny)
    cx, lx = _neumann_basis(nx)
    lap = ly[:, None] + lx[None, :]
    lap[0, 0] = 1.0
    hat = cy.T @ d @ cx
    hat[0, 0] = 0.0                                  # the constant mode: the walls' net flux, 0 here
    p = cy @ (hat / lap) @ cx.T
    pp = pad(p, False, False)
    u2 = u - 0.5 * (pp[1:-1, 2:] - pp[1:-1, :-2])
    v2 = v - 0.5 * (pp[2:, 1:-1] - pp[:-2, 1:-1])
    return float(np.linalg.norm(div(u2, v2)) / max(np.linalg.norm(d), 1e-30))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=None)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--dispatches", action="store_true", help="count passes and readbacks per step instead of timing")
    args = ap.parse_args(argv)
    ctx = hydro.create_context()
    renderer = ctx.info.get("GL_RENDERER", "?")
    software = "llvmpipe" in renderer.lower() or "softpipe" in renderer.lower()
    sizes = args.sizes or ([64, 128] if software else [256, 512, 1024, 2048])
    steps = args.steps or (5 if software else 20)
    print(f"GL_RENDERER: {renderer}")
    print(f"GL_VERSION: {ctx.info.get('GL_VERSION', '?')}")
    if args.dispatches:
        for n in sizes:
            for name, options in CONFIGS:
                per_step = ", ".join(f"{r} passes {b} readbacks {c} cycles" for r, b, c in count_dispatches(ctx, n, options))
                print(f"{n:>5}²  {name:<32} {per_step}", flush=True)
        ctx.release()
        return
    print(f"scene: MacCormack, vorticity 2, buoyancy (0.2, 2), a stirring splat per step, dt 1/60, {steps} steps timed")
    print(f"{'size':>6}  {'solver':<32} {'ms/step':>9} {'residual':>10} {'iters':>6} {'div rms 1/s':>12} {'div max 1/s':>12}")
    for n in sizes:
        velocity = None
        for name, options in CONFIGS:
            r, vel = run(ctx, n, steps, options)
            velocity = vel if velocity is None else velocity
            print(f"{n:>5}²  {name:<32} {r['ms']:>9.2f} {r['residual']:>10.2e} {r['cycles']:>6d} "
                  f"{r['div_rms']:>12.3e} {r['div_max']:>12.3e}", flush=True)
        print(f"{n:>5}²  collocated grid, exact walled-box solve: divergence left / before = "
              f"{collocated_left(velocity):.3f} (ours, MAC: the residual above)", flush=True)
    ctx.release()


if __name__ == "__main__":
    main()
