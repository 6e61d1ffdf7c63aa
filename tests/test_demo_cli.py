"""python -m demo_game as a newcomer meets it: --help names the scenes and the controls, a bad value is
one argparse line naming the option, no display falls back to the offscreen picture, and a machine
without pyglet (hydro's core dependencies only) is told which extra to install, while --headless runs."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hydro.image import read_png

ROOT = Path(__file__).resolve().parents[1]


def _demo(*args, env=None, python=(sys.executable,)):
    return subprocess.run([*python, "-m", "demo_game", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_help_names_the_scenes_and_the_controls():
    result = _demo("--help")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for words in ("smoke", "--preset fire|smoke", "left drag", "right drag", "wheel", "1 2 3 4 5", "[ ]", "F5, F9",
                  "shift", "Esc", "--frames", "--seed", "water model", "dam-break", "erode", "--erosion",
                  "erosion on/off"):
        assert words in text, words


@pytest.mark.parametrize("args, option, expected", [
    (["--resolution", "0x0"], "--resolution", "WIDTHxHEIGHT"),
    (["--resolution", "wide"], "--resolution", "WIDTHxHEIGHT"),
    (["--size", "8"], "--size", "from 32 to 4096"),
    (["--seed", "-3"], "--seed", ">= 0"),
    (["--frames", "-1"], "--frames", ">= 0"),
    (["--zoom", "0"], "--zoom", "> 0"),
    (["--pitch", "nan"], "--pitch", "from 5 to 89"),
    (["--width", "abc"], "--width", "an integer"),
    (["--out", "shot.jpg"], "--out", ".png"),
    (["--model", "lava"], "--model", "invalid choice: 'lava'"),
    (["--out", "no/such/folder/shot.png"], "--out", "no such folder"),
])
def test_a_bad_value_is_one_line_naming_the_option(args, option, expected):
    result = _demo("--headless", *args)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("python -m demo_game: error: argument " + option) and expected in last, last


def test_erosion_flag_starts_with_erosion_on(tmp_path):
    from demo_game.__main__ import parse_args
    assert parse_args(["--erosion"]).erosion and not parse_args([]).erosion
    result = _demo("--headless", "--erosion", "--size", "32", "--frames", "30", "--resolution", "64x48", "--out",
                   str(tmp_path / "shot.png"))
    assert result.returncode == 0, result.stderr
    assert "erosion on, sediment out" in result.stdout, result.stdout


def test_no_display_falls_back_to_the_offscreen_picture(tmp_path):
    pytest.importorskip("pyglet", reason="the window's fallback: without pyglet the demo says so and stops")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    out = tmp_path / "shot.png"
    result = _demo("--size", "32", "--frames", "3", "--resolution", "64x48", "--out", str(out), env=env)
    assert result.returncode == 0, result.stderr
    assert "no display to open a window on" in result.stderr and "Traceback" not in result.stderr
    assert read_png(out).shape == (48, 64, 3)


@pytest.fixture(scope="module")
def core_only(tmp_path_factory):
    """A Python that sees hydro's core dependencies (numpy, moderngl, glcontext) and not pyglet: the
    venv's interpreter without its site-packages (-S), given links to those packages alone."""
    import glcontext
    import moderngl
    import numpy
    site = tmp_path_factory.mktemp("core-site")
    for module in (numpy, moderngl, glcontext):
        folder = Path(module.__file__).parent
        (site / folder.name).symlink_to(folder)
        libs = folder.parent / f"{folder.name}.libs"                 # wheels' bundled shared libraries
        if libs.is_dir():
            (site / libs.name).symlink_to(libs)
    for extension in Path(moderngl.__file__).parents[1].glob("_moderngl*"):
        (site / extension.name).symlink_to(extension)
    env = dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{ROOT}")
    probe = subprocess.run([sys.executable, "-S", "-c", "import pyglet"], env=env, capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'pyglet'" in probe.stderr
    return env


def test_without_pyglet_the_window_names_the_extra_and_headless_runs(core_only, tmp_path):
    result = _demo("--size", "32", env=core_only, python=(sys.executable, "-S"))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "pip install 'hydro-water[demo]'" in result.stderr and "pyglet" in result.stderr
    result = _demo("smoke", env=core_only, python=(sys.executable, "-S"))
    assert result.returncode == 1 and "hydro-water[demo]" in result.stderr, result.stderr
    out = tmp_path / "shot.png"
    result = _demo("--headless", "--size", "32", "--frames", "2", "--resolution", "64x48", "--out", str(out),
                   env=core_only, python=(sys.executable, "-S"))
    assert result.returncode == 0, result.stderr
    assert read_png(out).shape == (48, 64, 3)
