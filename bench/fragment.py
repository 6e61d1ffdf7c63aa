"""The fragment backend (GL 4.1, hydro.water_fragment) against the compute kernels, in one process.

Both grids advance the same wavy lake (bench/water.py's scene) in step(dt, substeps=n) calls, timed
between two glFinish. On a GL 4.3+ context the fragment grid is made directly (FragmentWaterGrid), so
the same card runs both; on macOS it is the one WaterGrid returns. Both plan each call from a record
of the water reduced on the GPU at the end of the call before the previous one (the fragment grid's
by fragment passes, 16 bytes read back), so calls of one substep pay one small reduction each.
`--cycle` turns the water cycle on in both (bench/water.py's: a light rain and evaporation, a spring and
a drain): the fragment grid's move pass then runs the cycle and writes each cell's record too, and its
stats passes add what evaporation and drains took to the ledger, every 64 substeps and once a call.
Both compute every tile (sleep=False): this times the backends' substeps; bench/world.py times sleeping.

    python bench/fragment.py --sizes 256 1024 4096 --calls 1 64 [--cycle] [--rounds 3]
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                                    # noqa: E402
from bench.water import scene                                   # noqa: E402
from hydro.water_fragment import FragmentHexWaterGrid, FragmentWaterGrid   # noqa: E402

GRIDS = {("square", "fragment"): FragmentWaterGrid, ("hex", "fragment"): FragmentHexWaterGrid,
         ("square", "compute"): hydro.WaterGrid, ("hex", "compute"): hydro.HexWaterGrid}


def time_grid(ctx, kind, backend, n, per_call, seconds, cycle=False):
    terrain, water = scene(n, kind)
    g = GRIDS[kind, backend](ctx, terrain, water=water, sleep=False)
    if cycle:                                 # as bench/water.py's --cycle
        g.rain, g.evaporation = 1e-5, 2e-6
        g.add_source(n / 4, n / 4, 3.0, 0.5)
        g.add_source(3 * n / 4, 3 * n / 4, 3.0, -0.5)
    h = 0.5 * g.max_stable_dt()
    g.step(h * per_call, substeps=per_call)
    ctx.finish()
    calls, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        g.step(h * per_call, substeps=per_call)
        calls += 1
    ctx.finish()
    per_substep = (time.perf_counter() - t) / (calls * per_call)
    ok = abs(g.volume() - g.ledger()["expected"]) <= 1e-5 * g.ledger()["expected"]
    g.release()
    return per_substep, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--calls", type=int, nargs="+", default=[1, 64], metavar="SUBSTEPS")
    ap.add_argument("--kinds", nargs="+", default=["square", "hex"])
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--rounds", type=int, default=1,
                    help="time the two grids this many times in turn and keep each one's fastest (a shared machine)")
    ap.add_argument("--cycle", action="store_true", help="the water cycle on: rain, evaporation, a spring, a drain")
    args = ap.parse_args()
    ctx = hydro.create_context()
    print(f"GL_RENDERER: {ctx.info['GL_RENDERER']}  GL_VERSION: {ctx.info['GL_VERSION']}  "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}" + ("  cycle on" if args.cycle else ""))
    print("| grid | size | substeps a call | fragment µs/substep | compute µs/substep | fragment cell·steps/s | ledger ok "
          "| fragment / compute |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for kind in args.kinds:
            for per_call in args.calls:
                runs = [(time_grid(ctx, kind, "fragment", n, per_call, args.seconds, args.cycle),
                         time_grid(ctx, kind, "compute", n, per_call, args.seconds, args.cycle)[0])
                        for _ in range(args.rounds)]
                frag, comp = min(r[0][0] for r in runs), min(r[1] for r in runs)
                ok = all(r[0][1] for r in runs)
                print(f"| {kind} | {n}² | {per_call} | {frag * 1e6:.1f} | {comp * 1e6:.1f} | {n * n / frag:.3g} | {ok} | "
                      f"{frag / comp:.2f} |", flush=True)


if __name__ == "__main__":
    main()
