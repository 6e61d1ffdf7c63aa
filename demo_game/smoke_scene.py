"""The smoke scene of the demo game: a hydro.SmokeGrid drawn by hydro.smoke_render.SmokeRenderer.

    python -m demo_game smoke            # interactive (pyglet window)
      left drag: push smoke along the drag     right drag: draw obstacles (shift: erase)
      1: smoke preset   2: fire preset   C: clear   space: pause   Esc: quit
    python -m demo_game smoke --headless --frames 240 --out smoke.png    # offscreen capture through EGL

The box is WORLD (8 x 6 world units) whatever the grid, so a grid picked for the machine (pick: the
largest whose steps and 30 frames a second fit the CPU or GPU, llvmpipe included) shows the same
scene, only finer. The grid steps in fixed steps of game time (SmokeParams.fixed_step: 1/60 s, or 1/30 s
where that buys a finer grid), fed the frame's real dt, so the smoke moves at the same speed, and the
same way, at any frame rate.
"""
from __future__ import annotations

import sys
import time

import moderngl
import numpy as np

import hydro
from hydro.image import write_png
from hydro.smoke import SmokeGrid
from hydro.smoke_render import SmokeRenderer, SmokeStyle

WORLD = (6.0, 8.0)                 # (height, width), world units
STEP = 1.0 / 60.0                  # the grid's fixed step, seconds of game time ...
STEPS = (STEP, 1.0 / 30.0)         # ... or the longer one where that buys a finer grid (pick)
MAX_STEPS = 3                      # a frame runs at most this many steps: a slow one slows the smoke instead
FPS_TARGET = 30.0
BUDGET = 650.0                     # ms a second of game time may take: the steps and FPS_TARGET draws (the
                                   # rest: the HUD, events, presenting the frame)
# grids the scene may run, (ny, nx) at the box's aspect, smallest first
SHAPES = ((36, 48), (48, 64), (60, 80), (72, 96), (96, 128), (120, 160), (144, 192), (192, 256), (240, 320),
          (288, 384), (384, 512))
GRID = (96, 128)                   # the headless capture's grid unless one is given or picked

# Rates are per second of game time, in world units (a grid of any size gives the same scene).
# A game's pressure tolerance (1e-3: two V-cycles a step) in place of the library's default 1e-4.
PRESETS = {
    "smoke": dict(buoyancy=(0.0, 3.0), vorticity=2.5, density_dissipation=0.12, pressure_tolerance=1e-3),
    "fire": dict(buoyancy=(0.05, 2.5), vorticity=3.5, fire=True, burn_rate=2.5, burn_heat=2.0, smoke_yield=0.35,
                 cooling=1.2, density_dissipation=0.35, pressure_tolerance=1e-3),
}
STYLES = {"smoke": SmokeStyle(flame_brightness=0.0),                       # warm smoke does not glow
          "fire": SmokeStyle(smoke_color=(0.34, 0.32, 0.31))}                  # soot
# The steady emitter at the bottom centre: a splat each frame of these rates times the frame's dt.
EMITTER = {
    "smoke": dict(lift=6.0, density=5.0, temperature=3.0),    # lift: world units/s^2 of upward push
    "fire": dict(lift=5.0, density=0.0, fuel=4.0),
}
EMITTER_RADIUS = 0.4               # world units


class SmokeScene:
    """A SmokeGrid of `shape` (ny, nx) cells over WORLD, its obstacle mask, and its renderer."""

    def __init__(self, ctx: moderngl.Context, preset: str = "fire", shape=GRID, step=STEP):
        self.ctx, self.shape, self.fixed_step = ctx, tuple(shape), step
        self.cell_size = WORLD[0] / self.shape[0]
        self.mask = np.zeros(self.shape, bool)
        self.grid = self.renderer = None
        self.reset(preset)

    def reset(self, preset: str):
        if self.grid is not None:
            self.renderer.release()
            self.grid.release()
        self.preset = preset
        self.grid = SmokeGrid(self.ctx, self.shape, cell_size=self.cell_size, fixed_step=self.fixed_step,
                              **PRESETS[preset])
        self.grid.set_boundary("top", "open")
        if self.mask.any():
            self.grid.obstacles = self.mask
        self.renderer = SmokeRenderer(self.ctx, self.grid, style=STYLES[preset])
        self.t = 0.0

    def set_obstacles(self, mask):
        self.mask = mask
        self.grid.obstacles = mask

    def to_cells(self, world):
        """World units to cells."""
        return world / self.cell_size

    def source(self, dt):
        """The steady emitter at the bottom centre over dt seconds: smoke (or fuel, for fire) pushed
        upwards, EMITTER's rates times dt."""
        ny, nx = self.shape
        x = nx / 2 + self.to_cells(0.5) * np.sin(1.3 * self.t)
        rates = dict(EMITTER[self.preset])
        lift = rates.pop("lift")
        self.grid.splat(x, self.to_cells(0.45), self.to_cells(EMITTER_RADIUS), velocity=(0.0, lift * dt),
                        **{k: v * dt for k, v in rates.items()})

    def step(self, dt=STEP):
        """dt seconds of game time (at most MAX_STEPS of the grid's steps): the emitter's share, then
        the grid's fixed steps that time allows."""
        dt = min(dt, MAX_STEPS * self.fixed_step)
        self.source(dt)
        self.grid.step(dt)
        self.t += dt

    def draw(self, framebuffer=None, viewport=None):
        self.renderer.draw(framebuffer, viewport)

    def release(self):
        self.renderer.release()
        self.grid.release()


def costs(ctx, shape, size=(640, 480), frames=6):
    """Milliseconds a step of a grid of `shape` and a draw into a framebuffer of `size` take on this
    machine, each waited for, after two warm-up frames (which compile the shaders)."""
    scene = SmokeScene(ctx, "smoke", shape)
    fbo = ctx.simple_framebuffer(size)
    try:
        step = draw = 0.0
        for k in range(frames + 2):
            ctx.finish()
            t0 = time.perf_counter()
            scene.step(STEP)
            ctx.finish()
            t1 = time.perf_counter()
            fbo.clear(0.0, 0.0, 0.0, 1.0)
            scene.draw(fbo)
            ctx.finish()
            if k >= 2:
                step, draw = step + t1 - t0, draw + time.perf_counter() - t1
        return step * 1e3 / frames, draw * 1e3 / frames
    finally:
        fbo.release()
        scene.release()


def pick(ctx, size=(640, 480), budget_ms=BUDGET) -> tuple:
    """(shape, fixed step): the largest of SHAPES whose steps for a second of game time and FPS_TARGET
    draws (costs) fit in `budget_ms`, with the shorter of STEPS where it fits, trying them smallest
    first; the smallest with the longer step where none fits."""
    chosen = (SHAPES[0], STEPS[-1])
    for shape in SHAPES:
        step_ms, draw_ms = costs(ctx, shape, size)
        fits = [step for step in STEPS if step_ms / step + FPS_TARGET * draw_ms <= budget_ms]
        if not fits:
            break
        chosen = (shape, fits[0])
    return chosen


def _default_obstacles(shape):
    """A round boulder beside the plume's path and a ledge above it to the left, in world units."""
    ny, nx = shape
    cell = WORLD[0] / ny
    yy, xx = (np.mgrid[0:ny, 0:nx] + 0.5) * cell
    mask = (xx - 4.75) ** 2 + (yy - 2.3) ** 2 < 0.42 ** 2
    mask |= (yy > 4.3) & (yy < 4.55) & (xx > 1.6) & (xx < 3.7)
    return mask


def render_headless(frames: int = 240, out_path: str = "smoke.png", *, preset: str = "fire", size=(640, 480),
                    shape=GRID, step=STEP, obstacles: bool = True) -> dict:
    """Run `frames` frames of 1/60 s of game time offscreen (each the grid's steps that time allows and
    a draw, as in the window) and write the last one to `out_path` (PNG). shape None: pick's grid and
    step. Returns a summary: frames, the grid and its step, ms per frame and its fps, ms a frame spent
    stepping, the pressure residual, the image size."""
    ctx = hydro.create_context()
    try:
        shape, step = pick(ctx, size) if shape is None else (tuple(shape), step)
        scene = SmokeScene(ctx, preset, shape, step)
        if obstacles:
            scene.set_obstacles(_default_obstacles(shape))
        fbo = ctx.simple_framebuffer(size)
        step_s = 0.0
        ctx.finish()
        t0 = time.perf_counter()
        for _ in range(frames):
            t1 = time.perf_counter()
            scene.step(STEP)
            step_s += time.perf_counter() - t1
            scene.draw(fbo)
        ctx.finish()
        ms = (time.perf_counter() - t0) * 1e3 / max(frames, 1)
        fbo.clear(0.0, 0.0, 0.0, 1.0)
        scene.draw(fbo)
        rgb = np.frombuffer(fbo.read(components=3), np.uint8).reshape(size[1], size[0], 3)[::-1]
        write_png(out_path, rgb)
        summary = dict(frames=frames, grid=shape, step=step, ms_per_frame=ms, fps=1e3 / ms if ms > 0 else float("inf"),
                       ms_stepping=step_s * 1e3 / max(frames, 1), residual=scene.grid.pressure_residual, size=size,
                       out=str(out_path))
        fbo.release()
        scene.release()
        return summary
    finally:
        ctx.release()


def _shape(text):
    ny, nx = (int(v) for v in text.lower().split("x"))
    return ny, nx


def main(argv=None):
    """Interactive scene; `--headless --frames N --out shot.png` captures offscreen instead."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m demo_game smoke")
    ap.add_argument("--headless", action="store_true")
    ap.add_argument("--frames", type=int, default=240)
    ap.add_argument("--out", default="smoke.png")
    ap.add_argument("--preset", choices=tuple(PRESETS), default="fire")
    ap.add_argument("--grid", type=_shape, default=None, metavar="NYxNX",
                    help="the grid's cells, stepped every 1/60 s (default: the largest that keeps 30 fps on this "
                         "machine, and its step)")
    args = ap.parse_args(argv)
    if args.headless:
        print(render_headless(args.frames, args.out, preset=args.preset, shape=args.grid))
        return 0

    try:
        from .smoke_window import SmokeWindow      # importing pyglet.window opens the display
    except Exception as exc:                       # noqa: BLE001 - pyglet's display errors share no base
        if type(exc).__name__ != "NoSuchDisplayException":
            raise
        print(f"python -m demo_game smoke: no display to open a window on ({exc}); rendering offscreen to "
              f"{args.out} instead", file=sys.stderr)
        print(render_headless(args.frames, args.out, preset=args.preset, shape=args.grid))
        return 0
    import pyglet
    window = SmokeWindow(args.preset, shape=args.grid)
    pyglet.clock.schedule_interval(window.update, STEP)
    pyglet.app.run()
    window.scene.release()
    return 0
