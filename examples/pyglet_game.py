"""A minimal pyglet game with hydro water: the grid and the renderer on the window's own context,
step() from the game loop, the mouse digging and pouring, pyglet's text drawn over the water.

    python examples/pyglet_game.py                 # left drag: dig, right drag: raise, P: pour water
    python examples/pyglet_game.py --hex           # the same on the hex lattice
    xvfb-run -a python examples/pyglet_game.py --frames 120 --screenshot game.png   # no display

The camera looks straight down (orthographic), so a mouse position maps to the world by a scale; a
tilted camera would intersect the mouse ray with the terrain instead.
"""
import argparse
import sys

import moderngl
import numpy as np
import pyglet
from pyglet import gl

import hydro

NY, NX = 64, 96


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hex", action="store_true", help="the triangular lattice")
    ap.add_argument("--frames", type=int, default=0, help="play a scripted drag for N frames, then exit")
    ap.add_argument("--screenshot", help="with --frames: save the last frame as this PNG")
    args = ap.parse_args()

    # hydro's water runs on a core 4.3 context (compute shaders), else on 4.1 (macOS) or 3.3 as fragment
    # passes: ask pyglet for the newest the machine gives, and say so where it gives none
    window = None
    for major, minor in ((4, 3), (4, 1), (3, 3)):
        config = gl.Config(major_version=major, minor_version=minor, forward_compatible=True, depth_size=24,
                           double_buffer=True)
        try:
            window = pyglet.window.Window(768, 512, config=config, resizable=True, caption="hydro in pyglet")
            break
        except (pyglet.window.NoSuchConfigException, gl.ContextException) as exc:
            error = exc
    if window is None:
        sys.exit(f"pyglet_game: this machine cannot open an OpenGL 3.3 core window ({error}); hydro's water "
                 f"needs GL 3.3 (4.3 for all of hydro): update the graphics driver, or use Mesa (llvmpipe gives "
                 f"4.5).")
    ctx = moderngl.create_context()                  # the window's context

    y, x = np.mgrid[0:NY, 0:NX]
    terrain = 3.0 - 0.05 * x + np.sin(y / 5) + 2.0 * np.exp(-((x - 48) ** 2 + (y - 32) ** 2) / 60)
    grid = (hydro.HexWaterGrid if args.hex else hydro.WaterGrid)(ctx, terrain, friction=0.02)
    print(f"OpenGL {ctx.version_code // 100}.{ctx.version_code % 100 // 10} on {ctx.info['GL_RENDERER']}: the water "
          f"runs its {grid.backend} backend")
    grid.set_boundary("left", "inflow", 4.0, span=(10, 20))     # a river
    grid.set_boundary("right", "level", 0.0)                    # the sea
    renderer = hydro.render.Renderer(ctx, grid)

    # the world rectangle the camera shows: the grid's cells (hex: its vertices' parallelogram)
    if args.hex:
        corners = np.array(hydro.hex.grid_to_world([0, NX - 1, 0, NX - 1], [0, 0, NY - 1, NY - 1]))
        left, right = corners[0].min() - 0.5, corners[0].max() + 0.5
        bottom, top = -0.5, corners[1].max() + 0.5
    else:
        left, right, bottom, top = 0.0, float(NX), 0.0, float(NY)
    camera = np.array([[2 / (right - left), 0, 0, -(right + left) / (right - left)],
                       [0, 2 / (top - bottom), 0, -(top + bottom) / (top - bottom)],
                       [0, 0, -0.01, 0], [0, 0, 0, 1]])

    def grid_point(sx, sy):
        """Grid coordinates of window point (sx, sy): the brushes' coordinates."""
        wx = left + sx / window.width * (right - left)
        wy = bottom + sy / window.height * (top - bottom)
        if args.hex:
            return tuple(float(v) for v in hydro.hex.world_to_grid(wx, wy))
        return wx - 0.5, wy - 0.5                   # cell [y, x] is centred at (x + 0.5, y + 0.5)

    label = pyglet.text.Label("", x=8, y=8, color=(255, 255, 255, 255))
    state = {"frame": 0, "drag": None, "pour": False, "mouse": (0, 0)}

    @window.event
    def on_mouse_press(sx, sy, button, modifiers):
        state["drag"], state["mouse"] = button, (sx, sy)

    @window.event
    def on_mouse_drag(sx, sy, dx, dy, buttons, modifiers):
        state["mouse"] = (sx, sy)

    @window.event
    def on_mouse_release(sx, sy, button, modifiers):
        state["drag"] = None

    @window.event
    def on_key_press(symbol, modifiers):
        state["pour"] = symbol == pyglet.window.key.P

    @window.event
    def on_key_release(symbol, modifiers):
        state["pour"] = False

    @window.event
    def on_draw():
        window.clear()                               # colour and depth of the window
        renderer.draw(camera)                        # in the window's viewport, game state kept
        label.text = (f"volume {grid.volume():9.1f} m³   expected {grid.ledger()['expected']:9.1f} m³   "
                      f"t = {grid.sim_time:5.1f} s")
        label.draw()

    def update(dt):
        state["frame"] += 1
        if args.frames:                              # the scripted player: a drag through the hill
            f = state["frame"]
            state["drag"] = pyglet.window.mouse.LEFT if 10 <= f < 70 else None
            state["mouse"] = (window.width * (0.25 + 0.5 * (f - 10) / 60), window.height * 0.5)
            state["pour"] = 70 <= f < 90
        try:
            gx, gy = grid_point(*state["mouse"])
            if state["drag"] == pyglet.window.mouse.LEFT:
                grid.dig(gx, gy, radius=2.5, depth=0.2)
            elif state["drag"] == pyglet.window.mouse.RIGHT:
                grid.dig(gx, gy, radius=2.5, depth=-0.2)    # a negative depth raises the ground
            if state["pour"]:
                grid.add_water(gx, gy, radius=3.0, volume=5.0)
        except ValueError:                           # the mouse is off the grid
            pass
        grid.step(1 / 60)                            # stable substeps picked for you
        if args.frames and state["frame"] >= args.frames:
            if args.screenshot:
                on_draw()
                pyglet.image.get_buffer_manager().get_color_buffer().save(args.screenshot)
            print(f"volume {grid.volume():.3f} expected {grid.ledger()['expected']:.3f}")
            pyglet.app.exit()

    pyglet.clock.schedule_interval(update, 1 / 60)
    pyglet.app.run()
    renderer.release()
    grid.release()


if __name__ == "__main__":
    main()
