"""Water-grid throughput: cells*steps/s and achieved bandwidth beside copy kernels in the same run.

For each size the square WaterGrid and the HexWaterGrid advance a wavy lake through `step(dt, substeps=n)`
(one call records n substeps; no readback inside), timed with glFinish on both ends. The implementations:
"fused" (what passes=1 takes: the tile kernel on the packed state for calls of
hydro.water_passes.PACKED_MIN_SUBSTEPS substeps and more, else the tile kernel), "fused-packed" (the tile
kernel on the packed rgba32f state in every call, shaders/water/step_packed.comp; the pack and unpack
passes of each call included), "fused-settled" ("fused" with the packed kernel's interior tiles all
settled at once by step_packed.comp, where large square grids climb them a row at a time,
step_stream.comp, on tiles of hydro.water_passes.WIDE_SHAPE: the kernel before that),
"fused-tile" (the tile kernel on the grid's own textures and buffers, step_fused.comp), "cell-wise"
(accelerate_cells, scale_and_move and the boundary faces: made for CPU rasterisers) and "three-pass"
(accelerate, scale_outflow, move). Bandwidth counts the bytes each must move per cell per substep with
perfect caching (three-pass: square 60 B, hex 80 B; cell-wise: 56 B, 72 B; fused-tile: 28 B, 36 B, the
floor: read terrain, depth, flows; write depth, flows; the packed kernels: one 16-byte texel read and
written per cell, 32 B, hex 36 B with the terrain; "fused" is counted as packed; with two substeps a
launch, hydro.water_passes.PACKED_SHAPE (four on large square grids, WIDE_SHAPE), the
packed kernel moves that once per launch, so its GB/s is the rate a kernel moving its state every substep
would need). Two copy kernels run first, a vec4 storage-buffer copy and an rgba32f image copy (on the H200
the image copy moves twice as much); "% of copy" divides by the faster, and "floor %" is the rate times
the floor bytes over it. With --numpy the float64 NumPy reference is timed too (the CPU baseline).

    python bench/water.py                       # small sizes, fine on llvmpipe
    python bench/water.py --sizes 256 512 1024 2048 4096 --seconds 1.0 --json out.json
    python bench/water.py --sizes 4096 --paths fused fused-tile --substeps-per-call 4
    python bench/water.py --sizes 1024 4096 --paths fused-tile --tiles 16x16x256 28x28x1024
    python bench/water.py --sizes 1024 4096 --paths fused-packed --tiles 12x12x1 24x24x2
    python bench/water.py --sizes 512 1024 --paths fused --sides open    # inflow, a level, an outflow
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                     # noqa: E402
from bench.bandwidth import buffer_copy, image_copy   # noqa: E402
from hydro.reference import water as ref         # noqa: E402

PATHS = {"fused": 1, "fused-settled": 1, "fused-tile": 1, "fused-packed": 1, "cell-wise": 2,
         "three-pass": 3}   # path: passes
PASS_BYTES = {("square", "fused"): 32, ("hex", "fused"): 36, ("square", "three-pass"): 60, ("hex", "three-pass"): 80,
              ("square", "cell-wise"): 56,
              ("hex", "cell-wise"): 72, ("square", "fused-tile"): 28, ("hex", "fused-tile"): 36,
              ("square", "fused-packed"): 32, ("hex", "fused-packed"): 36,
              ("square", "fused-settled"): 32, ("hex", "fused-settled"): 36}
FLOOR_BYTES = {"square": 28, "hex": 36}

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


def time_grid(ctx, kind, n, seconds, path, per_call=None, tile=None, sides="walls"):
    cls = hydro.HexWaterGrid if kind == "hex" else hydro.WaterGrid
    terrain, water = scene(n, kind)
    wp = hydro.water_passes
    climb = wp.STREAM_MIN_CELLS[kind], wp.STREAM_MIN_CELLS_WALLED[kind], wp.WIDE_SHAPE[kind]
    if path == "fused-settled":     # walled tiles are chosen as the grid is made, programs in its first call
        wp.STREAM_MIN_CELLS[kind] = wp.STREAM_MIN_CELLS_WALLED[kind] = None
        wp.WIDE_SHAPE[kind] = ()
    try:
        g = cls(ctx, terrain, water=water, friction=0.02, passes=PATHS[path])
        for side, bc, value in OPEN_SIDES if sides == "open" else ():
            g.set_boundary(side, bc, value * (n if bc in ("inflow", "outflow") else 1))
        if tile and path != "fused-packed":
            g._tile = tile
        if path == "fused-packed":
            g._packed = tuple(tile) if tile else True
        if path == "fused-tile":
            g._packed = False
        h = 0.5 * g.max_stable_dt()
        g.step(h * 4, substeps=4)                 # compile, warm up
    finally:
        wp.STREAM_MIN_CELLS[kind], wp.STREAM_MIN_CELLS_WALLED[kind], wp.WIDE_SHAPE[kind] = climb
    ctx.finish()
    t = time.perf_counter()
    while not per_call and time.perf_counter() - t < seconds:  # a new program can run slow at first
        g.step(h * 4, substeps=4)                 # (calls of per_call warm up below, at their own size)
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
        while time.perf_counter() - t < seconds:  # the first calls on a new grid run slow (H200)
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
    ok = abs(g.volume() - g.ledger()["expected"]) <= 1e-4 * g.ledger()["expected"]
    g.release()
    return per_substep, ok


def time_numpy(n, seconds):
    terrain, water = scene(n, "square")
    s = ref.State.new(terrain, water, params=hydro.WaterParams(friction=0.02))
    steps, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        ref.step(s, 0.01)
        steps += 1
    return (time.perf_counter() - t) / steps


def main():
    ap = argparse.ArgumentParser(description="hydro water benchmark")
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 128, 256])
    ap.add_argument("--kinds", nargs="+", default=["square", "hex"])
    ap.add_argument("--paths", nargs="+", default=list(PATHS), choices=list(PATHS), help="step implementations to time")
    ap.add_argument("--seconds", type=float, default=0.5, help="time per measurement")
    ap.add_argument("--substeps-per-call", type=int, help="substeps per step() call (default: as many as fill "
                    "a quarter of --seconds); small values show each call's fixed costs")
    ap.add_argument("--tiles", nargs="+", metavar="XxYxN",
                    help="fused-tile: time these tile shapes (cells x, cells y, invocations), e.g. 32x32x256 "
                    "(default: hydro.water_passes.FUSED_TILE); fused-packed: (cells x, cells y, substeps a launch), "
                    "e.g. 24x24x2 (default: hydro.water_passes.PACKED_SHAPE)")
    ap.add_argument("--sides", choices=["walls", "open"], default="walls",
                    help="walls all round, or open: inflow left, a level right, outflow at the top")
    ap.add_argument("--copy-mb", type=int, default=256)
    ap.add_argument("--numpy", action="store_true", help="also time the NumPy float64 reference")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    ctx = hydro.create_context()
    info = {"renderer": ctx.info["GL_RENDERER"], "version": ctx.info["GL_VERSION"],
            "machine": platform.node(), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(f"GL_RENDERER: {info['renderer']}  GL_VERSION: {info['version']}")
    buffer_gbs, image_gbs = copy_bandwidths(ctx, args.copy_mb)
    copy = max(buffer_gbs, image_gbs)
    info.update(substeps_per_call=args.substeps_per_call, sides=args.sides, copy_GBps=copy, buffer_copy_GBps=buffer_gbs,
                image_copy_GBps=image_gbs)
    print(f"copy kernels (read + write): vec4 buffer {buffer_gbs:.1f} GB/s, rgba32f image {image_gbs:.1f} GB/s; "
          f"% of copy is of the faster")
    print("| grid | path | size | cell·steps/s | µs/substep | GB/s | % of copy | floor % | ledger ok |")
    print("|---|---|---|---|---|---|---|---|---|")
    tiles = [tuple(int(v) for v in t.split("x")) for t in args.tiles] if args.tiles else [None]
    rows = []
    for n in args.sizes:
        for kind in args.kinds:
            for path in args.paths:
                for tile in tiles if path in ("fused-tile", "fused-packed") else [None]:
                    per, ok = time_grid(ctx, kind, n, args.seconds, path, args.substeps_per_call, tile,
                                        args.sides)
                    rate = n * n / per
                    gbs = rate * PASS_BYTES[kind, path] / 1e9
                    floor = rate * FLOOR_BYTES[kind] / 1e9 / copy
                    label = path + (" " + "x".join(map(str, tile)) if tile else "")
                    rows.append({"grid": kind, "path": label, "size": n, "cell_steps_per_s": rate,
                                 "us_per_substep": per * 1e6, "GBps": gbs, "copy_fraction": gbs / copy,
                                 "floor_fraction": floor, "ledger_ok": ok})
                    print(f"| {kind} | {label} | {n}² | {rate:.3g} | {per * 1e6:.1f} | {gbs:.1f} | "
                          f"{100 * gbs / copy:.0f}% | {100 * floor:.0f}% | {ok} |", flush=True)
        if args.numpy:
            per = time_numpy(n, args.seconds)
            rows.append({"grid": "numpy-reference", "size": n, "cell_steps_per_s": n * n / per,
                         "us_per_substep": per * 1e6})
            print(f"| numpy float64 reference | {n}² | {n * n / per:.3g} | {per * 1e6:.1f} | | | | |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"info": info, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
