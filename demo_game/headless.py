"""Offscreen capture: run the demo scene with no window (EGL, no display) and write a PNG.

    python -m demo_game --headless --frames 600 --script dig-channel --out shot.png
    python -m demo_game --headless --script erode --out erosion.png

Every frame feeds exactly one fixed step's worth of real time (STEP) to the game, so a capture is
deterministic and independent of how fast the machine renders. A script's `PANELS` (frames) are
pictures taken along the way and written left of the last one, in one image (before | after).
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


def side_by_side(pictures, gap=8) -> np.ndarray:
    """Pictures of one size in a row, left to right, `gap` pixels of white between them."""
    if len(pictures) == 1:
        return pictures[0]
    height = pictures[0].shape[0]
    space = np.full((height, gap, 3), 255, np.uint8)
    return np.concatenate([part for picture in pictures for part in (space, picture)][1:], axis=1)


def run(args) -> int:
    ctx = hydro.create_context()
    print(f"headless: {ctx.info['GL_RENDERER']} (OpenGL {ctx.version_code // 100}.{ctx.version_code % 100 // 10})")
    try:
        game = Game(ctx, worlds.build(args.size, args.seed), hexagonal=args.hex, model=args.model,
                    erosion=args.erosion)
    except Exception:                   # a game that cannot start: its context goes with it
        ctx.release()
        raise
    if args.load:
        from .saves import load
        load(game, args.load)
        if args.erosion:                     # --erosion wins over the save's flag
            game.erosion = True
    script = SCRIPTS[args.script](game) if args.script else None
    if args.yaw is not None:
        game.camera.yaw = args.yaw
    if args.pitch is not None:
        game.camera.pitch = args.pitch
    if args.zoom is not None:
        game.camera.zoom(args.zoom)
    frames = getattr(script, "FRAMES", FRAMES) if args.frames is None else args.frames
    panels = getattr(script, "PANELS", ())
    pictures = []
    start = time.perf_counter()
    for frame in range(frames):
        if frame in panels:
            pictures.append(render_frame(game, args.resolution))
        if script is not None:
            script.before_frame(game, frame)
        game.advance(STEP)
        if args.every and (frame + 1) % args.every == 0:
            stem = args.out[:-4] if args.out.endswith(".png") else args.out
            write_png(f"{stem}-{frame + 1:05d}.png", render_frame(game, args.resolution))
    game.ctx.finish()               # the steps are queued, not done, until the GPU has run them
    sim_seconds = time.perf_counter() - start
    write_png(args.out, side_by_side(pictures + [render_frame(game, args.resolution)]))
    ledger = game.grid.ledger()
    erosion = f"; erosion on, sediment out {-ledger['sediment_out']:.3f}" if game.erosion else ""
    print(f"headless: {frames} frames ({game.steps} steps, t = {game.grid.sim_time:.2f} s simulated) in "
          f"{sim_seconds:.2f} s; volume {game.grid.volume():.3f} (ledger {ledger['expected']:.3f}){erosion}; "
          f"wrote {args.out}")
    game.release()
    ctx.release()
    return 0
