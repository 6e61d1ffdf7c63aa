"""The smoke scene in a real pyglet window under Xvfb: a left drag pushes the gas along the drag, a right
drag draws obstacles the gas cannot enter, the preset and clear keys work, and the HUD shows the solver.
The window runs in a child process (this file run as a script), as in test_demo_window.py."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_drag_pushes_smoke_and_draws_obstacles(window_report):
    report = window_report(__file__)
    assert report["gl_version"] >= 430
    assert report["push_after"] > report["push_before"] + 0.5        # world units/s along the drag
    assert report["solid_after"] > report["solid_before"]
    assert report["speed_in_solids"] == 0.0 and report["smoke_in_solids"] == 0.0
    assert report["preset"] == "fire" and report["solid_cleared"] == 0
    assert "smoke" in report["hud"] and "residual" in report["hud"]


def _scenario():
    import numpy as np
    from pyglet.window import key, mouse

    from demo_game.smoke_scene import GRID
    from demo_game.smoke_window import SmokeWindow

    window = SmokeWindow("smoke", width=512, height=384, vsync=False, shape=GRID)
    scene = window.scene
    report = {"gl_version": window.ctx.version_code}
    ny, nx = GRID
    for _ in range(3):
        window.tick()
    report["hud"] = window.label.text

    band = (slice(int(0.45 * ny), int(0.55 * ny)), slice(int(0.55 * nx), int(0.8 * nx)))
    report["push_before"] = float(scene.grid.velocity[band][..., 0].mean())
    y = 0.5 * window.height
    window.dispatch_event("on_mouse_press", 0.55 * window.width, y, mouse.LEFT, 0)
    for i in range(12):                                             # drag to the right
        x = (0.55 + 0.02 * i) * window.width
        window.dispatch_event("on_mouse_drag", x, y, 10, 0, mouse.LEFT, 0)
        window.tick()
    report["push_after"] = float(scene.grid.velocity[band][..., 0].mean())

    report["solid_before"] = int(scene.mask.sum())
    for i in range(8):                                              # draw a wall with the right button
        window.dispatch_event("on_mouse_drag", 0.25 * window.width, (0.3 + 0.03 * i) * window.height, 0, 4,
                              mouse.RIGHT, 0)
    for _ in range(5):
        window.tick()
    report["solid_after"] = int(scene.mask.sum())
    solid = scene.mask
    report["speed_in_solids"] = float(np.abs(scene.grid.velocity[solid]).max())
    report["smoke_in_solids"] = float(np.abs(scene.grid.density[solid]).max())

    window.dispatch_event("on_key_press", key._2, 0)
    window.tick()
    report["preset"] = scene.preset if window.scene is scene else window.scene.preset
    window.dispatch_event("on_key_press", key.C, 0)
    window.tick()
    report["solid_cleared"] = int(window.scene.mask.sum())
    window.scene.release()
    window.close()
    print(json.dumps(report))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _scenario()
