"""Offscreen capture: run the demo scene with no window (EGL, no display) and write a PNG.

    python -m demo_game --headless --frames 600 --script dig-channel --out shot.png

Every frame feeds exactly one fixed step's worth of real time (STEP) to the game, so a capture is
deterministic and independent of how fast the machine renders.
"""
from __future__ import annotations

import time

import numpy as np

import hydro

from . import world as worlds
from .game import STEP, Game
from hydro.image import write_png
from .scripts import SCRIPTS

SKY = (0.64, 0.78, 0.92, 1.0)
FRAMES = 300                    # frames run where --frames is not given


def render_frame(game, size, samples=4) -> np.ndarray:
    """The current view as (h, w, 3) uint8, top row first; multisampled where the driver allows."""
    ctx = game.ctx
    width, height = size
    samples = min(samples, ctx.max_samples)
    msaa = ctx.framebuffer(ctx.renderbuffer(size, 4, samples=samples), ctx.depth_renderbuffer(size, samples=samples))
    resolved = ctx.framebuffer(ctx.renderbuffer(size, 4))
    try:
        msaa.clear(*SKY, depth=1.0)
        game.draw(msaa, width / height)
        ctx.copy_framebuffer(resolved, msaa)
        pixels = np.frombuffer(resolved.read(components=3), np.uint8).reshape(height, width, 3)
    finally:
        for obj in (msaa, resolved):
            for att in (*obj.color_attachments, obj.depth_attachment):
                if att is not None:
                    att.release()
            obj.release()
    return pixels[::-1].copy()


def run(args) -> int:
    ctx = hydro.create_context()
    print(f"headless: {ctx.info['GL_RENDERER']} (OpenGL {ctx.version_code // 100}.{ctx.version_code % 100 // 10})")
    game = Game(ctx, worlds.build(args.size, args.seed), hexagonal=args.hex, model=args.model)
    if args.load:
        from .saves import load
        load(game, args.load)
    script = SCRIPTS[args.script](game) if args.script else None
    if args.yaw is not None:
        game.camera.yaw = args.yaw
    if args.pitch is not None:
        game.camera.pitch = args.pitch
    if args.zoom is not None:
        game.camera.zoom(args.zoom)
    frames = FRAMES if args.frames is None else args.frames
    start = time.perf_counter()
    for frame in range(frames):
        if script is not None:
            script.before_frame(game, frame)
        game.advance(STEP)
        if args.every and (frame + 1) % args.every == 0:
            stem = args.out[:-4] if args.out.endswith(".png") else args.out
            write_png(f"{stem}-{frame + 1:05d}.png", render_frame(game, args.resolution))
    game.ctx.finish()               # the steps are queued, not done, until the GPU has run them
    sim_seconds = time.perf_counter() - start
    write_png(args.out, render_frame(game, args.resolution))
    ledger = game.grid.ledger()
    print(f"headless: {frames} frames ({game.steps} steps, t = {game.grid.sim_time:.2f} s simulated) in "
          f"{sim_seconds:.2f} s; volume {game.grid.volume():.3f} (ledger {ledger['expected']:.3f}); wrote {args.out}")
    game.release()
    ctx.release()
    return 0
