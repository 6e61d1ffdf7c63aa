"""The demo's smoke scene renders offscreen (the interactive path needs a display), feeds its emitter
as rates, and picks the largest grid that keeps its frame within the budget."""
import numpy as np
import pytest

from demo_game import smoke_scene
from demo_game.smoke_scene import SmokeScene, pick, render_headless
from hydro.image import read_png


def test_headless_capture(tmp_path):
    out = tmp_path / "smoke.png"
    summary = render_headless(30, str(out), shape=(48, 64), size=(128, 96))
    img = read_png(out)
    assert img.shape == (96, 128, 3)
    assert summary["residual"] <= 1e-3 and summary["grid"] == (48, 64) and summary["fps"] > 0
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


def test_the_same_scene_on_a_finer_grid(ctx):
    """The box is the same world whatever the grid: after 1 s the smoke's centre of mass (world units)
    on a 48 x 64 and on a 72 x 96 grid agree within a tenth of a unit, and so do its totals per area."""
    out = []
    for shape in ((48, 64), (72, 96)):
        scene = SmokeScene(ctx, "smoke", shape)
        for _ in range(60):
            scene.step(1 / 60)
        d = scene.grid.density.astype(np.float64)
        yy, xx = (np.mgrid[0:shape[0], 0:shape[1]] + 0.5) * scene.cell_size
        out.append(((d * xx).sum() / d.sum(), (d * yy).sum() / d.sum(), scene.grid.totals()["density"]))
        scene.release()
    (x0, y0, m0), (x1, y1, m1) = out
    assert abs(x0 - x1) < 0.1 and abs(y0 - y1) < 0.1 and m1 == pytest.approx(m0, rel=0.05)


def test_pick_takes_the_largest_grid_whose_second_fits_the_budget(ctx, monkeypatch):
    """pick tries the grids smallest first and keeps the last whose steps for a second of game time
    and 30 draws fit the budget, stepping every 1/60 s where that fits and every 1/30 s where only
    that does; the smallest, stepping every 1/30 s, where none does. The machine's costs here are
    a stand-in: a step's grows with the cells, a draw takes 4 ms."""
    tried = []

    def costs(ctx, shape, size=(640, 480)):
        tried.append(shape)
        return shape[0] * shape[1] / 1000.0, 4.0
    monkeypatch.setattr(smoke_scene, "costs", costs)
    # 72 x 96: 6.9 ms a step, 415 + 120 ms at 60 Hz; 96 x 128 fits at 30 Hz only, 120 x 160 not at all
    assert pick(ctx, budget_ms=550.0) == ((96, 128), 1 / 30) and tried[-1] == (120, 160)
    assert pick(ctx, budget_ms=440.0) == ((72, 96), 1 / 30)
    assert pick(ctx, budget_ms=10.0) == (smoke_scene.SHAPES[0], 1 / 30)
    assert pick(ctx, budget_ms=1e9) == (smoke_scene.SHAPES[-1], 1 / 60)
