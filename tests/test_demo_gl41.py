"""The demo on an OpenGL 4.1 context with no compute shaders (macOS's; Mesa's overrides give one, set
before the driver loads, so each check runs in a child process): the headless capture draws the water of
hydro's fragment backend, the log drifts on sample_async, the wheel turns by what its gauge reads (the
HUD shows it), the inertia model runs, and erosion runs with its silt drawn, from the command line, the
key and a save."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hydro.image import read_png

ROOT = Path(__file__).resolve().parents[1]
# what makes llvmpipe a GL 4.1 core context with no compute shaders, storage buffers or image stores
GL41_ENV = {"MESA_GL_VERSION_OVERRIDE": "4.1", "MESA_GLSL_VERSION_OVERRIDE": "410",
            "MESA_EXTENSION_OVERRIDE": "-GL_ARB_compute_shader -GL_ARB_shader_storage_buffer_object "
                                       "-GL_ARB_shader_image_load_store"}


def _demo(*args):
    result = subprocess.run([sys.executable, "-m", "demo_game", "--headless", *args], cwd=ROOT,
                            env=dict(os.environ, **GL41_ENV), capture_output=True, text=True, timeout=300)
    first = result.stdout.splitlines()[0] if result.stdout else ""
    if first and "(OpenGL 4.1)" not in first and "llvmpipe" not in first:
        pytest.skip(f"Mesa's overrides make the GL 4.1 context with no compute shaders; this driver is "
                    f"another: {first}")
    return result


def test_headless_dig_channel_draws_the_water_on_gl41(tmp_path):
    out = tmp_path / "shot.png"
    result = _demo("--script", "dig-channel", "--frames", "120", "--size", "64", "--resolution", "320x180",
                   "--out", str(out))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "(OpenGL 4.1)" in result.stdout, result.stdout
    line = result.stdout.strip().splitlines()[-1]
    volume, expected = float(line.split("volume ")[1].split()[0]), float(line.split("ledger ")[1].split(")")[0])
    assert volume == pytest.approx(expected, rel=1e-5) and volume > 0, line
    from test_render import classify
    from demo_game.headless import SKY
    terrain, water, _ = classify(read_png(out).astype(int), SKY)
    assert terrain.mean() > 0.15, f"terrain pixels: {terrain.mean():.3f}"
    assert water.mean() > 0.03, f"water pixels: {water.mean():.3f}"


@pytest.mark.parametrize("args", [["--erosion"], ["--script", "erode"]])
def test_headless_erosion_runs_on_gl41(tmp_path, args):
    out = tmp_path / "erosion.png"
    result = _demo(*args, "--frames", "30", "--size", "32", "--resolution", "160x90", "--out", str(out))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "(OpenGL 4.1)" in result.stdout, result.stdout
    line = result.stdout.strip().splitlines()[-1]
    assert "erosion on" in line and out.is_file(), line
    volume, expected = float(line.split("volume ")[1].split()[0]), float(line.split("ledger ")[1].split(")")[0])
    assert volume == pytest.approx(expected, rel=1e-5) and volume > 0, line


def child(save_path):
    """In the GL 4.1 process: a Game's answers, as JSON on stdout; a save with erosion at `save_path`."""
    import hydro
    from demo_game import world as worlds
    from demo_game import saves
    from demo_game.game import EROSION, Game

    ctx = hydro.create_context()
    game = Game(ctx, worlds.build(48, 3))
    out = {"vendor": ctx.info["GL_VENDOR"], "backend": game.grid.backend,
           "has_wheel": game.world.wheel is not None and game.wheel is not None}
    start = game.log.copy()
    for _ in range(240):
        game.fixed_step()
    out["log_moved"] = float(np.hypot(*(game.log - start)))
    out["log_speed"] = game.log_speed
    for _ in range(1260):               # the lake spills down the spillway, through the wheel
        game.fixed_step()
    out["wheel"] = [game.wheel.line == game.world.wheel, game.wheel.discharge, game.wheel.volume,
                    game.wheel.sim_time, game.grid.sim_time, game.wheel_angle]
    out["hud"] = game.hud_lines(60.0)
    game.erosion = True                 # the E key
    out["erosion_on"] = [game.erosion, game.grid.erosion == EROSION, game.renderer.tracking_deposits,
                         game.grid.backend]
    for _ in range(60):                 # the river brings sediment down into the lake
        game.fixed_step()
    sediment, reference = game.grid.sediment, game.renderer.deposit_reference
    out["eroded"] = [float(sediment.max()), float(np.abs(game.grid.terrain - reference).max())]
    x, y = game.world.landmarks["valley"]
    before = game.grid.terrain
    game.use_tool("raise", x, y)        # the player's ground is no deposit: the reference follows it
    raised = game.grid.terrain != before
    out["raised_no_silt"] = [bool(raised.any()),
                             bool(np.array_equal(game.renderer.deposit_reference[raised], game.grid.terrain[raised]))]
    sediment, reference = game.grid.sediment, game.renderer.deposit_reference
    game.set_model("inertia")           # a new grid, with the sediment and the silt's reference
    for _ in range(30):
        game.fixed_step()
    out["inertia"] = [game.model, game.grid.params.inertia, game.grid.backend,
                      abs(game.grid.volume() / game.grid.ledger()["expected"] - 1) < 1e-5]
    game.set_model("classic")
    water, sediment, reference = game.grid.water, game.grid.sediment, game.renderer.deposit_reference
    game.set_hexagonal(True)
    out["hex"] = [game.hexagonal, game.grid.backend, type(game.grid).__name__,
                  float(np.abs(game.grid.water - water).max()), game.grid.gauges == (game.wheel,)]
    out["hex_erosion"] = [game.grid.erosion == EROSION, bool(np.array_equal(game.grid.sediment, sediment)),
                          bool(np.array_equal(game.renderer.deposit_reference, reference))]
    game.fixed_step()
    saves.save(game, save_path)
    game.erosion = False
    out["erosion_off"] = [game.grid.erosion is None, game.renderer.tracking_deposits]
    saves.load(game, save_path)
    out["loaded"] = [game.erosion, game.grid.erosion == EROSION, game.hexagonal, game.renderer.tracking_deposits,
                     bool(game.grid.sediment.any())]
    game.set_hexagonal(False)
    out["square"] = [game.hexagonal, type(game.grid).__name__]
    out["error"] = ctx.error
    game.release()
    print(json.dumps(out))


@pytest.fixture(scope="module")
def gl41_game(tmp_path_factory):
    here = Path(__file__).resolve().parent
    path = tmp_path_factory.mktemp("gl41_game") / "world.npz"
    code = f"import sys; sys.path.insert(0, {str(here)!r}); import test_demo_gl41 as t; t.child({str(path)!r})"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, **GL41_ENV),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    if "Mesa" not in out["vendor"]:
        pytest.skip(f"Mesa's overrides make the GL 4.1 context with no compute shaders; this driver is "
                    f"{out['vendor']}, which gives a context with them")
    return out


def test_the_log_drifts_with_the_water_sampled_on_gl41(gl41_game):
    assert gl41_game["backend"] == "fragment" and gl41_game["error"] == "GL_NO_ERROR"
    assert gl41_game["log_moved"] > 1.0 and gl41_game["log_speed"] > 0.0, gl41_game


def test_the_wheel_turns_by_its_gauge_on_gl41(gl41_game):
    """The wheel's gauge counts the spillway on the fragment backend: water through it, one call late,
    the wheel turned by it and its discharge on the HUD."""
    assert gl41_game["has_wheel"], gl41_game
    same_line, discharge, volume, gauge_time, sim_time, angle = gl41_game["wheel"]
    assert same_line and 0.0 < gauge_time < sim_time, gl41_game["wheel"]
    assert volume > 0.0 and discharge > 0.0 and angle > 0.0, gl41_game["wheel"]
    assert any(f"wheel {discharge:6.2f} m^3/s" in line for line in gl41_game["hud"]), gl41_game["hud"]
    assert not any("no wheel" in line for line in gl41_game["hud"]), gl41_game["hud"]


def test_erosion_carves_and_draws_silt_on_gl41(gl41_game):
    """The E key on the fragment backend: the grid erodes and the renderer tracks its deposits; the river
    carries sediment and moves its bed, the raise tool's ground is no deposit, and the lattice switch
    and a save keep the sediment and the silt's reference."""
    assert gl41_game["erosion_on"] == [True, True, True, "fragment"]
    carried, moved = gl41_game["eroded"]
    assert carried > 1e-3 and moved > 0.0, gl41_game["eroded"]
    assert gl41_game["raised_no_silt"] == [True, True]
    assert gl41_game["hex_erosion"] == [True, True, True]
    assert gl41_game["erosion_off"] == [True, True], "silt stays silt with erosion off"
    assert gl41_game["loaded"] == [True, True, True, True, True]


def test_the_inertia_model_runs_on_gl41(gl41_game, tmp_path):
    assert gl41_game["inertia"] == ["inertia", True, "fragment", True]
    result = _demo("--script", "dam-break", "--frames", "30", "--size", "48", "--resolution", "320x180",
                   "--out", str(tmp_path / "dam.png"))
    assert result.returncode == 0 and (tmp_path / "dam.png").is_file(), result.stderr[-3000:]


def test_the_hex_switch_keeps_the_water_on_gl41(gl41_game):
    hexagonal, backend, kind, moved, gauged = gl41_game["hex"]
    assert hexagonal and backend == "fragment" and kind == "FragmentHexWaterGrid" and moved == 0.0
    assert gauged                       # the new grid's one gauge is the wheel's
    assert gl41_game["square"] == [False, "FragmentWaterGrid"]
