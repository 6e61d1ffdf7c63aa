"""The demo's smoke scene renders offscreen (the interactive path needs a display)."""
import numpy as np
import pytest

from demo_game.smoke_scene import SmokeScene, render_headless
from hydro.image import read_png


def test_headless_capture(tmp_path):
    out = tmp_path / "smoke.png"
    summary = render_headless(20, str(out), shape=(48, 64), size=(128, 96))
    img = read_png(out)
    assert img.shape == (96, 128, 3)
    assert summary["residual"] <= 1e-4
    assert img.max() > 150 and img.min() < 40              # flame / smoke over a dark background


@pytest.mark.parametrize("preset, field", [("smoke", "density"), ("fire", "fuel")])
def test_emitter_adds_in_proportion_to_dt(ctx, preset, field):
    """The emitter is a rate: one source(1/30) adds what two source(1/60) do (mass and lift), so the
    scene does not change with the step the game takes."""
    added = []
    for calls, dt in ((1, 1.0 / 30.0), (2, 1.0 / 60.0)):
        scene = SmokeScene(ctx, preset, shape=(24, 32))
        for _ in range(calls):
            scene.source(dt)
        added.append((float(getattr(scene.grid, field).sum()), float(scene.grid.face_velocity[1].sum())))
        scene.release()
    np.testing.assert_allclose(added[0], added[1], rtol=1e-5)
    assert added[0][0] > 0 and added[0][1] > 0
