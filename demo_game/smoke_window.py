"""The smoke scene's pyglet window: left drag pushes smoke along the drag, right drag draws obstacles
(shift erases), 1 / 2 switch to the smoke / fire preset, C clears, space pauses, Esc quits.
`tick()` runs one frame by hand, for tests and captures."""
from __future__ import annotations

import time

import numpy as np
import pyglet
from pyglet.window import key, mouse

from .glwindow import GL43Window
from .smoke_scene import DT, GRID, SmokeScene, _default_obstacles


class SmokeWindow(GL43Window):
    def __init__(self, preset="fire", width=1024, height=768, **kwargs):
        super().__init__(width, height, "hydro smoke", resizable=True, **kwargs)    # GLUnavailable below GL 4.3
        self.ctx.error                                   # moderngl may leave a flag from detection
        self.scene = SmokeScene(self.ctx, preset)
        self.scene.set_obstacles(_default_obstacles(GRID))
        self.paused, self.sim_ms, self.residual = False, 0.0, 0.0
        self.label = pyglet.text.Label("", x=8, y=8, color=(255, 255, 255, 255))

    def to_grid(self, x, y):
        """Grid coordinates (integer = cell centre) under window point (x, y)."""
        ny, nx = GRID
        return x / self.width * nx - 0.5, y / self.height * ny - 0.5

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        gx, gy = self.to_grid(x, y)
        ny, nx = GRID
        if buttons & mouse.LEFT:                         # push: velocity along the drag, some smoke
            scale = 60.0 * nx / self.width * 0.2
            self.scene.grid.splat(gx, gy, 0.03 * nx, velocity=(dx * scale, dy * scale), density=0.4,
                                  temperature=0.3 if self.scene.preset == "fire" else 0.0)
        if buttons & mouse.RIGHT:                        # draw (shift: erase) a round obstacle
            yy, xx = np.mgrid[0:ny, 0:nx]
            disk = (xx - gx) ** 2 + (yy - gy) ** 2 < (0.025 * nx) ** 2
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
            self.scene.set_obstacles(np.zeros(GRID, bool))
            self.scene.reset(self.scene.preset)
        elif symbol == key.SPACE:
            self.paused = not self.paused
        elif symbol == key.ESCAPE:
            self.close()

    def on_resize(self, width, height):
        super().on_resize(width, height)
        self.ctx.screen.viewport = (0, 0, *self.get_framebuffer_size())

    def on_draw(self):
        self.ctx.screen.use()
        self.ctx.viewport = (0, 0, *self.get_framebuffer_size())
        self.ctx.clear(0.0, 0.0, 0.0)
        self.scene.draw()
        self.label.text = (f"{self.scene.preset}  sim {self.sim_ms:.1f} ms/step  residual "
                           f"{self.residual:.1e}  [1] smoke [2] fire [C] clear [space] pause; "
                           f"left drag push, right drag obstacles")
        self.label.draw()

    def update(self, dt=DT):
        """One fixed simulated step of DT (the physics is frame-rate independent)."""
        if not self.paused:
            # the last step's residual, read a frame after it was queued: its check is done by now
            # (read in on_draw it would make every frame wait for the GPU)
            self.residual = self.scene.grid.pressure_residual
            start = time.perf_counter()
            self.scene.step(DT)
            self.sim_ms = (time.perf_counter() - start) * 1e3

    def tick(self, dt=DT):
        """Run one frame by hand (events, update, draw, flip)."""
        self.switch_to()
        self.dispatch_events()
        self.update(dt)
        self.dispatch_event("on_draw")
        self.flip()
