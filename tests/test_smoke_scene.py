"""The demo's smoke scene renders offscreen (the interactive path needs a display)."""
from demo_game.smoke_scene import render_headless
from hydro.image import read_png


def test_headless_capture(tmp_path):
    out = tmp_path / "smoke.png"
    summary = render_headless(20, str(out), shape=(48, 64), size=(128, 96))
    img = read_png(out)
    assert img.shape == (96, 128, 3)
    assert summary["residual"] <= 1e-4
    assert img.max() > 150 and img.min() < 40              # flame / smoke over a dark background
