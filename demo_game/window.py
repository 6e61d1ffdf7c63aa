"""The pyglet window: a GL 4.3 core context (else 4.1, 3.3) shared with moderngl, mouse and keys, a HUD.

Mouse: left drag uses the tool, right drag orbits, middle drag (or shift + right drag) pans, the wheel
zooms. Keys: 1-5 pick the tool (dig, raise, water, spring, drain), [ and ] size the brush, R rain,
E erosion, P or space pause, N one step, H square/hex, C clear springs, G open/close the floodgate,
L launch the log again, F5 save, F9 load, Esc quit.
The window only translates input into Game calls (game.py) and draws; `DemoWindow.tick` runs one
frame by hand, which is how the Xvfb test drives it. With `--frames N` it closes itself after N frames.
"""
from __future__ import annotations

import time

import pyglet

pyglet.options["debug_gl"] = False          # glGetError after every pyglet call costs frame time

import moderngl  # noqa: E402
from pyglet.window import key, mouse  # noqa: E402

from . import saves  # noqa: E402
from . import world as worlds  # noqa: E402
from .game import TOOLS, Game  # noqa: E402
from .glwindow import GLWindow  # noqa: E402
from .scripts import SCRIPTS  # noqa: E402

SKY = (0.64, 0.78, 0.92, 1.0)
SAVE_FILE = "hydro_world.npz"
HUD_INTERVAL = 0.25                          # seconds between HUD text updates (volume() reads back)
TOOL_KEYS = {getattr(key, f"_{TOOLS[name][0]}"): name for name in TOOLS}


class DemoWindow(GLWindow):
    VERSIONS = ((4, 3), (4, 1), (3, 3))     # below 4.3 (macOS: 4.1) the water runs hydro's fragment backend

    def __init__(self, args, **kwargs):
        self.game = None
        super().__init__(width=args.width, height=args.height, caption="hydro: dig a channel", resizable=True,
                         vsync=kwargs.pop("vsync", True), **kwargs)
        # gc_mode stays None: every GPU object is released explicitly (ctx.gc() trips on objects that
        # were released already, moderngl#695).
        self.game = Game(self.ctx, worlds.build(args.size, args.seed), hexagonal=args.hex, model=args.model,
                         erosion=args.erosion)
        if args.load:
            saves.load(self.game, args.load)
            if args.erosion:                         # --erosion wins over the save's flag
                self.game.erosion = True
        self.script = SCRIPTS[args.script](self.game) if args.script else None
        self.frame = 0
        self.frames = args.frames                    # close after this many frames (None: run until closed)
        self.save_file = SAVE_FILE
        self.fps = 0.0
        self._hud_age = HUD_INTERVAL
        self._last_tool_time = time.perf_counter()
        self.batch = pyglet.graphics.Batch()
        self.hud_back = pyglet.shapes.Rectangle(0, 0, 10, 10, color=(20, 28, 36, 170), batch=self.batch)
        self.labels = [pyglet.text.Label("", x=10, y=0, font_size=11, color=(240, 244, 248, 255),
                                         batch=self.batch) for _ in range(5)]
        self.keys = key.KeyStateHandler()
        self.push_handlers(self.keys)
        self._layout_hud()
        self.ctx.screen.viewport = (0, 0, *self.get_framebuffer_size())

    # ----------------------------------------------------------------------------------- frame

    def update(self, dt):
        """One frame of game time: the script's edits, then the fixed steps dt allows."""
        if self.script is not None:
            self.script.before_frame(self.game, self.frame)
        self.game.advance(dt)
        self.frame += 1
        self.fps = 0.9 * self.fps + 0.1 * (1.0 / dt) if dt > 0 and self.fps else (1.0 / dt if dt > 0 else 0.0)
        self._hud_age += dt
        if self._hud_age >= HUD_INTERVAL:
            self._hud_age = 0.0
            self._refresh_hud()
        if self.frames is not None and self.frame >= self.frames:
            grid = self.game.grid
            print(f"demo_game: closing after {self.frame} frames (t = {grid.sim_time:.2f} s simulated); volume "
                  f"{grid.volume():.3f} (ledger {grid.ledger()['expected']:.3f})")
            self.close()

    def on_draw(self):
        self.ctx.screen.use()
        self.ctx.clear(*SKY, depth=1.0)
        width, height = self.get_framebuffer_size()
        self.game.draw(None, width / max(height, 1))
        self.ctx.disable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        self.batch.draw()

    def tick(self, dt=1.0 / 60.0):
        """Run one frame by hand (events, update, draw, flip): for tests and captures."""
        self.switch_to()
        self.dispatch_events()
        self.update(dt)
        self.dispatch_event("on_draw")
        self.flip()

    def on_resize(self, width, height):
        super().on_resize(width, height)
        self.ctx.screen.viewport = (0, 0, *self.get_framebuffer_size())
        self._layout_hud()

    # ------------------------------------------------------------------------------------- HUD

    def _layout_hud(self):
        line = 18
        for i, label in enumerate(self.labels):
            label.y = self.height - 22 - i * line
        self.hud_back.x, self.hud_back.y = 0, self.height - 12 - len(self.labels) * line
        self.hud_back.width, self.hud_back.height = self.width, len(self.labels) * line + 12

    def _refresh_hud(self):
        lines = self.game.hud_lines(self.fps)
        for label, text in zip(self.labels, lines + [""] * len(self.labels)):
            label.text = text

    # ----------------------------------------------------------------------------------- input

    def _ndc(self, x, y):
        return 2.0 * x / self.width - 1.0, 2.0 * y / self.height - 1.0

    def _apply_tool(self, x, y):
        now = time.perf_counter()
        held, self._last_tool_time = min(now - self._last_tool_time, 0.1), now
        width, height = self.get_framebuffer_size()
        hit = self.game.pick(*self._ndc(x, y), width / max(height, 1))
        if hit is not None:
            self.game.use_tool(self.game.tool, hit[0], hit[1], seconds=max(held, 1.0 / 60.0))

    def on_mouse_press(self, x, y, button, modifiers):
        if button == mouse.LEFT:
            self._last_tool_time = time.perf_counter()
            self._apply_tool(x, y)

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers):
        cam = self.game.camera
        if buttons & mouse.LEFT:
            if self.game.tool != "spring":          # a spring per click, not per pixel dragged
                self._apply_tool(x, y)
        elif buttons & mouse.MIDDLE or (buttons & mouse.RIGHT and modifiers & key.MOD_SHIFT):
            cam.pan(-dx / self.height, -dy / self.height)
        elif buttons & mouse.RIGHT:
            cam.orbit(-0.3 * dx, -0.3 * dy)

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y):
        self.game.camera.zoom(0.9 ** scroll_y)

    def on_key_press(self, symbol, modifiers):
        game = self.game
        game.message = ""
        if symbol in TOOL_KEYS:
            game.tool = TOOL_KEYS[symbol]
            if game.tool == "drain":
                game.message = "drain: takes the water under the brush (booked in the ledger as 'drains')"
        elif symbol == key.BRACKETLEFT:
            game.brush_radius = max(1.0, game.brush_radius / 1.25)
        elif symbol == key.BRACKETRIGHT:
            game.brush_radius = min(40.0, game.brush_radius * 1.25)
        elif symbol == key.R:
            game.rain = not game.rain
        elif symbol == key.E:
            game.erosion = not game.erosion
            game.message = ("erosion on: the water carves its bed; what it lays down is drawn as silt"
                            if game.erosion else "erosion off")
        elif symbol in (key.P, key.SPACE):
            game.paused = not game.paused
        elif symbol == key.N:
            game.paused = True
            game.single_step()
        elif symbol == key.H:
            game.set_hexagonal(not game.hexagonal)
        elif symbol == key.C:
            game.clear_springs()
        elif symbol == key.G:
            game.set_gate(not game.gate_closed)
        elif symbol == key.L:
            game.launch_log()
        elif symbol == key.M:
            game.set_model("inertia" if game.model == "classic" else "classic")
        elif symbol == key.F5:
            try:
                saves.save(game, self.save_file)
                game.message = f"saved {self.save_file}"
            except OSError as exc:
                game.message = f"save failed: {exc}"
        elif symbol == key.F9:
            try:
                saves.load(game, self.save_file)
                game.message = f"loaded {self.save_file}"
            except (saves.SaveError, FileNotFoundError) as exc:
                game.message = f"load failed: {exc}"
        elif symbol == key.ESCAPE:
            self.close()
            return pyglet.event.EVENT_HANDLED
        self._refresh_hud()
        return None

    def close(self):
        """Close the window (Esc, the close button, or --frames reached) and free the game."""
        pyglet.clock.unschedule(self.update)
        if self.game is not None:
            self.game.release()
            self.game = None
        super().close()


def run(args) -> int:
    """Open the window and play until it is closed; raises GLUnavailable where it cannot open."""
    window = DemoWindow(args)
    version = window.ctx.version_code
    print(f"demo_game: {window.ctx.info['GL_RENDERER']} (OpenGL {version // 100}.{version % 100 // 10})")
    pyglet.clock.schedule(window.update)
    pyglet.app.run(0)
    return 0
