"""Demo frame time: simulation and rendering of the demo scene per frame, headless, at a given size.

    python bench/demo.py --size 128                      # llvmpipe target: >= 15 fps
    python bench/demo.py --size 512 --substeps 4         # GPU target: >= 60 fps with >= 4 substeps

Each frame advances the water by one demo frame (1/60 s real = 1/30 s simulated) in `--substeps`
explicit substeps, then draws terrain and water with hydro.render into a `--resolution` offscreen
framebuffer; the dig-channel script runs so the water is moving. Times are wall clock around
ctx.finish() (GPU timer queries are not reliable on llvmpipe), so "sim" is the simulation's GPU time
plus its dispatch overhead and "frame" is sim + render. Prints GL_RENDERER.

Terrain: the demo world built with `--noise numpy` by default (NumPy value noise, so this runs on
machines without the `noise` package); `--noise perlin` uses the demo's Perlin terrain.
Needs moderngl and numpy (and the repository on sys.path for demo_game).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hydro  # noqa: E402
from demo_game import world  # noqa: E402
from demo_game.game import STEP, Game  # noqa: E402
from demo_game.scripts import DigChannel  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--substeps", type=int, default=4, help="explicit substeps per frame")
    p.add_argument("--frames", type=int, default=120)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--resolution", default="1280x720")
    p.add_argument("--noise", choices=("numpy", "perlin"), default="numpy")
    p.add_argument("--hex", action="store_true")
    args = p.parse_args(argv)
    width, height = (int(v) for v in args.resolution.lower().split("x"))

    ctx = hydro.create_context()
    print(f"GL_RENDERER: {ctx.info['GL_RENDERER']}  GL_VERSION: {ctx.info['GL_VERSION']}")
    t0 = time.perf_counter()
    game = Game(ctx, world.build(args.size, seed=7, noise=args.noise), hexagonal=args.hex)
    print(f"world {args.size}x{args.size} ({'hex' if game.hexagonal else 'square'}) built in "
          f"{time.perf_counter() - t0:.2f} s; {args.substeps} substeps/frame; {width}x{height} pixels")
    script = DigChannel(game)
    fbo = ctx.framebuffer(ctx.renderbuffer((width, height), 4), ctx.depth_renderbuffer((width, height)))
    dt = STEP * game.time_scale
    sim, frame = [], []
    for i in range(args.warmup + args.frames):
        script.before_frame(game, i)
        ctx.finish()
        start = time.perf_counter()
        game.grid.step(dt, substeps=args.substeps)
        ctx.finish()
        mid = time.perf_counter()
        fbo.clear(0.64, 0.78, 0.92, 1.0, depth=1.0)
        game.draw(fbo, width / height)
        ctx.finish()
        end = time.perf_counter()
        if i >= args.warmup:
            sim.append((mid - start) * 1e3)
            frame.append((end - start) * 1e3)
    sim, frame = np.array(sim), np.array(frame)
    print(f"sim   ms/frame: mean {sim.mean():7.2f}  median {np.median(sim):7.2f}  p95 {np.percentile(sim, 95):7.2f}")
    print(f"frame ms/frame: mean {frame.mean():7.2f}  median {np.median(frame):7.2f}  p95 {np.percentile(frame, 95):7.2f}")
    print(f"fps (1000 / mean frame ms): {1000.0 / frame.mean():.1f}   "
          f"volume {game.grid.volume():.2f} vs ledger {game.grid.ledger()['expected']:.2f}   "
          f"tiles computed in the last frame {100 * game.grid.awake:.0f} %")
    game.release()
    fbo.release()
    ctx.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
