"""The demo on an OpenGL 4.1 context with no compute shaders (macOS's; Mesa's overrides give one, set
before the driver loads, so each check runs in a child process): the headless capture draws the water of
hydro's fragment backend, the log drifts on sample_async, the wheel turns by what its gauge reads (the
HUD shows it), the inertia model runs, and erosion is refused in one line that says why, from the command
line and the key."""
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
    return subprocess.run([sys.executable, "-m", "demo_game", "--headless", *args], cwd=ROOT,
                          env=dict(os.environ, **GL41_ENV), capture_output=True, text=True, timeout=300)


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


@pytest.mark.parametrize("args, what", [(["--erosion"], "erosion"), (["--script", "erode"], "erosion")])
def test_what_needs_compute_shaders_is_refused_in_one_line(tmp_path, args, what):
    result = _demo(*args, "--frames", "2", "--size", "32", "--out", str(tmp_path / "x.png"))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and what in lines[0] and "OpenGL 4.3" in lines[0] and "OpenGL 4.1" in lines[0], lines


def child():
    """In the GL 4.1 process: a Game's answers, as JSON on stdout."""
    import hydro
    from demo_game import world as worlds
    from demo_game.game import Game, NeedsCompute

    ctx = hydro.create_context()
    game = Game(ctx, worlds.build(48, 3))
    out = {"backend": game.grid.backend, "has_wheel": game.world.wheel is not None and game.wheel is not None}
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
    refused = []
    for name, call in (("erosion", lambda: setattr(game, "erosion", True)),):
        grid = game.grid
        try:
            call()
            refused.append([name, None, "accepted"])
        except NeedsCompute as exc:
            refused.append([name, type(exc).__name__, str(exc)])
        refused[-1].append(game.grid is grid and not game.erosion and game.model == "classic")
    out["refused"] = refused
    game.set_model("inertia")
    for _ in range(30):
        game.fixed_step()
    out["inertia"] = [game.model, game.grid.params.inertia, game.grid.backend,
                      abs(game.grid.volume() / game.grid.ledger()["expected"] - 1) < 1e-5]
    game.set_model("classic")
    water = game.grid.water
    game.set_hexagonal(True)
    out["hex"] = [game.hexagonal, game.grid.backend, type(game.grid).__name__,
                  float(np.abs(game.grid.water - water).max()), game.grid.gauges == (game.wheel,)]
    game.fixed_step()
    game.set_hexagonal(False)
    out["square"] = [game.hexagonal, type(game.grid).__name__]
    out["error"] = ctx.error
    game.release()
    print(json.dumps(out))


@pytest.fixture(scope="module")
def gl41_game():
    here = Path(__file__).resolve().parent
    code = f"import sys; sys.path.insert(0, {str(here)!r}); import test_demo_gl41 as t; t.child()"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, **GL41_ENV),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


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


def test_the_erosion_key_is_refused_and_changes_nothing(gl41_game):
    for name, error, message, unchanged in gl41_game["refused"]:
        assert error == "NeedsCompute" and "OpenGL 4.3" in message and unchanged, (name, error, message)


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
