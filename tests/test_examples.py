"""The scripts in examples/ run as their docstrings say: the quick start headless, the pyglet game in a
real window under Xvfb (its scripted player digs and pours), each keeping its volume on the ledger and
writing its picture; the README's first example runs as pasted; and the game calls' examples (a tide,
a wave generator, a boat, a water wheel, a floodgate) run headless and show what they claim."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hydro.image import read_png
from test_water_fragment import POSES

ROOT = Path(__file__).resolve().parents[1]


def _volume_and_expected(stdout):
    line = [line for line in stdout.splitlines() if line.startswith("volume")][-1].split()
    return float(line[1]), float(line[3])


def test_quickstart_writes_its_picture(tmp_path):
    out = tmp_path / "water.png"
    result = subprocess.run([sys.executable, "examples/quickstart.py", "--size", "48", "--seconds", "2",
                             "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    volume, expected = (float(v) for v in re.search(r"volume ([\d.]+), ledger says ([\d.]+)", result.stdout).groups())
    assert volume == pytest.approx(expected, rel=1e-3) and volume > 10.0      # printed to 0.1
    pixels = read_png(out).astype(int)
    assert pixels.shape == (192, 192, 3) and pixels.std() > 10                 # 4 pixels a cell, not blank


def test_readme_first_example_pours_water_into_the_pit():
    readme = (ROOT / "README.md").read_text()
    code = readme.split("<!-- quick-example -->")[1].split("```python")[1].split("```")[0]
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    volume, depth = re.fullmatch(r"([\d.]+) m\^3, ([\d.]+) m deep in the pit\n", result.stdout).groups()
    assert float(volume) == 400.0 and float(depth) > 0.5


def test_readme_hydrology_example_books_its_rain_springs_and_sediment():
    readme = (ROOT / "README.md").read_text()
    code = readme.split("<!-- hydrology-example -->")[1].split("```python")[1].split("```")[0]
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    water, ledger, rain, spring, evaporated, moved, out = (float(v) for v in re.fullmatch(
        r"water ([\d.]+) = ledger ([\d.]+); rain ([\d.]+), spring ([\d.]+), evaporated ([\d.]+) m\^3\n"
        r"material moved ([-+\d.]+) = sediment out ([-+\d.]+) m\^3\n", result.stdout).groups())
    assert water == ledger and spring == 10.0 and rain > 0 and evaporated > 0
    assert moved == out < 0                       # sediment carried out to the sea, to the printed digits


@pytest.mark.parametrize("pose", [None, "3.3"], ids=["", "gl33"])
@pytest.mark.parametrize("lattice", [[], ["--hex"]], ids=["square", "hex"])
def test_pyglet_game_runs_in_a_window(xvfb_display, tmp_path, lattice, pose):
    """The game on the window's context: GL 4.5 here, and a GL 3.3 core window without compute shaders
    (Mesa's overrides), where the water runs as fragment passes."""
    out = tmp_path / "game.png"
    env = dict(os.environ, DISPLAY=xvfb_display, **(POSES[pose] if pose else {}))
    result = subprocess.run([sys.executable, "examples/pyglet_game.py", "--frames", "100", "--screenshot", str(out),
                             *lattice], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    if pose:
        assert "OpenGL 3.3" in result.stdout and "fragment backend" in result.stdout, result.stdout
    volume, expected = _volume_and_expected(result.stdout)
    assert volume == pytest.approx(expected, rel=1e-5) and volume > 100.0
    pixels = read_png(out)[..., :3].astype(int)      # pyglet saves RGBA
    assert pixels.shape == (512, 768, 3)
    water = (pixels[..., 2] > pixels[..., 0] + 25).mean()
    assert 0.02 < water < 0.6, water                 # the sea and the river, not the whole window


def _run_example(name):
    result = subprocess.run([sys.executable, f"examples/{name}.py"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def _ledger_line(stdout):
    volume, expected = re.search(r"volume ([\d.]+) ledger ([\d.]+)", stdout).groups()
    return float(volume), float(expected)


def test_tide_floods_the_beach_and_leaves_it():
    out = _run_example("tide")
    shores = [int(s) for s in re.findall(r"shoreline at x = (\d+)", out)]
    assert len(shores) == 13 and max(shores) >= 22 and min(shores) <= 9     # 16 at mean sea level
    volume, expected = _ledger_line(out)
    assert volume == pytest.approx(expected, rel=1e-4)


def test_wave_generator_waves_run_at_the_shallow_water_speed():
    out = _run_example("wave_generator")
    speed, theory = (float(v) for v in re.search(r"wave speed ([\d.]+) m/s; sqrt\(g h\) = ([\d.]+)", out).groups())
    assert speed == pytest.approx(theory, rel=0.1)
    volume, expected = _ledger_line(out)
    assert volume == pytest.approx(expected, rel=1e-4)


def test_boat_drifts_down_the_river_with_the_sampled_flow():
    out = _run_example("boat")
    rows = [tuple(map(float, m)) for m in re.findall(r"boat at \(\s*([\d.]+), ([\d.]+)\), ([\d.]+) m/s on water ([\d.]+)", out)]
    xs = [r[0] for r in rows]
    assert len(rows) >= 5 and xs == sorted(xs) and xs[-1] > 30.0        # downstream all the way
    for _, _, speed, depth in rows:                                     # 2 m^3/s through 6 m of 0.35 m deep water
        assert 0.6 < speed < 1.3 and depth > 0.2


def test_water_wheel_gauge_reads_the_mill_stream():
    out = _run_example("water_wheel")
    rows = [tuple(map(float, m)) for m in re.findall(r"([\d.]+) m\^3/s through the wheel,\s+([\d.]+) m\^3", out)]
    assert len(rows) == 6 and rows[0] == (0.0, 0.0)                    # the stream has not got there yet
    assert rows[-1][0] == pytest.approx(1.5, rel=0.02)                   # the inflow, at steady state
    assert [v for _, v in rows] == sorted(v for _, v in rows)


def test_floodgate_stops_and_lets_the_water_through():
    out = _run_example("floodgate")
    rows = {int(t): float(q) for t, q in re.findall(r"t =\s+(\d+) s  reservoir at [\d.]+ m,\s+(-?[\d.]+) m\^3/s", out)}
    assert rows[5] == 0.0 and min(rows[t] for t in (10, 15, 20, 25)) > 3.0
    assert max(abs(rows[t]) for t in (40, 45, 50)) < 0.1
    volume, expected = _ledger_line(out)
    assert volume == pytest.approx(expected, rel=1e-4)
