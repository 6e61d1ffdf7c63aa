"""Big worlds: the cost of a substep against the fraction of the world where water moves.

A dry world sloping gently, with one basin of sloshing water walled by a ridge in its middle, covering
about `fraction` of the area (0: a single small pond); each grid advances calls of `--calls` substeps
at half the stable limit, timed with glFinish on both ends after a warm-up call, `--repeat` calls and
at least `--seconds` of them (a GPU's clocks take a few tenths of a second to settle). Modes:
- "sleep": the grid as a game gets it (sleep=True, the planner's kernel);
- "cells": sleep=True on the cell-wise kernel, the one that skips sleeping tiles (hydro.water_sleep);
- "dense": sleep=False, the planner's kernel, every tile computed (the rate of today's kernels).
It prints the fraction of tiles computed (`g.awake`), µs a substep, cell·steps/s, and the speed-up over
"dense" of the same world, with the GL renderer; `--svg` draws µs a substep against the awake fraction.
`--backend fragment` times hydro.water_fragment's grid (the passes GL 3.3-4.2 contexts run; modes "sleep"
and "dense") on whatever context hydro.create_context() gives; Mesa's overrides make it the GL 4.1 one.

    python bench/world.py --sizes 1024 --fractions 0 0.05 1 --calls 32          # llvmpipe
    python bench/world.py --sizes 4096 16384 --fractions 0 0.01 0.05 0.2 1 --calls 64 --json w.json --svg w.svg
    MESA_GL_VERSION_OVERRIDE=4.1 MESA_GLSL_VERSION_OVERRIDE=410 MESA_EXTENSION_OVERRIDE="-GL_ARB_compute_shader \
        -GL_ARB_shader_storage_buffer_object -GL_ARB_shader_image_load_store" \
        python bench/world.py --backend fragment --sizes 1024 --fractions 0 1 --calls 8 --repeat 2
"""
import argparse
import ast
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                     # noqa: E402
from hydro.water_fragment import FragmentWaterGrid   # noqa: E402

MODES = {"sleep": (True, None), "cells": (True, "cells"), "dense": (False, None)}
FRAGMENT_MODES = ("sleep", "dense")             # the fragment grid has no kernels to choose


def world(n: int, fraction: float):
    """(terrain, water) float32: a slope, and a walled basin of about fraction * n² cells of waves."""
    side = max(8, int(round(np.sqrt(fraction) * n)))
    lo = (n - side) // 2
    terrain = np.empty((n, n), np.float32)
    terrain[:] = (np.arange(n, dtype=np.float32) * np.float32(1e-3))[None, :]
    water = np.zeros((n, n), np.float32)
    if side >= n:                                   # the whole world a lake of waves
        lo, side = 0, n
    else:                                           # a ridge around the basin
        terrain[max(lo - 2, 0):lo + side + 2, max(lo - 2, 0):lo + side + 2] = 50.0
    y, x = np.ogrid[0:side, 0:side]
    inside = (slice(lo, lo + side), slice(lo, lo + side))
    terrain[inside] = 0.0
    water[inside] = 1.0 + 0.2 * np.sin(x * np.float32(0.11) + y * np.float32(0.03))
    return terrain, water


def time_world(ctx, n, fraction, mode, calls, repeat, tuning=None, backend="compute", seconds=0.0, open_side=False,
               cycle=False):
    sleep, kernel = MODES[mode]
    terrain, water = world(n, fraction)
    if backend == "fragment":
        g = FragmentWaterGrid(ctx, terrain, water=water, sleep=sleep)
    else:
        g = hydro.WaterGrid(ctx, terrain, water=water, sleep=sleep, kernel=kernel)
    del terrain, water
    if open_side:                                   # the dry slope's low side open: calls with open sides
        g.set_boundary("left", "outflow")
    if cycle:                                       # evaporation everywhere, a spring in the lake
        g.evaporation = 2e-6
        g.add_source(n / 2, n / 2, 3.0, 1e-3)
    if tuning:
        g._retune(g._tuning.replace(**tuning))
    h = 0.5 * g.max_stable_dt()
    g.step(h * calls, substeps=calls)             # compile, warm up, and let the first all-awake substep pass
    ctx.finish()
    t, done = time.perf_counter(), 0
    while done < repeat or time.perf_counter() - t < seconds:     # a GPU's clocks need a few tenths
        g.step(h * calls, substeps=calls)
        done += 1
    ctx.finish()
    per = (time.perf_counter() - t) / (done * calls)
    awake, ran = g.awake, "fragment" if backend == "fragment" else g._last_call.kernel
    ok = abs(g.volume() - g.ledger()["expected"]) <= 1e-4 * g.ledger()["expected"]
    g.release()
    return per, awake, ran, ok


LABELS = {"sleep": "sleep=True", "cells": "sleeping, cell-wise kernel", "dense": "every tile, dense kernel"}


def svg(rows, path, title=""):
    """µs a substep (log) against the fraction of tiles the sleeping grids computed (log), a line per size
    and mode."""
    w, h, m = 640, 400, 60
    # a world's x is the fraction its sleeping grids computed, its dense grid's too
    sleeping = {(r["size"], r["fraction"]): r["awake"] for r in rows if r["mode"] != "dense"}
    rows = [dict(r, awake=sleeping.get((r["size"], r["fraction"]), r["awake"])) for r in rows]
    xs = [max(r["awake"], 1e-3) for r in rows]
    ys = [r["us_per_substep"] for r in rows]
    x0, x1 = np.floor(np.log10(min(xs))), 0.0
    y0, y1 = np.floor(np.log10(min(ys))), np.ceil(np.log10(max(ys)))

    def px(a, u):
        return (m + (np.log10(max(a, 1e-3)) - x0) / max(x1 - x0, 1e-9) * (w - 2 * m),
                h - m - (np.log10(u) - y0) / max(y1 - y0, 1e-9) * (h - 2 * m))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="25" text-anchor="middle">{title}</text>',
           f'<line x1="{m}" y1="{h - m}" x2="{w - m}" y2="{h - m}" stroke="black"/>',
           f'<line x1="{m}" y1="{m}" x2="{m}" y2="{h - m}" stroke="black"/>',
           f'<text x="{w / 2}" y="{h - 15}" text-anchor="middle">fraction of tiles a sleeping grid computes (log)</text>',
           f'<text x="15" y="{h / 2}" transform="rotate(-90 15 {h / 2})" text-anchor="middle">µs a substep (log)</text>']
    for e in range(int(y0), int(y1) + 1):
        _, y = px(1.0, 10.0 ** e)
        out.append(f'<text x="{m - 5}" y="{y + 4:.0f}" text-anchor="end">1e{e}</text>')
    for a in (1e-3, 1e-2, 1e-1, 1.0):
        if np.log10(a) >= x0 - 1e-9:
            x, _ = px(a, 10.0 ** y0)
            out.append(f'<text x="{x:.0f}" y="{h - m + 16}" text-anchor="middle">{a:g}</text>')
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    lines = sorted({(r["size"], r["mode"]) for r in rows})
    for i, (n, mode) in enumerate(lines):
        pts = sorted((r["awake"], r["us_per_substep"]) for r in rows if (r["size"], r["mode"]) == (n, mode))
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in (px(a, u) for a, u in pts))
        c = colours[i % len(colours)]
        out.append(f'<polyline points="{coords}" fill="none" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{w - m - 200}" y="{m + 16 * i}" fill="{c}">{n}² {LABELS[mode]}</text>')
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description="hydro: substep cost against the awake fraction")
    ap.add_argument("--sizes", type=int, nargs="+", default=[512])
    ap.add_argument("--fractions", type=float, nargs="+", default=[0.0, 0.05, 1.0])
    ap.add_argument("--modes", nargs="+", default=None, choices=list(MODES),
                    help="default: all of the backend's (fragment: sleep, dense)")
    ap.add_argument("--backend", default="compute", choices=("compute", "fragment"),
                    help="hydro.WaterGrid as the context gives it, or hydro.water_fragment's grid")
    ap.add_argument("--calls", type=int, default=32, help="substeps a step() call")
    ap.add_argument("--repeat", type=int, default=3, help="timed calls, at least")
    ap.add_argument("--seconds", type=float, default=0.3, help="and calls for at least so long")
    ap.add_argument("--warmup", type=float, default=1.0,
                    help="seconds of untimed calls before the first row (a GPU's clocks rise under load)")
    ap.add_argument("--tuning", nargs="+", default=[], metavar="NAME=VALUE",
                    help="water_plan.Tuning fields of the grids timed, as Python literals (e.g. cell_rows=4)")
    ap.add_argument("--open", action="store_true",
                    help="the low side an outflow (calls with open sides; else walls all round)")
    ap.add_argument("--cycle", action="store_true",
                    help="the water cycle on: evaporation (2 µm/s) and a spring in the lake")
    ap.add_argument("--json")
    ap.add_argument("--svg")
    args = ap.parse_args()
    tuning = {name: ast.literal_eval(value) for name, _, value in (t.partition("=") for t in args.tuning)}
    modes = args.modes or (list(FRAGMENT_MODES) if args.backend == "fragment" else list(MODES))
    if args.backend == "fragment" and not set(modes) <= set(FRAGMENT_MODES):
        ap.error(f"--modes: the fragment backend runs {', '.join(FRAGMENT_MODES)}")
    if args.backend == "fragment" and tuning:
        ap.error("--tuning: the fragment backend has no tuning")
    ctx = hydro.create_context()
    version = f"{ctx.version_code // 100}.{ctx.version_code % 100 // 10}"
    info = {"renderer": ctx.info["GL_RENDERER"], "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "calls": args.calls, "tuning": args.tuning, "backend": args.backend, "gl": version,
            "open": args.open, "cycle": args.cycle}
    print(f"GL_RENDERER: {info['renderer']} (GL {version})  {info['date']}  {args.backend} backend  "
          f"calls of {args.calls} substeps{'  open low side' if args.open else ''}"
          f"{'  water cycle' if args.cycle else ''}  {' '.join(args.tuning)}")
    print("| size | world fraction | mode | kernel | awake | µs/substep | cell·steps/s | × dense | ledger ok |")
    print("|---|---|---|---|---|---|---|---|---|")
    if args.warmup > 0:
        time_world(ctx, args.sizes[0], args.fractions[0], "dense", args.calls, 1, tuning, args.backend,
                   args.warmup, args.open, args.cycle)
    rows = []
    for n in args.sizes:
        for fraction in args.fractions:
            dense = None
            for mode in sorted(modes, key=lambda m: m != "dense"):
                per, awake, ran, ok = time_world(ctx, n, fraction, mode, args.calls, args.repeat, tuning,
                                                 args.backend, args.seconds, args.open, args.cycle)
                dense = per if mode == "dense" else dense
                gain = f"{dense / per:.1f}" if dense else "-"
                rows.append({"size": n, "fraction": fraction, "mode": mode, "kernel": ran, "awake": awake,
                             "us_per_substep": per * 1e6, "cell_steps_per_s": n * n / per, "ledger_ok": ok})
                print(f"| {n}² | {fraction:g} | {mode} | {ran} | {awake:.3f} | {per * 1e6:.1f} | {n * n / per:.3g} | "
                      f"{gain} | {ok} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    if args.svg:
        svg(rows, args.svg, f"{info['renderer']}, calls of {args.calls} substeps")


if __name__ == "__main__":
    main()
