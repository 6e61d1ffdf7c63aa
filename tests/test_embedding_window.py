"""A game's own pyglet window, not the demo: its context comes from moderngl.create_context(), whose
function loader differs from a standalone context's. There the grid reads its stats without stalling
(the fenced ring), and Renderer.draw draws inside the viewport the game set with raw GL and puts back
the game's GL state, as it does on a standalone context.

The window runs in a child process (this file run as a script), as in test_demo_window.py.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_game_window_gets_the_fenced_stats_and_its_drawing_state_back(window_report):
    report = window_report(__file__)
    assert report["gl_version"] >= 430
    assert report["gl_functions"] and report["fenced_stats"]
    assert report["ledger_error"] <= 1e-6
    # drawn inside the game's viewport (the lower-left quarter), nothing outside it
    assert report["drawn_inside"] > 0.2
    assert report["drawn_outside"] == 0.0
    # and the game's state as it was
    assert report["viewport"] == [0, 0, 160, 120]
    assert report["enabled"] == {"blend": True, "cull_face": True, "depth_test": False, "scissor_test": False}
    assert report["depth_mask"] == 0 and report["color_mask"] == [1, 1, 1, 1]
    assert report["blend_func"] == ["ONE", "ONE"]
    assert report["active_texture"] == 3


# ---------------------------------------------------------------------------------------- child

def _scenario():
    import moderngl
    import numpy as np
    import pyglet
    from pyglet import gl

    import hydro
    from hydro import _native, render

    config = gl.Config(major_version=4, minor_version=3, forward_compatible=True, double_buffer=True,
                       depth_size=24)
    window = pyglet.window.Window(320, 240, config=config, visible=True)
    window.switch_to()
    ctx = moderngl.create_context()
    report = {"gl_version": ctx.version_code}
    report["gl_functions"] = _native.gl_functions(ctx, {"glFlush": (None, [])}) is not None

    ny, nx = 24, 32
    x = np.arange(nx)[None, :] * np.ones((ny, 1))
    terrain = 2.0 * (1.0 - x / (nx - 1))
    grid = hydro.WaterGrid(ctx, terrain, water=np.where(x > nx / 2, 1.5 - terrain, 0.0).clip(0.0))
    grid.add_water(4, 12, 3, 20.0)
    for _ in range(5):
        grid.step(1 / 30)
    report["fenced_stats"] = grid._stats.ring is not None
    report["ledger_error"] = abs(grid.volume() - grid.ledger()["expected"]) / grid.ledger()["expected"]

    renderer = render.Renderer(ctx, grid)
    # the game's state, set with raw GL behind moderngl's back
    gl.glBindFramebuffer(gl.GL_FRAMEBUFFER, 0)
    gl.glDisable(gl.GL_SCISSOR_TEST)
    gl.glViewport(0, 0, 320, 240)
    gl.glClearColor(0.0, 0.0, 0.0, 1.0)
    gl.glDepthMask(gl.GL_TRUE)
    gl.glClear(gl.GL_COLOR_BUFFER_BIT | gl.GL_DEPTH_BUFFER_BIT)
    gl.glViewport(0, 0, 160, 120)
    gl.glEnable(gl.GL_BLEND)
    gl.glBlendFunc(gl.GL_ONE, gl.GL_ONE)
    gl.glEnable(gl.GL_CULL_FACE)
    gl.glDisable(gl.GL_DEPTH_TEST)
    gl.glDepthMask(gl.GL_FALSE)
    gl.glActiveTexture(gl.GL_TEXTURE3)

    # an orthographic camera looking straight down at the whole grid
    w, h = nx * grid.params.cell_size, ny * grid.params.cell_size
    ortho = np.array([[2 / w, 0, 0, -1], [0, 2 / h, 0, -1], [0, 0, -0.1, 0], [0, 0, 0, 1]], float)
    renderer.draw(ortho)

    pixels = (gl.GLubyte * (320 * 240 * 4))()
    gl.glReadPixels(0, 0, 320, 240, gl.GL_RGBA, gl.GL_UNSIGNED_BYTE, pixels)
    image = np.frombuffer(pixels, np.uint8).reshape(240, 320, 4)[..., :3]
    drawn = image.max(axis=2) > 0
    report["drawn_inside"] = float(drawn[:120, :160].mean())
    outside = drawn.copy()
    outside[:120, :160] = False
    report["drawn_outside"] = float(outside.mean())

    def ints(name, n=1):
        out = (gl.GLint * 4)()
        gl.glGetIntegerv(name, out)
        return list(out[:n])
    report["viewport"] = ints(gl.GL_VIEWPORT, 4)
    report["enabled"] = {name: bool(gl.glIsEnabled(flag)) for name, flag in
                         (("blend", gl.GL_BLEND), ("cull_face", gl.GL_CULL_FACE), ("depth_test", gl.GL_DEPTH_TEST),
                          ("scissor_test", gl.GL_SCISSOR_TEST))}
    report["depth_mask"] = ints(gl.GL_DEPTH_WRITEMASK)[0]
    report["color_mask"] = ints(gl.GL_COLOR_WRITEMASK, 4)
    names = {gl.GL_ONE: "ONE", gl.GL_SRC_ALPHA: "SRC_ALPHA", gl.GL_ONE_MINUS_SRC_ALPHA: "ONE_MINUS_SRC_ALPHA"}
    report["blend_func"] = [names.get(ints(gl.GL_BLEND_SRC_RGB)[0]), names.get(ints(gl.GL_BLEND_DST_RGB)[0])]
    report["active_texture"] = ints(gl.GL_ACTIVE_TEXTURE)[0] - gl.GL_TEXTURE0

    renderer.release()
    grid.release()
    window.close()
    print(json.dumps(report))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _scenario()
