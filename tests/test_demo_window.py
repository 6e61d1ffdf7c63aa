"""The real pyglet window under Xvfb: pick the dig tool, drag the mouse across the ridge, run the game
loop, and check that the terrain was cut, the lake's water reached the dry valley, and the volume
matches the grid's ledger. Also: the renderer and the props restore GL enable state (queried from GL
itself), the HUD shows the tool, and the floodgate, save/load, erosion, hex and model keys work from the
keyboard.

The window runs in a child process (this file run as a script) with DISPLAY pointing at an Xvfb this
test starts: pyglet's options are per process, and its GLX context must not mix with the EGL context
the other tests share.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SIZE = 64


def test_dig_through_the_ridge_in_a_real_window(window_report):
    start = time.perf_counter()
    report = window_report(__file__)
    print(f"window scenario: {time.perf_counter() - start:.1f} s, {report}")

    assert report["gl_version"] >= 430
    assert report["state_after_draw"] == {"depth_test": False, "blend": False, "cull_face": True}
    assert "tool: dig" in report["hud"]
    # The terrain was cut below the lake's surface along the stroke.
    assert report["crest_before"] > report["lake_surface"] + 0.2
    assert report["crest_after"] < report["lake_surface"] - 0.2
    # Water reached the valley, which was dry.
    assert report["valley_before"] == 0.0
    assert report["valley_after"] > 1.0
    # and the total volume is the ledger's to float precision.
    assert abs(report["volume"] - report["expected"]) <= 1e-5 * report["expected"]
    assert report["gate"] == [True, True, True, True]        # G closes the floodgate, G opens it
    assert report["saved"] and report["loaded"]
    assert report["hex"] is True
    assert report["model"] == ["inertia", True, True]
    assert report["erosion"] == [True, True, True, True, True, True]     # E on, kept through H and M, E off


def test_frames_closes_the_window_after_that_many(xvfb_display):
    env = dict(os.environ, DISPLAY=xvfb_display)
    result = subprocess.run([sys.executable, "-m", "demo_game", "--size", "32", "--width", "320", "--height", "240",
                             "--script", "dig-channel", "--frames", "40"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    line = [line for line in result.stdout.splitlines() if "closing after" in line][-1]
    assert "closing after 40 frames" in line
    volume, expected = float(line.split("volume ")[1].split()[0]), float(line.split("ledger ")[1].rstrip(")"))
    assert volume == pytest.approx(expected, rel=1e-5) and volume > 0


def test_a_machine_without_gl43_gets_one_line_not_a_traceback(xvfb_display):
    # Mesa posing as a GL 4.1 driver, as macOS's is: pyglet cannot make the 4.3 core context the smoke
    # scene needs (the water scene and examples/pyglet_game.py take 4.1: test_examples.py)
    env = dict(os.environ, DISPLAY=xvfb_display, MESA_GL_VERSION_OVERRIDE="4.1", MESA_GLSL_VERSION_OVERRIDE="410")
    result = subprocess.run([sys.executable, "-m", "demo_game", "smoke"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "OpenGL 4.3" in lines[0] and "macOS" in lines[0], lines


def test_the_water_window_opens_on_gl41(xvfb_display):
    """Where pyglet cannot make a 4.3 core context (Mesa posing as macOS's GL 4.1, no compute shaders) the
    water scene's window takes 4.1, and the water runs hydro's fragment backend."""
    from test_demo_gl41 import GL41_ENV
    env = dict(os.environ, DISPLAY=xvfb_display, **GL41_ENV)
    result = subprocess.run([sys.executable, "-m", "demo_game", "--size", "32", "--width", "320", "--height", "240",
                             "--script", "dig-channel", "--frames", "40"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "(OpenGL 4.1)" in result.stdout, result.stdout
    line = [line for line in result.stdout.splitlines() if "closing after" in line][-1]
    volume, expected = float(line.split("volume ")[1].split()[0]), float(line.split("ledger ")[1].rstrip(")"))
    assert "closing after 40 frames" in line and volume == pytest.approx(expected, rel=1e-5) and volume > 0


# ---------------------------------------------------------------------------------------- child

def _scenario():
    from pyglet import gl
    from pyglet.window import key, mouse

    import moderngl
    from demo_game.__main__ import parse_args
    from demo_game.scripts import DigChannel
    from demo_game.window import DemoWindow

    window = DemoWindow(parse_args(["--size", str(SIZE), "--width", "480", "--height", "320"]), vsync=False)
    game, ctx = window.game, window.ctx
    report = {"gl_version": ctx.version_code}

    # GL state: set some flags, draw, ask GL (not moderngl's cache) what is enabled.
    ctx.screen.use()
    ctx.enable_only(moderngl.CULL_FACE)
    width, height = window.get_framebuffer_size()
    game.draw(None, width / height)
    report["state_after_draw"] = {name: bool(gl.glIsEnabled(flag)) for name, flag in
                                  (("depth_test", gl.GL_DEPTH_TEST), ("blend", gl.GL_BLEND),
                                   ("cull_face", gl.GL_CULL_FACE))}
    ctx.enable_only(moderngl.NOTHING)

    lx, ly = (int(v) for v in game.world.landmarks["lake"])
    report["lake_surface"] = float(game.grid.surface[ly, lx])
    crossing = DigChannel(game)                       # where the scripted player would dig: the player's path
    west, east = sorted((crossing.start, crossing.stop), key=lambda p: p[0])
    row = int(west[1])
    report["crest_before"] = float(game.grid.terrain[row, int(west[0]):int(east[0]) + 1].max())
    x = int(crossing.stop[0])
    valley = (slice(max(0, row - SIZE // 8), row + SIZE // 8), slice(x, SIZE) if crossing.stop is east else
              slice(0, x + 1))
    report["valley_before"] = float(game.grid.water[valley].sum())

    for _ in range(3):
        window.tick()
    window.dispatch_event("on_key_press", key._1, 0)          # the dig tool
    window.tick()
    report["hud"] = "\n".join(label.text for label in window.labels)

    def screen(point):
        nx, ny = game.grid_to_ndc(point[0], point[1], width / height)
        return (nx + 1.0) / 2.0 * window.width, (ny + 1.0) / 2.0 * window.height

    events = 40
    x, y = screen(west)
    window.dispatch_event("on_mouse_press", x, y, mouse.LEFT, 0)
    for stroke in range(4):
        a, b = (west, east) if stroke % 2 == 0 else (east, west)
        for i in range(1, events + 1):
            nx_, ny_ = screen(a + (b - a) * i / events)
            window.dispatch_event("on_mouse_drag", nx_, ny_, nx_ - x, ny_ - y, mouse.LEFT, 0)
            x, y = nx_, ny_
            window.tick()
    window.dispatch_event("on_mouse_release", x, y, mouse.LEFT, 0)
    report["crest_after"] = float(game.grid.terrain[row, int(west[0]):int(east[0]) + 1].max())

    for _ in range(200):                      # four fixed steps per frame
        window.tick(1.0 / 15.0)
        if game.grid.water[valley].sum() > 5.0:
            break
    report["valley_after"] = float(game.grid.water[valley].sum())
    report["frames"] = window.frame
    report["volume"] = game.grid.volume()
    report["expected"] = game.grid.ledger()["expected"]

    x0, y0, heights, top = game.world.gate                   # the floodgate, from the keyboard
    window.dispatch_event("on_key_press", key.G, 0)
    window.tick()
    gate = game.grid.terrain[y0:y0 + heights.shape[0], x0:x0 + heights.shape[1]]
    report["gate"] = [game.gate_closed, bool((gate >= top).all()),
                      "floodgate closed" in "\n".join(label.text for label in window.labels)]
    window.dispatch_event("on_key_press", key.G, 0)
    window.tick()
    report["gate"].append(not game.gate_closed)

    with tempfile.TemporaryDirectory() as tmp:
        window.save_file = os.path.join(tmp, "world.npz")
        window.dispatch_event("on_key_press", key.F5, 0)     # queued by pyglet, handled in the next tick
        window.tick()
        report["saved"] = os.path.exists(window.save_file)
        window.dispatch_event("on_key_press", key.F9, 0)
        window.tick()
        report["loaded"] = game.message.startswith("loaded")
    window.dispatch_event("on_key_press", key.E, 0)             # erosion, from the keyboard
    window.tick()
    report["erosion"] = [game.erosion, game.grid.erosion is not None, game.renderer.tracking_deposits,
                         "EROSION" in "\n".join(label.text for label in window.labels)]
    window.dispatch_event("on_key_press", key.H, 0)
    window.tick()
    report["hex"] = game.hexagonal
    window.dispatch_event("on_key_press", key.M, 0)             # the water model, from the keyboard
    window.tick()
    report["model"] = [game.model, game.grid.params.inertia, "model: inertia" in "\n".join(l.text for l in window.labels)]
    report["erosion"].append(game.erosion and game.grid.erosion is not None)      # kept through both rebuilds
    window.dispatch_event("on_key_press", key.E, 0)
    window.tick()
    report["erosion"].append(not game.erosion and game.grid.erosion is None)
    window.close()
    print(json.dumps(report))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _scenario()
