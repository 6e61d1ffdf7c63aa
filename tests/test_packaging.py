"""hydro works installed from a wheel (shaders shipped as package data), not only from the source tree,
and the wheel says what it is: hydro-water (the name "hydro" is taken on the package index), MIT, with
its license file, the demo's extra and no compiled dependency."""
import email
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
    wheel = next((tmp_path / "dist").glob("hydro_water-*.whl"))
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    assert "hydro/shaders/water/fused.comp" in names and "hydro/shaders/common/model.glsl" in names
    assert "hydro/shaders/common/bindings.glsl" in names
    meta = email.message_from_bytes(archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))))
    assert meta["Name"] == "hydro-water" and meta["License-Expression"] == "MIT"
    license_text = archive.read(next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))).decode()
    assert license_text.startswith("MIT License") and "Copyright (c) 2026 the hydro authors" in license_text
    requires = meta.get_all("Requires-Dist")
    assert any(r.startswith("pyglet") and 'extra == "demo"' in r for r in requires)
    assert not any(r.startswith("noise") for r in requires), requires
    assert set(meta.get_all("Provides-Extra")) == {"demo", "test"}
    assert "Topic :: Games/Entertainment :: Simulation" in meta.get_all("Classifier") and meta["Keywords"]
    target = tmp_path / "target"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "64.0"
    # the installed demo renders its scene offscreen, away from the source tree
    out = subprocess.run([sys.executable, "-m", "demo_game", "--headless", "--size", "32", "--frames", "2",
                          "--resolution", "64x48", "--out", "shot.png"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and (tmp_path / "shot.png").is_file(), out.stderr
    assert str(target) in subprocess.run([sys.executable, "-c", "import demo_game; print(demo_game.__file__)"],
                                         cwd=tmp_path, env=env, capture_output=True, text=True).stdout


def test_editable_install_finds_the_source_shaders():
    import hydro._gl as gl
    path = Path(str(gl._shader_root()))
    assert (path / "water" / "settle.comp").is_file()


def test_a_source_tree_on_the_path_reads_its_own_shaders(tmp_path):
    """A second tree (a worktree, a checkout of another commit) on PYTHONPATH takes the shaders beside
    its own hydro, not those of the tree an editable install points at: a kernel and its shaders come
    from the same commit."""
    import shutil
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "hydro", tree / "hydro", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "shaders", tree / "shaders", ignore=shutil.ignore_patterns("__pycache__"))
    script = "import hydro._gl as gl; print(hydro.__file__); print(gl._shader_root())"
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", "import hydro; " + script], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    module, root = out.stdout.split()
    assert Path(module).parent == tree / "hydro"
    assert Path(root) == tree / "shaders"
