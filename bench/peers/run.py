"""Times and checks the peer implementations of hydro's water step.

    python bench/peers/run.py --sizes 256 1024 4096 --steps 200      # time each peer (and hydro)
    python bench/peers/run.py check                                  # each peer vs the float64 reference
    python bench/peers/run.py --sizes 256 --peers numpy hydro hydro-dense --device cpu --floor   # and the GL pass floor

`hydro` is a WaterGrid as a game makes it (tiles where nothing moves sleep), `hydro-dense` one with
sleep=False, which computes every cell of every substep as the array peers do.
`--floor` adds two bare GL passes over the same n x n cells on hydro's context, 16 x 16 workgroups as
hydro's passes take: one that does nothing and one that copies an r32f image, the least a pass of a
substep costs on this device (on a CPU rasteriser a dispatch hands off to its threads; docs/benchmarks.md).

Timing: per size, each peer is built, warmed up (kernel compilation, caches, allocator) and synchronised,
then `--steps` steps are queued and synchronised `--repeat` times; the best repeat is reported as
cell-steps/s and ms/step. Synchronisation is the peer's own (torch.cuda.synchronize, the CuPy stream,
ti.sync, glFinish for hydro). Peers whose package is missing are skipped with a note.
"""
from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2]))     # the repository root (an installed hydro wins)

import numpy as np  # noqa: E402

from bench.peers import FRICTION, GRAVITY, CELL_SIZE, PEERS, bench_case, compare, random_case, \
    reference_water, stable_dt  # noqa: E402


class _Hydro:
    """hydro.WaterGrid behind the peers' interface: n substeps recorded by one step() call; `sleep` as
    the grid's (hydro-dense: off, every cell computed every substep, as the array peers compute them)."""

    def __init__(self, terrain, water, gravity, friction, cell_size, sleep=True):
        import hydro
        self.grid = hydro.WaterGrid(None, terrain, cell_size, gravity, friction, water=water, sleep=sleep)

    def step(self, dt, n=1):
        self.grid.step(dt * n, substeps=n)

    def sync(self):
        self.grid.ctx.finish()

    def water(self):
        return self.grid.water

    def release(self):
        self.grid.release()


HYDRO = ("hydro", "hydro-dense")


def load(name, args):
    """(make, description) for a peer, or None with a printed note when it cannot run here."""
    try:
        if name in HYDRO:
            import hydro
            hydro.WaterGrid(None, np.zeros((4, 4), np.float32)).release()     # context and shaders work
            if name == "hydro-dense":
                return (lambda *a: _Hydro(*a, sleep=False)), "hydro.WaterGrid (OpenGL compute), sleep=False"
            return _Hydro, "hydro.WaterGrid (OpenGL compute)"
        module = importlib.import_module(f"bench.peers.{name}_pipes")
    except Exception as exc:  # noqa: BLE001 - an optional peer missing or broken is reported, not fatal
        print(f"# {name}: skipped ({type(exc).__name__}: {exc})")
        return None
    if name == "torch":
        import torch
        device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
        make = lambda *a: module.make(*a, device=device, compile=args.torch_compile)  # noqa: E731
        return make, f"torch {torch.__version__} on {device}" + (" (torch.compile)" if args.torch_compile else "")
    if name == "cupy":
        import cupy as cp
        try:
            cp.cuda.runtime.getDeviceCount()
        except Exception as exc:  # noqa: BLE001
            print(f"# cupy: skipped (no CUDA device: {exc})")
            return None
        return module.make, f"cupy {cp.__version__} RawKernel"
    if name == "taichi":
        import taichi as ti
        arch = module.init(ti.cpu if args.device == "cpu" else None)
        return module.make, f"taichi {'.'.join(map(str, ti.__version__))} on {arch}"
    return module.make, name


def bench(args):
    peers = [(name, load(name, args)) for name in args.peers]
    peers = [(name, p) for name, p in peers if p is not None]
    for name, (_, desc) in peers:
        print(f"# {name}: {desc}")
    print(f"{'peer':<13} {'size':>6} {'cell-steps/s':>14} {'ms/step':>10}")
    for n in args.sizes:
        terrain, water = bench_case(n)
        dt = stable_dt(terrain, water)
        for name, (make, _) in peers:
            sim = make(terrain, water, GRAVITY, FRICTION, CELL_SIZE)
            sim.step(dt, args.warmup)
            sim.sync()
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                sim.step(dt, args.steps)
                sim.sync()
                best = min(best, time.perf_counter() - start)
            if not np.isfinite(sim.water()).all():
                print(f"# {name}: non-finite water at size {n}")
            print(f"{name:<13} {n:>6} {n * n * args.steps / best:>14.4g} {1e3 * best / args.steps:>10.4f}", flush=True)
            if hasattr(sim, "release"):
                sim.release()
            del sim
        if args.floor:
            floor_rows(n, args)


FLOOR_PASSES = {
    "gl empty pass": "",
    "gl r32f copy": "imageStore(u_out, c, imageLoad(u_in, c));",
}


def floor_rows(n, args):
    """Print the ms of each FLOOR_PASSES pass over n x n cells: the best of `repeat` runs of `steps`."""
    import hydro
    ctx = hydro.create_context()
    textures = [ctx.texture((n, n), 1, dtype="f4") for _ in range(2)]
    textures[0].bind_to_image(0, read=True, write=False)
    textures[1].bind_to_image(1, read=False, write=True)
    for name, body in FLOOR_PASSES.items():
        prog = ctx.compute_shader(f"""#version 430
            layout(local_size_x = 16, local_size_y = 16) in;
            layout(binding = 0, r32f) uniform restrict readonly image2D u_in;
            layout(binding = 1, r32f) uniform restrict writeonly image2D u_out;
            void main() {{ ivec2 c = ivec2(gl_GlobalInvocationID.xy); {body} }}""")
        groups = -(-n // 16)
        best = float("inf")
        for _ in range(args.repeat + 1):                # the first run warms up
            ctx.finish()
            start = time.perf_counter()
            for _ in range(args.steps):
                prog.run(groups, groups, 1)
            ctx.finish()
            best = min(best, time.perf_counter() - start)
        print(f"{name:<13} {n:>6} {n * n * args.steps / best:>14.4g} {1e3 * best / args.steps:>10.4f}", flush=True)
        prog.release()
    for tex in textures:
        tex.release()
    ctx.release()


def check(args):
    terrain, water = random_case(48, 40)
    dt, steps = stable_dt(terrain, water, safety=0.9), 20
    want = reference_water(terrain, water, dt, steps)
    failed = False
    for name in args.peers:
        peer = load(name, args)
        if peer is None:
            continue
        make, desc = peer
        sim = make(terrain, water, GRAVITY, FRICTION, CELL_SIZE)
        for _ in range(steps):
            sim.step(dt, 1)
        sim.sync()
        err, ok = compare(sim.water(), want)
        failed |= not ok
        print(f"{name:<8} max |water - reference| / max depth = {err:.3g}  {'ok' if ok else 'FAIL'}  ({desc})")
        if hasattr(sim, "release"):
            sim.release()
    return 1 if failed else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", nargs="?", choices=("bench", "check"), default="bench")
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096])
    ap.add_argument("--steps", type=int, default=200, help="timed steps per repeat")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--peers", nargs="+", default=[*PEERS, *HYDRO], choices=[*PEERS, *HYDRO])
    ap.add_argument("--device", choices=("cpu", "cuda"), help="force torch/taichi onto this device")
    ap.add_argument("--torch-compile", action="store_true", help="wrap the torch step in torch.compile")
    ap.add_argument("--floor", action="store_true", help="also time a bare GL pass that does nothing and one that copies")
    args = ap.parse_args(argv)
    return check(args) if args.mode == "check" else bench(args)


if __name__ == "__main__":
    sys.exit(main())
