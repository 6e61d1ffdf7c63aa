"""The smoke scene's pyglet window: left drag pushes smoke along the drag, right drag draws obstacles
(shift erases), 1 / 2 switch to the smoke / fire preset, C clears, space pauses, Esc quits.
The HUD has a band of its own above the gas. `tick()` runs one frame by hand, for tests and captures."""
from __future__ import annotations

import time

import numpy as np
import pyglet
from pyglet.window import key, mouse

from .glwindow import GLWindow
from .smoke_scene import STEP, WORLD, SmokeScene, _default_obstacles, pick

HUD = 26                                            # pixels of the band at the top that holds the HUD


class SmokeWindow(GLWindow):
    def __init__(self, preset="fire", width=1024, height=768, shape=None, step=STEP, **kwargs):
        super().__init__(width, height, "hydro smoke", resizable=True, **kwargs)    # GLUnavailable below GL 4.3
        self.ctx.error                                   # moderngl may leave a flag from detection
        shape, step = pick(self.ctx, (width, height - HUD)) if shape is None else (tuple(shape), step)
        self.scene = SmokeScene(self.ctx, preset, shape, step)
        self.scene.set_obstacles(_default_obstacles(shape))
        self.paused, self.sim_ms, self.residual, self.fps = False, 0.0, 0.0, 0.0
        self._last_frame = None
        self.label = pyglet.text.Label("", x=8, y=height - HUD + 8, color=(230, 232, 240, 255))

    def smoke_rect(self):
        """(x, y, width, height) in pixels of the gas: the largest rectangle of the box's aspect below
        the HUD's band, centred."""
        w, h = self.width, max(self.height - HUD, 1)
        aspect = WORLD[1] / WORLD[0]
        rw, rh = (w, int(w / aspect)) if w / h < aspect else (int(h * aspect), h)
        return (w - rw) // 2, (h - rh) // 2, max(rw, 1), max(rh, 1)

    def to_grid(self, x, y):
        """Grid coordinates (integer = cell centre) under window point (x, y)."""
        ny, nx = self.scene.shape
        rx, ry, rw, rh = self.smoke_rect()
        return (x - rx) / rw * nx - 0.5, (y - ry) / rh * ny - 0.5

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        gx, gy = self.to_grid(x, y)
        ny, nx = self.scene.shape
        if buttons & mouse.LEFT:                         # push: velocity along the drag, some smoke
            scale = 15.0 * WORLD[1] / self.smoke_rect()[2]        # world units/s per pixel dragged
            self.scene.grid.splat(gx, gy, self.scene.to_cells(0.25), velocity=(dx * scale, dy * scale), density=0.4,
                                  temperature=0.3 if self.scene.preset == "fire" else 0.0)
        if buttons & mouse.RIGHT:                        # draw (shift: erase) a round obstacle
            yy, xx = np.mgrid[0:ny, 0:nx]
            disk = (xx - gx) ** 2 + (yy - gy) ** 2 < self.scene.to_cells(0.2) ** 2
            mask = self.scene.mask & ~disk if modifiers & key.MOD_SHIFT else self.scene.mask | disk
            if not mask.all():
                self.scene.set_obstacles(mask)

    def on_mouse_press(self, x, y, button, modifiers):
        self.on_mouse_drag(x, y, 0, 0, button, modifiers)

    def on_key_press(self, symbol, modifiers):
        if symbol == key._1:
            self.scene.reset("smoke")
        elif symbol == key._2:
            self.scene.reset("fire")
        elif symbol == key.C:
            self.scene.set_obstacles(np.zeros(self.scene.shape, bool))
            self.scene.reset(self.scene.preset)
        elif symbol == key.SPACE:
            self.paused = not self.paused
        elif symbol == key.ESCAPE:
            self.close()

    def on_resize(self, width, height):
        super().on_resize(width, height)
        self.ctx.screen.viewport = (0, 0, *self.get_framebuffer_size())
        self.label.y = height - HUD + 8

    def on_draw(self):
        self.ctx.screen.use()
        self.ctx.viewport = (0, 0, *self.get_framebuffer_size())
        self.ctx.clear(0.0, 0.0, 0.0)
        scale = self.get_framebuffer_size()[0] / max(self.width, 1)          # pixels per window unit
        self.scene.draw(self.ctx.screen, tuple(int(v * scale) for v in self.smoke_rect()))
        ny, nx = self.scene.shape
        self.label.text = (f"{self.scene.preset} {nx}x{ny}  {self.fps:.0f} fps  sim {self.sim_ms:.1f} ms  residual "
                           f"{self.residual:.0e}   1 smoke  2 fire  C clear  space pause  drag: L push, R obstacles")
        self.label.draw()

    def update(self, dt=STEP):
        """dt seconds of game time: the grid runs the fixed steps that time allows (SmokeScene.step)."""
        now = time.perf_counter()
        if self._last_frame is not None:
            self.fps = 0.9 * self.fps + 0.1 / max(now - self._last_frame, 1e-6)
        self._last_frame = now
        if not self.paused:
            # the last step's residual, read a frame after it was queued: its check is done by now
            # (read in on_draw it would make every frame wait for the GPU)
            self.residual = self.scene.grid.pressure_residual
            self.scene.step(dt)
            self.sim_ms = (time.perf_counter() - now) * 1e3

    def tick(self, dt=STEP):
        """Run one frame by hand (events, update, draw, flip)."""
        self.switch_to()
        self.dispatch_events()
        self.update(dt)
        self.dispatch_event("on_draw")
        self.flip()
