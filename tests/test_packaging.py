"""hydro works installed from a wheel (shaders shipped as package data), not only from the source tree."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import numpy as np, hydro
assert 'site' in hydro.__file__ or 'target' in hydro.__file__, hydro.__file__
g = hydro.WaterGrid(hydro.create_context(), np.zeros((8, 8)), water=np.ones((8, 8)))
g.step(0.1)
print(round(g.volume(), 3))
"""


def test_wheel_ships_shaders_and_runs_outside_the_tree(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(ROOT)], check=True, capture_output=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("hydro-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "hydro/shaders/water/fused.comp" in names and "hydro/shaders/common/model.glsl" in names
    assert "hydro/shaders/common/bindings.glsl" in names
    target = tmp_path / "target"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "64.0"


def test_editable_install_finds_the_source_shaders():
    import hydro._gl as gl
    path = Path(str(gl._shader_root()))
    assert (path / "water" / "settle.comp").is_file()
