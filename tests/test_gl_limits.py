"""Every image unit a shader binds is one that every OpenGL 4.3 driver has: the spec guarantees 8
(GL_MAX_IMAGE_UNITS), and some GPU drivers have no more. The cell-wise kernel's flow views (units 6 to
11) are the one exception: hydro binds them only on drivers that report the units for them
(hydro/_native.py BufferViews)."""
import re
from pathlib import Path

from hydro import _gl

SHADERS = Path(__file__).resolve().parents[1] / "shaders"
GUARANTEED_IMAGE_UNITS = 8
IMAGE = re.compile(r"layout\s*\(\s*binding\s*=\s*(\w+)\s*,\s*\w+\s*\)\s*uniform\b[^;]*?\b[iu]?image\w+\s+\w+\s*;")


def _image_bindings():
    for path in sorted(SHADERS.rglob("*")):
        if path.suffix in (".comp", ".glsl", ".vert", ".frag"):
            for name in IMAGE.findall(path.read_text(encoding="utf-8")):
                yield path.relative_to(SHADERS).as_posix(), name


def test_the_scan_finds_the_image_declarations():
    found = {(path, name) for path, name in _image_bindings()}
    assert ("water/cells_move.comp", "B_WATER") in found and ("render/smoke_shade.comp", "B_SMOKE_SHADE_OUT") in found
    assert len(found) > 20


def test_every_image_unit_is_below_the_guaranteed_eight():
    over = []
    for path, name in _image_bindings():
        if name.endswith("_VIEW"):                        # the cell-wise views, bound where the driver has them
            continue
        unit = int(name) if name.isdigit() else _gl.BINDINGS[name]
        if unit >= GUARANTEED_IMAGE_UNITS:
            over.append(f"{path}: {name} = {unit}")
    assert not over, over
