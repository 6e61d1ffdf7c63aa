"""Benchmark of hydro.SmokeGrid: milliseconds per step, pressure residual reached and divergence left,
for our default solver (MAC grid, multigrid to 1e-4, the scalars' totals kept by the conservation fix)
beside the popular demos' configuration (20 or 40 Jacobi sweeps), on the same buoyant, stirred smoke
scene. Also the divergence a collocated grid (the
demos' storage) keeps even with an exact pressure solve, measured in NumPy on the same velocity in the
same walled box (a cosine-basis solve with the walls' zero-flux ends, so no periodic seams).

    python bench/smoke.py                      # small sizes (llvmpipe) or 256..2048 on a GPU
    python bench/smoke.py --sizes 256 512 1024 2048 --steps 20
    python bench/smoke.py --sizes 1024 --dispatches     # GPU passes and readbacks per step, no timing
    python bench/smoke.py --sizes 1024 --scene source   # a fixed buoyant source instead of the stirring splat
    python bench/smoke.py --sizes 1024 --open-top       # the top side open (the demo's smoke scene)
    python bench/smoke.py --sizes 1024 --cpu-work 1     # a game's frame: the step, then 1 ms of CPU work
    python bench/smoke.py --sizes 1024 --profile        # GPU time per pass kind (timer queries), readback waits
    python bench/smoke.py --sizes 1024 --profile --configs 1e-3 --coarse-side 32 16   # one-workgroup coarse solve
    python bench/smoke.py --sizes 1024 --stream --configs "2 cycles" --tile-shapes 32x16 64x32/32x32
    python bench/smoke.py --sizes 1024 --configs 1e-3 --smoothing 2x1.0 3x1.2   # V(2,2) Gauss-Seidel, V(3,3) SOR 1.2
    python bench/smoke.py --sizes 1024 --steps 30 --configs 1e-3 --conserve both  # the fix's cost: with and without

Needs only moderngl and numpy (and hydro from this repository).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict

import moderngl
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import hydro  # noqa: E402
from hydro import _gl, _native, smoke_pressure  # noqa: E402
from hydro.smoke import SmokeGrid  # noqa: E402

CONFIGS = [
    ("ours: MAC + multigrid 1e-4", dict(pressure="multigrid", pressure_tolerance=1e-4)),
    ("ours: MAC + multigrid 1e-3", dict(pressure="multigrid", pressure_tolerance=1e-3)),
    ("ours: MAC + multigrid 1e-3, from q = 0", dict(pressure="multigrid", pressure_tolerance=1e-3,
                                                    pressure_warm_start=False)),
    ("ours: MAC + multigrid, 2 cycles", dict(pressure="multigrid", pressure_tolerance=None, pressure_iterations=2)),
    ("demo: Jacobi 20", dict(pressure="jacobi", pressure_iterations=20)),
    ("demo: Jacobi 40", dict(pressure="jacobi", pressure_iterations=40)),
]


def variants(args):
    """(name, options) of the CONFIGS whose name contains one of --configs, for each --coarse-side, each
    --tile-shapes, each --smoothing and each --conserve setting: the tuning experiments set
    hydro.smoke_pressure.COARSE_SIDE, the tile shapes and SWEEPS / OMEGA (read when a grid is made) as
    they yield."""
    sp = smoke_pressure
    saved = sp.COARSE_SIDE, dict(sp.TILE_SHAPES), sp.SWEEPS, sp.OMEGA
    try:
        for side, shape, smoothing in ((a, b, c) for a in args.coarse_side or [None]
                                       for b in args.tile_shapes or [None] for c in args.smoothing or [None]):
            tag = []
            if smoothing:
                sp.SWEEPS, sp.OMEGA = smoothing
                tag.append(f"V({smoothing[0]},{smoothing[0]}) omega {smoothing[1]}")
            if side:
                sp.COARSE_SIDE = side
                tag.append(f"coarse {side}")
            if shape:
                for kind in ("gpu", "cpu"):
                    sp.TILE_SHAPES[kind] = shape
                tag.append("tiles " + "/".join(f"{t}x{g}" for t, g in shape))
            for name, options in CONFIGS:
                if args.configs and not any(key in name for key in args.configs):
                    continue
                for conserve in CONSERVE[args.conserve]:
                    tags = tag + ([] if conserve else ["no conservation fix"])
                    yield (f"{name} [{', '.join(tags)}]" if tags else name), dict(options, conserve=conserve)
    finally:
        sp.COARSE_SIDE, sp.SWEEPS, sp.OMEGA = saved[0], saved[2], saved[3]
        sp.TILE_SHAPES.update(saved[1])


CONSERVE = {"on": (True,), "off": (False,), "both": (True, False)}     # --conserve: SmokeParams.conserve


def smoothing(text):
    """--smoothing value: 'SWEEPSxOMEGA', e.g. 2x1.0 (V(2,2) Gauss-Seidel) or 3x1.2."""
    try:
        sweeps, omega = text.split("x")
        sweeps, omega = int(sweeps), float(omega)
        if not (1 <= sweeps <= 3 and 0.0 < omega < 2.0):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected SWEEPSxOMEGA (1..3 sweeps, 0 < omega < 2), got {text!r}") from None
    return sweeps, omega


def tile_shapes(text):
    """--tile-shapes value: 'TILExGROUP[/TILExGROUP...]', largest first: each tiled level takes the first
    shape that cuts it into at least LEVEL_TILES blocks, else the last (hydro.smoke_pressure.TILE_SHAPES)."""
    try:
        parts = [tuple(int(v) for v in part.split("x")) for part in text.split("/")]
        if not 1 <= len(parts) <= 4 or any(len(p) != 2 for p in parts):
            raise ValueError
        for part in parts:
            smoke_pressure.check_tile_shape(part)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected TILExGROUP[/TILExGROUP...] (even tile 16..64, group 16 or 32), "
                                         f"got {text!r}") from None
    return tuple(parts)


def scene(ctx, n, open_top=False, **options):
    """The grid of every scene: a closed free-slip box, or with --open-top an open top side (smoke leaves
    the box there, as in the demo's smoke scene)."""
    g = SmokeGrid(ctx, (n, n), advection="maccormack", vorticity=2.0, buoyancy=(0.2, 2.0), **options)
    if open_top:
        g.set_boundary("top", "open")
    return g


def stir(g, k):
    """The default scene's splat: an impulse that moves 0.7 rad round a circle each step."""
    n = g.nx
    r = max(n / 24, 2.0)
    angle = 0.7 * k
    g.splat(n / 2 + 0.25 * n * np.cos(angle), n / 4, r, velocity=(0.2 * n * np.sin(angle), 0.1 * n),
            density=1.0, temperature=1.0)


def source(g, k):
    """--scene source: a steady buoyant source, one fixed splat per step (a chimney). Its pressure
    changes little from step to step, so the multigrid's warm start leaves a lower residual for the
    same cycles (and on llvmpipe at 128^2-256^2 saves one); the stirring impulse lands elsewhere each
    step, where the last step's pressure is no guess."""
    n = g.nx
    g.splat(n / 2, n / 4, max(n / 24, 2.0), velocity=(0.0, 0.1 * n), density=1.0, temperature=1.0)


SCENES = {"stir": stir, "source": source}


def busy(ms):
    """Keep the CPU busy for `ms` milliseconds: a game's own work between two steps (--cpu-work)."""
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


def run(ctx, n, steps, options, splat=stir, cpu_work=0.0):
    g = scene(ctx, n, **options)
    dt = 1.0 / 60.0
    for k in range(3):                       # warm-up: compile, first allocations
        splat(g, k)
        g.step(dt)
    g.divergence()                           # sync
    in_step = 0.0
    t0 = time.perf_counter()
    for k in range(steps):
        splat(g, k + 3)
        t1 = time.perf_counter()
        g.step(dt)
        in_step += time.perf_counter() - t1
        if cpu_work:
            busy(cpu_work)
    g.ctx.finish()
    ms = (time.perf_counter() - t0) * 1e3 / steps
    out = dict(ms=ms, in_step=in_step * 1e3 / steps, residual=g.pressure_residual, cycles=g.pressure_cycles,
               div_rms=g.divergence("rms"), div_max=g.divergence("max"))
    velocity = g.velocity.astype(np.float64)
    g.release()
    return out, velocity


def stream(ctx, n, options, splat=stir, repeats=300):
    """Each multigrid pass of an n^2 grid (after a few steps of the scene) run `repeats` times back to
    back, µs per pass on the wall clock between two glFinish: the cost of a pass in a stream of passes,
    without the timer queries of --profile. Returns [(pass, µs)], a whole V-cycle and a step last."""
    g = scene(ctx, n, **options)
    for k in range(5):
        splat(g, k)
        g.step(1.0 / 60.0)
    g.pressure_cycles                        # the last step's check read before the passes run alone
    pr = g._pressure

    def timed(fn, reps):
        fn()
        ctx.finish()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        ctx.finish()
        return (time.perf_counter() - t0) / reps * 1e6

    out = []
    for level in range(pr.first_coarse):
        shape = "x".join(map(str, pr.tile_shapes[level]))
        out.append((f"smooth_restrict {pr.shapes[level][1]}² ({shape})", timed(lambda: pr.smooth_restrict(level), repeats)))
        out.append((f"prolong_smooth {pr.shapes[level][1]}² ({shape})", timed(lambda: pr.prolong_smooth(level), repeats)))
    out.append((f"coarse_cycle {pr.shapes[pr.first_coarse][1]}²", timed(pr.coarse_cycle, repeats)))
    out.append(("v_cycle", timed(pr.v_cycle, repeats // 2)))
    out.append(("step", timed(lambda: (splat(g, 7), g.step(1.0 / 60.0)), repeats // 3)))
    g.release()
    return out


def count_dispatches(ctx, n, options, steps=3, splat=stir):
    """Compute dispatches and readbacks of each of `steps` steps (after one warm-up step), counted
    by wrapping moderngl's ComputeShader.run, and Buffer.read and _native.FencedReadback.record (the
    solver's residual check waits on the latter where GL maps buffers), the wait for the step's own
    check (which step() leaves queued) included: at game sizes the step time is about dispatches x
    the per-dispatch cost, and each readback is a CPU-GPU sync."""
    counts = {"run": 0, "read": 0}
    run, read = moderngl.ComputeShader.run, moderngl.Buffer.read

    def counted(method, key):
        def wrapper(self, *args, **kwargs):
            counts[key] += 1
            return method(self, *args, **kwargs)
        return wrapper

    g = scene(ctx, n, **options)
    splat(g, 0)
    g.step(1.0 / 60.0)
    out = []
    record = _native.FencedReadback.record            # the solver's residual checks wait on this where they can
    moderngl.ComputeShader.run, moderngl.Buffer.read = counted(run, "run"), counted(read, "read")
    _native.FencedReadback.record = counted(record, "read")
    try:
        for k in range(steps):
            splat(g, k + 1)
            counts.update(run=0, read=0)
            g.step(1.0 / 60.0)
            cycles = g.pressure_cycles       # waits for the step's check (step() leaves it queued)
            out.append((counts["run"], counts["read"], cycles))
    finally:
        moderngl.ComputeShader.run, moderngl.Buffer.read = run, read
        _native.FencedReadback.record = record
        g.release()
    return out


def _pass_names(ctx):
    """Program -> pass name ("smoke/advect.comp" -> "advect"), from _gl's per-context program cache."""
    return {id(prog): os.path.splitext(os.path.basename(key[0]))[0]
            for key, prog in _gl._programs.get(ctx, {}).items()}


def profile(ctx, n, options, steps=4, splat=stir):
    """Where a step's time goes: every compute dispatch of `steps` steps (after one warm-up step) is
    wrapped in a GL_TIME_ELAPSED query (ctx.query(time=True), nanoseconds of GPU time from the
    dispatch reaching the GPU to its completion; queries cannot nest, so each brackets one dispatch),
    and every readback (Buffer.read, or a wait on a fenced copy in _native.FencedReadback.record: the
    CPU waits for the GPU to drain everything queued, then the GPU idles until the CPU queues more)
    is timed on the wall clock, as is each dispatch call (on a GPU: driver submission; llvmpipe runs
    compute inside the call, so there it is the pass's time and its timer queries read 0). Pass kinds
    are the shader name and the dispatch's group count, which tells the levels of the multigrid
    apart. The queries add some overhead per dispatch, so the wall time per step here is above the
    plain timing's."""
    pool, used, records = [], [0], []
    read_ns, reads = [0], [0]
    run, read = moderngl.ComputeShader.run, moderngl.Buffer.read

    def timed_run(self, x=1, y=1, z=1):
        if used[0] == len(pool):
            pool.append(ctx.query(time=True))     # moderngl queries cannot be released: reuse a pool
        query = pool[used[0]]
        used[0] += 1
        t0 = time.perf_counter_ns()
        with query:
            run(self, x, y, z)
        records.append((self, (x, y, z), query, time.perf_counter_ns() - t0))

    def timing(method):
        def timed(self, *args, **kwargs):
            t0 = time.perf_counter_ns()
            try:
                return method(self, *args, **kwargs)
            finally:
                read_ns[0] += time.perf_counter_ns() - t0
                reads[0] += 1
        return timed

    g = scene(ctx, n, **options)
    splat(g, 0)
    g.step(1.0 / 60.0)
    g.ctx.finish()
    names = _pass_names(ctx)
    kinds = defaultdict(lambda: [0, 0, 0])       # kind -> [dispatches, GPU ns, ns in the call] over all steps
    cycles, wall_ns = [], 0
    record = _native.FencedReadback.record            # the solver's residual checks wait on this where they can
    moderngl.ComputeShader.run, moderngl.Buffer.read = timed_run, timing(read)
    _native.FencedReadback.record = timing(record)
    try:
        for k in range(steps):
            splat(g, k + 1)
            g.ctx.finish()
            used[0] = 0
            records.clear()
            t0 = time.perf_counter_ns()
            g.step(1.0 / 60.0)
            g.ctx.finish()
            wall_ns += time.perf_counter_ns() - t0
            for prog, groups, query, call_ns in records:
                kind = kinds[f"{names.get(id(prog), '?')} {groups[0]}x{groups[1]}x{groups[2]}"]
                kind[0] += 1
                kind[1] += query.elapsed
                kind[2] += call_ns
            cycles.append(g.pressure_cycles)
    finally:
        moderngl.ComputeShader.run, moderngl.Buffer.read = run, read
        _native.FencedReadback.record = record
        g.release()
    return kinds, reads[0] / steps, read_ns[0] / steps, wall_ns / steps, cycles


def print_profile(n, name, result, steps):
    kinds, reads, read_ns, wall_ns, cycles = result
    gpu_ns = sum(k[1] for k in kinds.values()) / steps
    call_ns = sum(k[2] for k in kinds.values()) / steps
    print(f"{n:>5}²  {name}: wall {wall_ns / 1e3:.0f} µs/step; GPU (sum of the passes' queries) {gpu_ns / 1e3:.0f} µs/step; "
          f"{reads:g} readbacks/step waiting {read_ns / 1e3:.0f} µs/step; dispatch calls {call_ns / 1e3:.0f} µs/step; "
          f"cycles per step {cycles}")
    print(f"        {'pass  groups':<36} {'count/step':>10} {'GPU µs/step':>12} {'GPU µs/pass':>12} {'share':>6} "
          f"{'call µs/step':>13}")
    by = 1 if gpu_ns >= 1e3 else 2                  # queries that read ~0 (llvmpipe): order by the calls' time
    for kind, (count, ns, call) in sorted(kinds.items(), key=lambda item: -item[1][by]):
        share = f"{ns / steps / gpu_ns:>6.1%}" if gpu_ns > 0 else f"{'-':>6}"
        print(f"        {kind:<36} {count / steps:>10g} {ns / steps / 1e3:>12.1f} {ns / count / 1e3:>12.1f} {share} "
              f"{call / steps / 1e3:>13.1f}")
    print(flush=True)


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
    ap.add_argument("--cpu-work", type=float, default=0.0, metavar="MS",
                    help="busy the CPU this long after each step (a game's own work), to show what step() keeps waiting")
    ap.add_argument("--dispatches", action="store_true", help="count passes and readbacks per step instead of timing")
    ap.add_argument("--profile", action="store_true",
                    help="GPU time per pass kind (GL timer queries) and readback waits per step, instead of timing")
    ap.add_argument("--scene", choices=sorted(SCENES), default="stir",
                    help="stir: a moving impulse each step (default); source: a fixed buoyant source")
    ap.add_argument("--open-top", action="store_true", help="open the top side (default: a closed box)")
    ap.add_argument("--configs", nargs="+", default=None, metavar="TEXT",
                    help="only the solver configurations whose name contains one of these (e.g. 1e-3 '2 cycles')")
    ap.add_argument("--coarse-side", type=int, nargs="+", default=None, metavar="N",
                    help="levels with both sides <= N go to the one-workgroup coarse_cycle.comp "
                         f"(8, 16 or 32; default {smoke_pressure.COARSE_SIDE}); several values: each in turn")
    ap.add_argument("--conserve", choices=sorted(CONSERVE), default="on",
                    help="the scalars' conservation fix (SmokeParams.conserve, on by default): on, off, or both in turn")
    ap.add_argument("--no-flush", action="store_true",
                    help="never glFlush inside a step (hydro._native.FLUSH = False): the driver submits when it will")
    ap.add_argument("--stream", action="store_true",
                    help="µs per multigrid pass run back to back (no timer queries), instead of timing steps")
    ap.add_argument("--tile-shapes", type=tile_shapes, nargs="+", default=None, metavar="TxG[/TxG...]",
                    help="block side x workgroup side of the tiled multigrid passes, largest first: a level "
                         f"takes the first that cuts it into at least {smoke_pressure.LEVEL_TILES} blocks, else "
                         "the last; several values: each in turn")
    ap.add_argument("--smoothing", type=smoothing, nargs="+", default=None, metavar="SxOMEGA",
                    help="multigrid smoothing: S red-black sweeps before and after the coarse correction, "
                         f"over-relaxed by OMEGA (default {smoke_pressure.SWEEPS}x{smoke_pressure.OMEGA}); "
                         "several values: each in turn")
    args = ap.parse_args(argv)
    _native.FLUSH = not args.no_flush
    splat = SCENES[args.scene]
    for side in args.coarse_side or ():
        if side not in (8, 16, 32):
            ap.error(f"--coarse-side: expected 8, 16 or 32, got {side}")
    ctx = hydro.create_context()
    renderer = ctx.info.get("GL_RENDERER", "?")
    software = "llvmpipe" in renderer.lower() or "softpipe" in renderer.lower()
    sizes = args.sizes or ([64, 128] if software else [256, 512, 1024, 2048])
    steps = args.steps or (5 if software else 20)
    print(f"GL_RENDERER: {renderer}")
    print(f"GL_VERSION: {ctx.info.get('GL_VERSION', '?')}")
    if args.dispatches:
        for n in sizes:
            for name, options in variants(args):
                per_step = ", ".join(f"{r} passes {b} readbacks {c} cycles" for r, b, c in count_dispatches(ctx, n, dict(options, open_top=args.open_top), args.steps or 3, splat))
                print(f"{n:>5}²  {name:<44} {per_step}", flush=True)
        ctx.release()
        return
    if args.stream:
        for n in sizes:
            for name, options in variants(args):
                rows = stream(ctx, n, dict(options, open_top=args.open_top), splat)
                print(f"{n:>5}²  {name}: " + " | ".join(f"{k} {us:.1f}" for k, us in rows), flush=True)
        ctx.release()
        return
    if args.profile:
        steps = args.steps or 4
        print(f"GPU time per dispatch from GL timer queries, mean over {steps} steps after a warm-up step")
        for n in sizes:
            for name, options in variants(args):
                print_profile(n, name, profile(ctx, n, dict(options, open_top=args.open_top), steps, splat), steps)
        ctx.release()
        return
    print(f"scene: MacCormack, vorticity 2, buoyancy (0.2, 2), {'a stirring' if args.scene == 'stir' else 'a fixed source'} splat per step, "
          f"{'open top' if args.open_top else 'closed box'}, dt 1/60, {steps} steps timed")
    if args.cpu_work:
        print(f"after each step the CPU works {args.cpu_work} ms (a game's own work): ms/step is a frame")
    print(f"{'size':>6}  {'solver':<44} {'ms/step':>9} {'in step()':>9} {'residual':>10} {'iters':>6} {'div rms 1/s':>12} {'div max 1/s':>12}")
    for n in sizes:
        velocity = None
        for name, options in variants(args):
            r, vel = run(ctx, n, steps, dict(options, open_top=args.open_top), splat, args.cpu_work)
            velocity = vel if velocity is None else velocity
            print(f"{n:>5}²  {name:<44} {r['ms']:>9.2f} {r['in_step']:>9.2f} {r['residual']:>10.2e} {r['cycles']:>6d} "
                  f"{r['div_rms']:>12.3e} {r['div_max']:>12.3e}", flush=True)
        if not args.open_top:
            print(f"{n:>5}²  collocated grid, exact walled-box solve: divergence left / before = "
                  f"{collocated_left(velocity):.3f} (ours, MAC: the residual above)", flush=True)
    ctx.release()


if __name__ == "__main__":
    main()
