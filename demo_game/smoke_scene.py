"""The smoke scene of the demo game: hydro.SmokeGrid drawn on a full-screen quad.

    python -m demo_game smoke            # interactive (pyglet window)
      left drag: push smoke along the drag     right drag: draw obstacles (shift: erase)
      1: smoke preset   2: fire preset   C: clear   space: pause   Esc: quit
    render_headless(frames, "smoke.png")  # offscreen capture through EGL, no window

Colour: smoke density as grey over a dark background, temperature as a blackbody-like ramp
(red -> orange -> yellow-white), obstacles in slate blue.
"""
from __future__ import annotations

import sys
import time

import moderngl
import numpy as np

import hydro
from hydro import _gl
from hydro.image import write_png
from hydro.smoke import SmokeGrid

GRID = (192, 256)                  # (ny, nx)
DT = 1.0 / 60.0

PRESETS = {
    "smoke": dict(buoyancy=(0.05, 1.5), vorticity=3.0, density_dissipation=0.05),
    "fire": dict(buoyancy=(0.05, 3.0), vorticity=4.0, fire=True, burn_rate=3.0, burn_heat=2.0, smoke_yield=0.6,
                 cooling=1.5, density_dissipation=0.1),
}

# A steady emitter at the bottom centre, as rates per second of simulated time (a splat is an
# impulse, so each step adds rate * dt): the same plume whatever dt the game steps with.
EMITTER = {
    "smoke": dict(lift=600.0, density=30.0, temperature=36.0),    # lift: world units/s^2 of upward push
    "fire": dict(lift=600.0, density=0.0, fuel=12.0),
}


class SmokeScene:
    """A SmokeGrid, its obstacle mask and the quad that draws them, on any moderngl context."""

    def __init__(self, ctx: moderngl.Context, preset: str = "fire", shape=GRID):
        self.ctx, self.shape = ctx, shape
        self.prog = ctx.program(vertex_shader=_gl.source("render/smoke_quad.vert"),
                                fragment_shader=_gl.source("render/smoke_quad.frag"))
        quad = np.array([-1, -1, 1, -1, -1, 1, 1, 1], np.float32)
        self.vbo = ctx.buffer(quad.tobytes())
        self.vao = ctx.vertex_array(self.prog, [(self.vbo, "2f", "in_pos")])
        self.mask = np.zeros(shape, bool)
        self.solid_tex = ctx.texture((shape[1], shape[0]), 1, dtype="f1")
        self.grid = None
        self.reset(preset)

    def reset(self, preset: str):
        if self.grid is not None:
            self.grid.release()
        self.preset = preset
        self.grid = SmokeGrid(self.ctx, self.shape, advection="maccormack", **PRESETS[preset])
        self.grid.set_boundary("top", "open")
        if self.mask.any():
            self.grid.obstacles = self.mask
        self.t = 0.0

    def set_obstacles(self, mask):
        self.mask = mask
        self.grid.obstacles = mask
        self.solid_tex.write((mask * 255).astype(np.uint8).tobytes())

    def source(self, dt):
        """The steady emitter at the bottom centre over dt seconds: smoke (or fuel, for fire) pushed
        upwards, EMITTER's rates times dt."""
        ny, nx = self.shape
        x = nx / 2 + 0.06 * nx * np.sin(1.3 * self.t)
        rates = dict(EMITTER[self.preset])
        lift = rates.pop("lift")
        self.grid.splat(x, 0.06 * ny, 0.05 * nx, velocity=(0.0, lift * dt), **{k: v * dt for k, v in rates.items()})

    def step(self, dt=DT):
        self.source(dt)
        self.grid.step(dt)
        self.t += dt

    def draw(self):
        tex = self.grid.density_texture
        tex.filter = (moderngl.LINEAR, moderngl.LINEAR)
        tex.use(0)
        self.solid_tex.use(1)
        self.prog["u_scalars"].value = 0
        self.prog["u_solid"].value = 1
        self.prog["u_ambient"].value = self.grid.params.ambient_temperature
        self.vao.render(moderngl.TRIANGLE_STRIP)
        tex.filter = (moderngl.NEAREST, moderngl.NEAREST)

    def release(self):
        self.grid.release()
        for obj in (self.vao, self.vbo, self.prog, self.solid_tex):
            obj.release()


def _default_obstacles(shape):
    ny, nx = shape
    mask = np.zeros(shape, bool)
    yy, xx = np.mgrid[0:ny, 0:nx]
    mask |= (xx - 0.5 * nx) ** 2 + (yy - 0.5 * ny) ** 2 < (0.07 * nx) ** 2
    mask[int(0.75 * ny):int(0.78 * ny), int(0.15 * nx):int(0.4 * nx)] = True
    return mask


def render_headless(frames: int = 120, out_path: str = "smoke.png", *, preset: str = "fire", size=(512, 384),
                    shape=GRID, obstacles: bool = True) -> dict:
    """Simulate `frames` frames at 60 Hz offscreen and write the last one to `out_path` (PNG).
    Returns a summary (frames, ms per step, pressure residual, image size)."""
    ctx = hydro.create_context()
    try:
        scene = SmokeScene(ctx, preset, shape)
        if obstacles:
            scene.set_obstacles(_default_obstacles(shape))
        t0 = time.perf_counter()
        for _ in range(frames):
            scene.step()
        ctx.finish()
        ms = (time.perf_counter() - t0) * 1e3 / max(frames, 1)
        fbo = ctx.simple_framebuffer(size)
        fbo.use()
        fbo.clear(0.0, 0.0, 0.0, 1.0)
        scene.draw()
        rgb = np.frombuffer(fbo.read(components=3), np.uint8).reshape(size[1], size[0], 3)[::-1]
        write_png(out_path, rgb)
        summary = dict(frames=frames, ms_per_step=ms, residual=scene.grid.pressure_residual, size=size,
                       out=str(out_path))
        fbo.release()
        scene.release()
        return summary
    finally:
        ctx.release()


def main(argv=None):
    """Interactive scene; `--headless --frames N --out shot.png` captures offscreen instead."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m demo_game smoke")
    ap.add_argument("--headless", action="store_true")
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--out", default="smoke.png")
    ap.add_argument("--preset", choices=tuple(PRESETS), default="fire")
    args = ap.parse_args(argv)
    if args.headless:
        print(render_headless(args.frames, args.out, preset=args.preset))
        return 0

    try:
        from .smoke_window import SmokeWindow      # importing pyglet.window opens the display
    except Exception as exc:                       # noqa: BLE001 - pyglet's display errors share no base
        if type(exc).__name__ != "NoSuchDisplayException":
            raise
        print(f"python -m demo_game smoke: no display to open a window on ({exc}); rendering offscreen to "
              f"{args.out} instead", file=sys.stderr)
        print(render_headless(args.frames, args.out, preset=args.preset))
        return 0
    import pyglet
    window = SmokeWindow(args.preset)
    pyglet.clock.schedule_interval(window.update, DT)
    pyglet.app.run()
    window.scene.release()
    return 0
