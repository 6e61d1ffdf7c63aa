"""What a game asks of the water between frames, and what it costs a frame: 64 points sampled
(sample_async, the handle read the next frame) and three gauges read (discharge and volume), and
set_boundary every frame (a tide), on a square grid with a river, a lake and a sea.

A frame is step(1/60 s) and the calls, paced as a game's swap chain paces it: at the end of frame N
the CPU waits until the GPU has finished frame N - 1 (a fence), so the GPU works on one frame while
the CPU queues the next, and a call that waited for the GPU would show as a longer frame. One grid
runs blocks of --block frames in turn, --cycles times: plain frames; frames with the calls (three
gauges added for the block, so their pass runs after every substep, and removed after it); frames
calling set_boundary (a tide on the sea's side). The first --warmup frames of a block are not
timed. Printed, as medians a frame over every timed frame of a kind:
- "calls": CPU ms inside sample_async + the last frame's result() + three gauges' discharge and volume,
  and how many of those reads (the sample's, the gauges' record) found their answer not back yet and
  so waited for it;
- frame ms with the calls beside the plain frames; the difference is what they add, stalls included;
- set_boundary: CPU ms of one call, and frame ms of the frames calling it every frame;
- substeps a frame of each kind (the same work, or the comparison says so).

    python bench/game_calls.py                          # 1024^2
    python bench/game_calls.py --size 256 --cycles 4    # quicker
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


def measure(ctx, n, kernel, cycles, block, warmup):
    """Per kind of frame: lists of (frame ms, calls ms, set_boundary ms), substeps, and reads that waited."""
    g = make_grid(ctx, n, kernel)
    points = np.random.default_rng(1).uniform(0, n - 1, (64, 2))
    pacer = Pacer(ctx)
    times = {kind: [] for kind in KINDS}
    substeps, frames = dict.fromkeys(KINDS, 0), dict.fromkeys(KINDS, 0)
    waited = reads = 0
    for _ in range(cycles):
        for kind in KINDS:
            gauges = [g.add_gauge((f * n - 0.5, -0.5), (f * n - 0.5, n - 0.5)) for f in (0.25, 0.5, 0.75)] \
                if kind == "calls" else []
            handle, first = None, g.iteration
            for frame in range(warmup + block):
                timed = frame >= warmup
                start = time.perf_counter()
                call_s = boundary_s = 0.0
                if kind == "tide":
                    t0 = time.perf_counter()
                    g.set_boundary("right", "level", 0.3 * math.sin(2.0 * math.pi * g.sim_time / 20.0))
                    boundary_s = time.perf_counter() - t0
                g.step(DT)
                if kind == "calls":
                    t0 = time.perf_counter()
                    if handle is not None:
                        waited += timed and not handle.ready
                        reads += timed
                        handle.result()
                    handle = g.sample_async(points)
                    ring, seq = g._gauges.ring, g._gauges.seq - 1    # the record the gauges read
                    if ring is not None and seq > 0:
                        waited += timed and not ring.done(seq)
                        reads += timed
                    for gauge in gauges:
                        gauge.discharge, gauge.volume
                    call_s = time.perf_counter() - t0
                pacer.end_frame()
                if timed:
                    times[kind].append((1e3 * (time.perf_counter() - start), 1e3 * call_s, 1e3 * boundary_s))
            substeps[kind] += g.iteration - first
            frames[kind] += warmup + block
            for gauge in gauges:
                gauge.remove()
    ctx.finish()
    pacer.release()
    g.release()
    return ({kind: np.median(np.array(t), axis=0) for kind, t in times.items()},
            {kind: substeps[kind] / frames[kind] for kind in KINDS}, waited, reads)


KINDS = ("plain", "calls", "tide")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--block", type=int, default=20, help="frames of one kind in a row")
    ap.add_argument("--cycles", type=int, default=10, help="blocks of each kind")
    ap.add_argument("--warmup", type=int, default=3, help="frames of a block not timed")
    ap.add_argument("--kernel", choices=("cells", "fused", "blocked"), default=None,
                    help="every call on this kernel (default: the planner's choice)")
    args = ap.parse_args()
    ctx = hydro.create_context()
    print(f"GL_RENDERER: {ctx.info['GL_RENDERER']}")
    print(f"GL_VERSION: {ctx.info['GL_VERSION']}")
    print(f"{args.size}^2 square grid, step({DT:.4f}) a frame, kernel {args.kernel or 'planned'}; {args.cycles} "
          f"blocks of {args.block} timed frames of each kind, medians a frame")
    medians, substeps, waited, reads = measure(ctx, args.size, args.kernel, args.cycles, args.block, args.warmup)
    plain = medians["plain"][0]
    print("substeps a frame: " + ", ".join(f"{kind} {n:.2f}" for kind, n in substeps.items()))
    print(f"sample 64 points + read 3 gauges: {medians['calls'][1]:.3f} ms CPU a frame; {waited} of {reads} "
          f"reads found their answer not back yet")
    print(f"frame time: {plain:.3f} ms plain, {medians['calls'][0]:.3f} ms with the calls and gauges "
          f"({medians['calls'][0] - plain:+.3f} ms)")
    print(f"set_boundary every frame: {medians['tide'][2]:.3f} ms CPU a call; frame time {medians['tide'][0]:.3f} ms "
          f"({medians['tide'][0] - plain:+.3f} ms)")


if __name__ == "__main__":
    main()
