"""Every water program on this machine's GL against the three passes, over a run of calls: what to run
first on a GPU, before timing anything.

CI runs on llvmpipe, which compiles GLSL that NVIDIA's compiler rejects and runs dispatches one after
another, so faults of a GPU's compiler or of the order its work lands in show only on one. For both
lattices, both pipe areas (square), walls and open sides, and with the size thresholds forced to 0 so
that the small grid takes every program large grids take (the wide climbs, their EDGES ring, the
stream and split programs), this runs the same calls of 2, 1, 2, 4, 3 and 8 substeps through each path
(passes=1 as `passes=None` picks it, passes=1 with the packed kernel in every call, passes=2) and
through the three passes, and compares water and flows after every call and the volume with the
ledger at the end. Each call starts from the flows the last one left, which a grid's first call, from
rest, does not test. The smoke step runs too. Exit status 1 where anything disagrees.

    python bench/gpu_check.py                   # prints GL_RENDERER, one line a case
    python bench/gpu_check.py --size 70 90 --tolerance 1e-5
"""
import argparse
import contextlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                     # noqa: E402
from hydro import water_passes as wp             # noqa: E402

CALLS = (2, 1, 2, 4, 3, 8)
OPEN_SIDES = (("left", "inflow", 0.5), ("right", "level", 0.3), ("top", "outflow", 0.2))
# The thresholds that keep small grids off the large grids' programs, and what forces them on: a wide
# climb of 7 x 4 cells four substeps a launch, its EDGES ring with open sides, the split and the
# stream programs from any size.
FORCED = ((wp.WIDE_SHAPE, "square", ((0, (7, 4, 4)),)), (wp.WIDE_OPEN_MIN_CELLS, "square", 0),
          (wp.SPLIT_MIN_CELLS, "square", 0), (wp.SPLIT_MIN_CELLS, "hex", 0),
          (wp.STREAM_MIN_CELLS, "square", 0), (wp.STREAM_MIN_CELLS_WALLED, "square", 0))


@contextlib.contextmanager
def thresholds(forced: bool):
    saved = [(table, key, table[key]) for table, key, _ in FORCED]
    try:
        if forced:
            for table, key, value in FORCED:
                table[key] = value
        yield
    finally:
        for table, key, value in saved:
            table[key] = value


def grid(ctx, cls, terrain, water, passes, pipe_area, sides, packed=None):
    g = cls(ctx, terrain, water=water, friction=0.1, passes=passes, pipe_area=pipe_area)
    g._packed = packed
    for side, kind, value in OPEN_SIDES if sides == "open" else ():
        g.set_boundary(side, kind, value)
    return g


def flows(g):
    return [g.flow_x, g.flow_y] + ([g.flow_z] if isinstance(g, hydro.HexWaterGrid) else [])


def check_case(ctx, cls, terrain, water, pipe_area, sides, tolerance):
    """(worst water difference, worst flow difference, worst ledger error, ok) of every path against
    the three passes over CALLS, each relative to the deepest water / largest flow of the three passes."""
    paths = {"passes=1": (1, None), "passes=1 packed": (1, True), "passes=2": (2, None)}
    grids = {name: grid(ctx, cls, terrain, water, p, pipe_area, sides, packed) for name, (p, packed) in paths.items()}
    ref = grid(ctx, cls, terrain, water, 3, pipe_area, sides)
    worst = {"water": 0.0, "flows": 0.0, "ledger": 0.0}
    try:
        for n in CALLS:
            for g in [*grids.values(), ref]:
                g.step(0.02 * n, substeps=n)
            want, want_flows = ref.water, flows(ref)
            depth = max(float(want.max()), 1e-30)
            scale = max(max(float(np.abs(q).max()) for q in want_flows), 1e-30)
            for g in grids.values():
                worst["water"] = max(worst["water"], float(np.abs(g.water - want).max()) / depth)
                for q, w in zip(flows(g), want_flows):
                    worst["flows"] = max(worst["flows"], float(np.abs(q - w).max()) / scale)
        for g in [*grids.values(), ref]:
            expected = g.ledger()["expected"]
            worst["ledger"] = max(worst["ledger"], abs(g.volume() - expected) / max(abs(expected), 1e-30))
    finally:
        for g in [*grids.values(), ref]:
            g.release()
    ok = worst["water"] <= tolerance and worst["flows"] <= tolerance and worst["ledger"] <= 1e-5
    return worst, ok


def main(argv=None, ctx=None) -> int:
    """The check on `ctx` (a standalone context of hydro.create_context() when None)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, nargs=2, default=(70, 90), metavar=("NY", "NX"))
    ap.add_argument("--tolerance", type=float, default=1e-5,
                    help="largest difference from the three passes, over the deepest water (largest flow)")
    args = ap.parse_args(argv)
    own = ctx is None
    ctx = hydro.create_context() if own else ctx
    print("GL_RENDERER", ctx.info["GL_RENDERER"], flush=True)
    rng = np.random.default_rng(3)
    terrain = (rng.random(args.size) * 0.5).astype(np.float32)
    water = (rng.random(args.size) * 0.5).astype(np.float32)
    failed = 0
    for forced in (False, True):
        with thresholds(forced):
            for cls in (hydro.WaterGrid, hydro.HexWaterGrid):
                for pipe_area in ("depth", 1.0) if cls is hydro.WaterGrid else ("depth",):
                    for sides in ("walls", "open"):
                        worst, ok = check_case(ctx, cls, terrain, water, pipe_area, sides, args.tolerance)
                        failed += not ok
                        print(f"{'forced' if forced else 'default':8s} {cls.__name__:13s} pipe_area={pipe_area!s:6s}"
                              f" {sides:6s} water {worst['water']:.1e} flows {worst['flows']:.1e}"
                              f" ledger {worst['ledger']:.1e} {'ok' if ok else 'FAIL'}", flush=True)
    smoke = hydro.SmokeGrid(ctx, (48, 40))
    for _ in range(3):
        smoke.step(1 / 60)
    finite = bool(np.isfinite(smoke.density).all())
    failed += not finite
    print(f"SmokeGrid: 3 steps, density finite: {finite}")
    smoke.release()
    if own:
        ctx.release()
    print("all paths agree" if not failed else f"{failed} case(s) disagree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
