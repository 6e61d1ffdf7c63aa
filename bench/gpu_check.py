"""Every water kernel on this machine's GL against the cell-wise kernel, over a run of calls: what to run
first on a GPU, before timing anything.

CI runs on llvmpipe, which compiles GLSL that a GPU's compiler may treat otherwise and runs dispatches
one after another, so faults of a GPU's compiler or of the order its work lands in show only on one. For
both lattices, both pipe areas (square), walls and open sides, and with the planner's size thresholds
at 0 so that the small grid takes every program large grids take (the wide climbs, their EDGES ring,
the climbed and split programs), this runs the same calls of 2, 1, 2, 4, 3 and 8 substeps through the
planner's choice, the fused kernel and the blocked kernel in every call, and through the cell-wise
kernel (with inertia and Manning's friction: the planner's choice and the blocked kernel, square grids
climbing wide tiles from any size), and compares water and flows after every call and the volume with
the ledger at the end. Each call starts from the flows the last one left, which a grid's first call, from rest, does not test. The
grids sleep as GPUs do (the blocked kernel over its awake tiles), and a third of the land starts dry, so
their first calls skip tiles. Erosion in the planner's kernel (from two substeps a call the tile program's
phases, its interior tiles too) runs against the cell-wise kernel's passes, classic and with inertia:
water, beds and sediment after every call, and each grid's material against its sediment ledger. The
smoke step runs too. Exit status 1 where anything disagrees.

    python bench/gpu_check.py                   # prints GL_RENDERER, one line a case
    python bench/gpu_check.py --size 70 90 --tolerance 1e-5
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                     # noqa: E402
from hydro import water_plan                     # noqa: E402

CALLS = (2, 1, 2, 4, 3, 8)
OPEN_SIDES = (("left", "inflow", 0.5), ("right", "level", 0.3), ("top", "outflow", 0.2))
# What puts a small grid on every program of large grids: a wide climb of 7 x 4 cells four substeps a
# launch, its EDGES ring with open sides, the split and the climbed programs from any size, and sleeping
# calls that climb tiles of 16 texels with an interior rectangle (their edge tiles listed apart).
FORCED = dict(wide=((0, ((7, 4), 4)),), wide_open_from=0, split_from=0, climb_from=0, climb_walled_from=0,
              sleep_climb=((16, 16), 4))
# With inertia (square): the climb on wide tiles of 7 x 4 cells two substeps a launch and its EDGES ring,
# from any size, beside the tile program's calls of an odd count.
FORCED_INERTIA = dict(wide=((0, ((7, 4), 2)),), wide_open_from=0, split_from=0)


def grid(ctx, cls, terrain, water, kernel, pipe_area, sides, forced, inertia=False):
    g = cls(ctx, terrain, water=water, friction=0.1, kernel=kernel, pipe_area=pipe_area, inertia=inertia,
            manning=0.03 if inertia else 0.0)
    # the GPU's plan, on any device
    tuning = water_plan.Tuning.for_device("gpu", cls is hydro.HexWaterGrid, inertia=inertia)
    if forced:
        tuning = tuning.replace(**{k: v for k, v in (FORCED_INERTIA if inertia else FORCED).items()
                                   if cls is hydro.WaterGrid or k in ("split_from",)})
    g._retune(tuning)
    for side, kind, value in OPEN_SIDES if sides == "open" else ():
        g.set_boundary(side, kind, value)
    return g


def flows(g):
    return [g.flow_x, g.flow_y] + ([g.flow_z] if isinstance(g, hydro.HexWaterGrid) else [])


def check_case(ctx, cls, terrain, water, pipe_area, sides, tolerance, forced, inertia=False):
    """(worst water difference, worst flow difference, worst ledger error, ok) of every kernel against
    the cell-wise one over CALLS, each relative to the deepest water / largest flow of the cell-wise one
    (with inertia, which the fused kernel lacks, the planner's choice and the blocked kernel)."""
    kernels = (None, "blocked") if inertia else (None, "fused", "blocked")
    grids = {kernel: grid(ctx, cls, terrain, water, kernel, pipe_area, sides, forced, inertia) for kernel in kernels}
    ref = grid(ctx, cls, terrain, water, "cells", pipe_area, sides, forced, inertia)
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


EROSION = dict(capacity=0.4, dissolve=0.5, deposit=0.5, talus=30.0, slump=0.5)


def check_erosion(ctx, cls, inertia, terrain, water, tolerance):
    """(worst differences, ok) of erosion on the planner's kernel against the cell-wise kernel's passes over
    CALLS, open sides, suspended sediment and a bedrock under part of the grid: water, beds and sediment
    each over the cell-wise grid's largest, and each grid's material change against its sediment ledger
    over its material."""
    rng = np.random.default_rng(5)
    sediment = (0.3 * water * rng.random(water.shape)).astype(np.float32)
    bedrock = np.where(rng.random(water.shape) < 0.3, terrain - 0.01, -1e3).astype(np.float32)
    grids = []
    for kernel in (None, "cells"):
        g = cls(ctx, terrain, water=water, friction=0.1, inertia=inertia, kernel=kernel)
        tuning = water_plan.Tuning.for_device("gpu", cls is hydro.HexWaterGrid, inertia=inertia)
        g._retune(tuning.replace(split_from=0))
        for side, kind, value in OPEN_SIDES:
            g.set_boundary(side, kind, value)
        g.erosion, g.sediment, g.bedrock = hydro.Erosion(**EROSION), sediment, bedrock
        grids.append(g)
    material = [g.material() for g in grids]
    worst = {"water": 0.0, "bed": 0.0, "sediment": 0.0, "material": 0.0}
    try:
        for n in CALLS:
            for g in grids:
                g.step(0.02 * n, substeps=n)
            got, want = grids
            for key, name in (("water", "water"), ("bed", "terrain"), ("sediment", "sediment")):
                a, b = getattr(got, name), getattr(want, name)
                worst[key] = max(worst[key], float(np.abs(a - b).max()) / max(float(np.abs(b).max()), 1e-30))
        for g, before in zip(grids, material):
            error = abs(g.material() - before - g.ledger()["sediment_out"]) / before
            worst["material"] = max(worst["material"], error)
    finally:
        for g in grids:
            g.release()
    ok = max(worst["water"], worst["bed"], worst["sediment"]) <= tolerance and worst["material"] <= 1e-7
    return worst, ok


def main(argv=None, ctx=None) -> int:
    """The check on `ctx` (a standalone context of hydro.create_context() when None)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, nargs=2, default=(70, 90), metavar=("NY", "NX"))
    ap.add_argument("--tolerance", type=float, default=1e-5,
                    help="largest difference from the cell-wise kernel, over the deepest water (largest flow)")
    args = ap.parse_args(argv)
    own = ctx is None
    ctx = hydro.create_context() if own else ctx
    print("GL_RENDERER", ctx.info["GL_RENDERER"], flush=True)
    rng = np.random.default_rng(3)
    terrain = (rng.random(args.size) * 0.5).astype(np.float32)
    water = (rng.random(args.size) * 0.5).astype(np.float32)
    water[:, 2 * args.size[1] // 3:] = 0.0          # dry land, whose tiles sleep until the water comes
    failed = 0
    for forced in (False, True):
        for cls in (hydro.WaterGrid, hydro.HexWaterGrid):
            for pipe_area in ("depth", 1.0) if cls is hydro.WaterGrid else ("depth",):
                for sides in ("walls", "open"):
                    worst, ok = check_case(ctx, cls, terrain, water, pipe_area, sides, args.tolerance, forced)
                    failed += not ok
                    print(f"{'forced' if forced else 'default':8s} {cls.__name__:13s} pipe_area={pipe_area!s:6s}"
                          f" {sides:6s} water {worst['water']:.1e} flows {worst['flows']:.1e}"
                          f" ledger {worst['ledger']:.1e} {'ok' if ok else 'FAIL'}", flush=True)
    for cls in (hydro.WaterGrid, hydro.HexWaterGrid):
        for sides in ("walls", "open"):
            worst, ok = check_case(ctx, cls, terrain, water, "depth", sides, args.tolerance, True, inertia=True)
            failed += not ok
            print(f"inertia  {cls.__name__:13s} {sides:6s} water {worst['water']:.1e} flows {worst['flows']:.1e}"
                  f" ledger {worst['ledger']:.1e} {'ok' if ok else 'FAIL'}", flush=True)
    for cls in (hydro.WaterGrid, hydro.HexWaterGrid):
        for inertia in (False, True):
            worst, ok = check_erosion(ctx, cls, inertia, terrain + 1.0, water, args.tolerance)
            failed += not ok
            print(f"erosion  {cls.__name__:13s} {'inertia' if inertia else 'classic':8s} water {worst['water']:.1e}"
                  f" bed {worst['bed']:.1e} sediment {worst['sediment']:.1e} material {worst['material']:.1e}"
                  f" {'ok' if ok else 'FAIL'}", flush=True)
    smoke = hydro.SmokeGrid(ctx, (48, 40))
    for _ in range(3):
        smoke.step(1 / 60)
    finite = bool(np.isfinite(smoke.density).all())
    failed += not finite
    print(f"SmokeGrid: 3 steps, density finite: {finite}")
    smoke.release()
    if own:
        ctx.release()
    print("all kernels agree" if not failed else f"{failed} case(s) disagree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
