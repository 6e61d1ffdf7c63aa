"""The scripts in examples/ run as their docstrings say: the quick start headless, the pyglet game in a
real window under Xvfb (its scripted player digs and pours), each keeping its volume on the ledger and
writing its picture; and the README's first example runs as pasted."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hydro.image import read_png

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


@pytest.mark.parametrize("lattice", [[], ["--hex"]], ids=["square", "hex"])
def test_pyglet_game_runs_in_a_window(xvfb_display, tmp_path, lattice):
    out = tmp_path / "game.png"
    env = dict(os.environ, DISPLAY=xvfb_display)
    result = subprocess.run([sys.executable, "examples/pyglet_game.py", "--frames", "100", "--screenshot", str(out),
                             *lattice], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    volume, expected = _volume_and_expected(result.stdout)
    assert volume == pytest.approx(expected, rel=1e-5) and volume > 100.0
    pixels = read_png(out)[..., :3].astype(int)      # pyglet saves RGBA
    assert pixels.shape == (512, 768, 3)
    water = (pixels[..., 2] > pixels[..., 0] + 25).mean()
    assert 0.02 < water < 0.6, water                 # the sea and the river, not the whole window
