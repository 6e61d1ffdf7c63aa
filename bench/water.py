"""Water-grid throughput: cell·steps/s and achieved bandwidth beside copy kernels in the same run.

For each size the square WaterGrid and the HexWaterGrid advance a wavy lake through `step(dt, substeps=n)`
(one call records n substeps; no readback inside), timed with glFinish on both ends, with each kernel
(hydro.water_kernels): "auto" (what the planner picks for the device and the call), "cells", "fused",
"blocked". Bandwidth counts the bytes a kernel must move per cell per substep with perfect caching
(cells: square 56 B, hex 72 B; fused: 28 B, 36 B, the floor: read terrain, depth, flows, write depth and
flows; blocked: one 16-byte texel read and written a cell, 32 B, hex 36 B with the terrain, once a
launch of several substeps, so its GB/s is the rate a kernel moving its state every substep would
need). Two copy kernels run first, a vec4 storage-buffer copy and an rgba32f image copy; "% of copy"
divides by the faster, and "floor %" is the rate times the floor bytes over it. `--tuning` changes the
planner's water_plan.Tuning for the grids timed (the test seam, grid._retune), e.g. `climb_from=None`.

    python bench/water.py                       # small sizes, fine on llvmpipe
    python bench/water.py --sizes 256 512 1024 4096 --calls 1 4 64 --json out.json     # the kernel table
    python bench/water.py --sizes 1024 --kernels blocked --tuning "wide=()"             # without the wide climb
    python bench/water.py --sizes 4096 --calls 64 --inertia --manning 0.03 --kernels auto \
        --tuning "wide=((0, ((110, 40), 3)),)"              # the inertia climb, three substeps a launch
    python bench/water.py --sizes 512 1024 --sides open    # inflow, a level, an outflow
    python bench/water.py --sizes 1024 4096 --cycle --erosion   # rain, springs and drains; erosion

`--cycle` turns the water cycle on (rain, evaporation, a spring and a drain: common/cycle.glsl's record
adds 32 B a cell a substep to the cells and fused kernels, none to blocked's launches but the
record's load and store); `--erosion` turns erosion on: on the blocked kernel its phases run in the
tile program after each substep on a second state (a cell a substep: square (sediment, owed) read and
written and the bedrock read, 20 B; hex 32 B); after the cell-wise kernel's substeps three passes
(about 84 B a cell: erode_mix 20, erode 44, slump 20). The floor of water + sediment + erosion in one
pass is about 48 B, square.
"""
import argparse
import ast
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                     # noqa: E402
from bench.bandwidth import buffer_copy, image_copy   # noqa: E402

KERNELS = ("auto", "cells", "fused", "blocked")
KERNEL_BYTES = {("square", "fused"): 28, ("hex", "fused"): 36, ("square", "cells"): 56, ("hex", "cells"): 72,
                ("square", "blocked"): 32, ("hex", "blocked"): 36}
FLOOR_BYTES = {"square": 28, "hex": 36}
# erosion's bytes a cell a substep, by lattice and the kernel that ran (see above)
EROSION_BYTES = {("square", "cells"): 84, ("hex", "cells"): 84, ("square", "blocked"): 20, ("hex", "blocked"): 32}


def copy_bandwidths(ctx, megabytes, repeats=20):
    """GB/s (read + write) of a vec4 storage-buffer copy and of an rgba32f image copy (bench/bandwidth.py;
    on the H200 the image copy moves twice as much), best of `repeats` each."""
    return tuple(copy(ctx, megabytes, repeats=repeats, watch_clocks=False)[0] for copy in (buffer_copy, image_copy))


def scene(n, kind):
    """A lake with waves over gentle hills, ~1 m deep, so every pipe works."""
    y, x = np.mgrid[0:n, 0:n] / n
    terrain = 0.3 * np.sin(7 * x) * np.cos(5 * y)
    water = np.maximum(1.0 + 0.2 * np.sin(11 * x + 3 * y) - terrain, 0.0)
    return terrain, water


# --sides open: a river in on the left, a sea on the right, an outlet at the top (the bottom a wall);
# inflow and outflow per face of the side. The inflow is small and the calls at most OPEN_MAX_BATCH
# substeps: step() counts the water an inflow can pile into a cell over the whole call as depth, and
# the substeps here are fixed at half the stable limit of the water as it is.
OPEN_SIDES = (("left", "inflow", 4e-4), ("right", "level", 1.0), ("top", "outflow", 4e-4))
OPEN_MAX_BATCH = 4096


def time_grid(ctx, kind, n, seconds, kernel, per_call=None, tuning=None, sides="walls", model=None,
              cycle=False, erosion=False):
    """(seconds a substep, the kernel that ran, volume == ledger) for one grid and kernel; `per_call`
    substeps a call (a game's calls), else calls long enough to fill a quarter of `seconds`."""
    cls = hydro.HexWaterGrid if kind == "hex" else hydro.WaterGrid
    terrain, water = scene(n, kind)
    g = cls(ctx, terrain, water=water, friction=0.02, kernel=None if kernel == "auto" else kernel, **(model or {}))
    if tuning:
        g._retune(g._tuning.replace(**tuning))
    for side, bc, value in OPEN_SIDES if sides == "open" else ():
        g.set_boundary(side, bc, value * (n if bc in ("inflow", "outflow") else 1))
    if cycle:                                 # a light rain and evaporation, a spring and a drain
        g.rain, g.evaporation = 1e-5, 2e-6
        g.add_source(n / 4, n / 4, 3.0, 0.5)
        g.add_source(3 * n / 4, 3 * n / 4, 3.0, -0.5)
    if erosion:
        g.erosion = hydro.Erosion()
    h = 0.5 * g.max_stable_dt()
    g.step(h * 4, substeps=4)                 # compile, warm up
    ctx.finish()
    t = time.perf_counter()
    while not per_call and time.perf_counter() - t < seconds:  # a new program can run slow at first
        g.step(h * 4, substeps=4)
    ctx.finish()
    batch, elapsed = 4, 0.0
    longest = OPEN_MAX_BATCH if sides == "open" else None
    while elapsed < seconds / 4 and not per_call and batch != longest:  # until one call is long enough
        batch *= 2
        t = time.perf_counter()
        g.step(h * batch, substeps=batch)
        ctx.finish()
        elapsed = time.perf_counter() - t
    if per_call:                                  # a game's step(): this many substeps a call
        batch = per_call
        t = time.perf_counter()
        while time.perf_counter() - t < seconds:  # the first calls on a new grid run slow
            g.step(h * batch, substeps=batch)
        ctx.finish()
        t = time.perf_counter()
        for _ in range(4):
            g.step(h * batch, substeps=batch)
        ctx.finish()
        elapsed = (time.perf_counter() - t) / 4
    calls = max(1, int(seconds / elapsed))
    t = time.perf_counter()
    for _ in range(calls):
        g.step(h * batch, substeps=batch)
    ctx.finish()
    per_substep = (time.perf_counter() - t) / (calls * batch)
    ran = g._last_call.kernel
    ok = abs(g.volume() - g.ledger()["expected"]) <= 1e-4 * g.ledger()["expected"]
    g.release()
    return per_substep, ran, ok


def main():
    ap = argparse.ArgumentParser(description="hydro water benchmark")
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256])
    ap.add_argument("--kinds", nargs="+", default=["square", "hex"])
    ap.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=list(KERNELS), help="kernels to time")
    ap.add_argument("--seconds", type=float, default=0.5, help="time per measurement")
    ap.add_argument("--calls", type=int, nargs="+", default=[None], metavar="SUBSTEPS",
                    help="substeps per step() call, each timed (default: calls long enough to fill a quarter of "
                    "--seconds); small values show each call's fixed costs")
    ap.add_argument("--tuning", nargs="+", default=[], metavar="NAME=VALUE",
                    help="water_plan.Tuning fields for the grids timed, as Python literals")
    ap.add_argument("--sides", choices=["walls", "open"], default="walls",
                    help="walls all round, or open: inflow left, a level right, outflow at the top")
    ap.add_argument("--inertia", action="store_true", help="grids with inertia=True")
    ap.add_argument("--manning", type=float, default=0.0, help="Manning's n of the grids")
    ap.add_argument("--cycle", action="store_true", help="the water cycle on: rain, evaporation, a spring, a drain")
    ap.add_argument("--erosion", action="store_true",
                    help="erosion on (in the blocked kernel's tile program, or passes after the cell-wise kernel's substeps)")
    ap.add_argument("--sleep", choices=("default", "on", "off"), default="default",
                    help="sleeping tiles: the grids' default (on), or set on or off")
    ap.add_argument("--copy-mb", type=int, default=256)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    tuning = {}
    for item in args.tuning:
        name, _, value = item.partition("=")
        tuning[name] = ast.literal_eval(value)

    ctx = hydro.create_context()
    info = {"renderer": ctx.info["GL_RENDERER"], "version": ctx.info["GL_VERSION"],
            "machine": platform.node(), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "tuning": args.tuning,
            "inertia": args.inertia, "manning": args.manning, "cycle": args.cycle, "erosion": args.erosion,
            "sleep": args.sleep}
    model = {"inertia": args.inertia, "manning": args.manning}
    if args.sleep != "default":
        model["sleep"] = args.sleep == "on"
    print(f"GL_RENDERER: {info['renderer']}  GL_VERSION: {info['version']}  {info['date']}"
          + ("  cycle on" if args.cycle else "") + ("  erosion on" if args.erosion else "")
          + (f"  sleep {args.sleep}" if args.sleep != "default" else ""))
    buffer_gbs, image_gbs = copy_bandwidths(ctx, args.copy_mb)
    copy = max(buffer_gbs, image_gbs)
    info.update(sides=args.sides, copy_GBps=copy, buffer_copy_GBps=buffer_gbs, image_copy_GBps=image_gbs)
    print(f"copy kernels (read + write): vec4 buffer {buffer_gbs:.1f} GB/s, rgba32f image {image_gbs:.1f} GB/s; "
          f"% of copy is of the faster")
    print("| grid | kernel | size | substeps a call | cell·steps/s | µs/substep | GB/s | % of copy | floor % | ledger ok |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for n in args.sizes:
        for kind in args.kinds:
            for per_call in args.calls:
                for kernel in args.kernels:
                    if args.inertia and kernel == "fused":
                        continue
                    per, ran, ok = time_grid(ctx, kind, n, args.seconds, kernel, per_call, tuning, args.sides,
                                             model, args.cycle, args.erosion)
                    rate = n * n / per
                    extra = EROSION_BYTES[kind, ran] if args.erosion else 0
                    gbs = rate * (KERNEL_BYTES[kind, ran] + extra) / 1e9
                    floor = rate * (FLOOR_BYTES[kind] + (20 if args.erosion else 0)) / 1e9 / copy
                    label = kernel if kernel != "auto" else f"auto ({ran})"
                    rows.append({"grid": kind, "kernel": kernel, "ran": ran, "size": n, "substeps_per_call": per_call,
                                 "cell_steps_per_s": rate, "us_per_substep": per * 1e6, "GBps": gbs,
                                 "copy_fraction": gbs / copy, "floor_fraction": floor, "ledger_ok": ok})
                    print(f"| {kind} | {label} | {n}² | {per_call or 'long'} | {rate:.3g} | {per * 1e6:.1f} | {gbs:.1f} | "
                          f"{100 * gbs / copy:.0f}% | {100 * floor:.0f}% | {ok} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"info": info, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
