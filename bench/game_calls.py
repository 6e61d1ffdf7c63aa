"""What a game asks of the water between frames, and what it costs a frame: 64 points sampled
(sample_async, the handle read the next frame) and three gauges read (discharge and volume), and
set_boundary every frame (a tide), on a square grid with a river, a lake and a sea.

A frame is step(1/60 s) and the calls, paced as a game's swap chain paces it: at the end of frame N
the CPU waits until the GPU has finished frame N - 1 (a fence), so the GPU works on one frame while
the CPU queues the next, and a call that waited for the GPU would show as a longer frame. Each loop
runs --warmup frames, then --frames timed ones, --repeats times interleaved with the others, and prints
the least of its runs' medians a frame (the machine's other work shows up as outliers and slow runs):
- "calls": CPU ms a frame inside sample_async + the last frame's result() + three gauges' discharge and
  volume, and how many of those reads (the sample's, the gauges' record) found their answer not back
  yet and so waited for it;
- frame ms of the loop with the calls (and the three gauges on the grid, whose pass runs after every
  substep) beside the same loop without them; the difference is what they add, stalls included;
- set_boundary: CPU ms of one call (a tide on the sea's side), and frame ms of the loop calling it
  every frame beside the plain loop.

    python bench/game_calls.py                          # 1024^2
    python bench/game_calls.py --size 256 --frames 60   # quicker
    python bench/game_calls.py --kernel blocked         # every call on one kernel
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                     # noqa: E402
from hydro import _native                        # noqa: E402

DT = 1.0 / 60.0


def scene(n):
    """A valley falling to a sea on the right, a hollow holding a lake, water 5 cm deep everywhere else."""
    y, x = np.mgrid[0:n, 0:n] / n
    terrain = 2.0 * (1.0 - x) + 0.3 * np.sin(6 * y) * np.sin(5 * x) - 2.5 * np.exp(-((x - 0.4) ** 2 + (y - 0.5) ** 2) / 0.02)
    water = np.maximum(0.6 - terrain, 0.05)
    return terrain, water


class Pacer:
    """The end of a frame: a fence after its work, then a wait for the frame before's fence."""

    def __init__(self, ctx):
        self.source = ctx.buffer(reserve=16)
        self.ring = _native.FencedReadback.create(ctx, 16, slots=4)
        self.ctx, self.frame = ctx, 0

    def end_frame(self):
        self.frame += 1
        if self.ring is None:                    # no fences (GL < 4.4): a finish stands in
            self.ctx.finish()
            return
        self.ring.push(self.source, self.frame)
        if self.frame > 1:
            self.ring.record(self.frame - 1)

    def release(self):
        if self.ring is not None:
            self.ring.release()
        self.source.release()


def make_grid(ctx, n, kernel):
    terrain, water = scene(n)
    g = hydro.WaterGrid(ctx, terrain, water=water, kernel=kernel)
    g.set_boundary("left", "inflow", 0.05 * n, span=(int(0.45 * n), int(0.55 * n)))
    g.set_boundary("right", "level", 0.0)
    for _ in range(3):
        g.step(DT)
    ctx.finish()
    return g


def run(ctx, n, kernel, frames, warmup, calls=False, tide=False):
    """Per timed frame: (frame ms, calls ms, set_boundary ms) arrays, and how many reads waited."""
    g = make_grid(ctx, n, kernel)
    rng = np.random.default_rng(1)
    points = rng.uniform(0, n - 1, (64, 2))
    gauges = [g.add_gauge((f * n - 0.5, -0.5), (f * n - 0.5, n - 0.5)) for f in (0.25, 0.5, 0.75)] if calls else []
    pacer = Pacer(ctx)
    handle, waited, times = None, 0, []
    for frame in range(warmup + frames):
        start = time.perf_counter()
        call_s = boundary_s = 0.0
        if tide:
            t0 = time.perf_counter()
            g.set_boundary("right", "level", 0.3 * math.sin(2.0 * math.pi * g.sim_time / 20.0))
            boundary_s = time.perf_counter() - t0
        g.step(DT)
        if calls:
            t0 = time.perf_counter()
            if handle is not None:
                waited += frame >= warmup and not handle.ready
                handle.result()
            handle = g.sample_async(points)
            ring = g._gauges.ring                # the gauges' record of the call before the latest
            waited += frame >= warmup and ring is not None and g._gauges.seq > 1 and not ring.done(g._gauges.seq - 1)
            for gauge in gauges:
                gauge.discharge, gauge.volume
            call_s = time.perf_counter() - t0
        pacer.end_frame()
        if frame >= warmup:
            times.append((time.perf_counter() - start, call_s, boundary_s))
    ctx.finish()
    substeps = g.iteration / (warmup + frames + 3)
    pacer.release()
    g.release()
    return 1e3 * np.array(times).T, waited, substeps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3, help="each loop this many times, interleaved")
    ap.add_argument("--kernel", choices=("cells", "fused", "blocked"), default=None,
                    help="every call on this kernel (default: the planner's choice)")
    args = ap.parse_args()
    ctx = hydro.create_context()
    print(f"GL_RENDERER: {ctx.info['GL_RENDERER']}")
    print(f"GL_VERSION: {ctx.info['GL_VERSION']}")
    print(f"{args.size}^2 square grid, step({DT:.4f}) a frame, {args.frames} frames timed after {args.warmup}, "
          f"kernel {args.kernel or 'planned'}; medians a frame, the least of {args.repeats} interleaved runs")
    loops = {"plain": {}, "calls": {"calls": True}, "tide": {"tide": True}}
    best, waited, substeps = {}, 0, {}
    for _ in range(args.repeats):
        for name, options in loops.items():
            (frame, calls, boundary), waits, substeps[name] = run(ctx, args.size, args.kernel, args.frames,
                                                                  args.warmup, **options)
            waited += waits
            medians = (float(np.median(frame)), float(np.median(calls)), float(np.median(boundary)))
            best[name] = medians if name not in best else tuple(map(min, best[name], medians))
    plain = best["plain"][0]
    print("substeps a frame: " + ", ".join(f"{name} {n:.2f}" for name, n in substeps.items()))
    print(f"sample 64 points + read 3 gauges: {best['calls'][1]:.3f} ms CPU a frame; {waited} of "
          f"{2 * args.frames * args.repeats} reads found their answer not back yet")
    print(f"frame time: {plain:.3f} ms without, {best['calls'][0]:.3f} ms with the calls and gauges "
          f"({best['calls'][0] - plain:+.3f} ms)")
    print(f"set_boundary every frame: {best['tide'][2]:.3f} ms CPU a call; frame time {best['tide'][0]:.3f} ms "
          f"({best['tide'][0] - plain:+.3f} ms)")


if __name__ == "__main__":
    main()
