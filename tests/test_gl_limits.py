"""Every image unit a shader binds is one that every OpenGL 4.3 driver has: the spec guarantees 8
(GL_MAX_IMAGE_UNITS), and some GPU drivers have no more. Two exceptions, which hydro binds only on
drivers that report the units for them (hydro/_native.py image_units): the cell-wise kernel's views of
its flow and velocity buffers (units 8 to 13 and 17 to 19, BufferViews) and erosion's neighbour images
(14 to 16, water_erosion.py)."""
import re
from pathlib import Path

from hydro import _gl

SHADERS = Path(__file__).resolve().parents[1] / "shaders"
GUARANTEED_IMAGE_UNITS = 8
WHERE_AVAILABLE = {"B_CONCENTRATION_IMAGE", "B_BEDROCK_IMAGE", "B_ERODED_IMAGE"}     # erosion's, CPU rasterisers
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
        if name.endswith("_VIEW") or name in WHERE_AVAILABLE:      # bound where the driver has them
            continue
        unit = int(name) if name.isdigit() else _gl.BINDINGS[name]
        if unit >= GUARANTEED_IMAGE_UNITS:
            over.append(f"{path}: {name} = {unit}")
    assert not over, over


def test_erosion_reads_neighbour_images_only_where_the_context_has_their_units(ctx, monkeypatch):
    """Asked for image reads (water_plan.Tuning.erosion_images), the erosion passes take them only where
    GL_MAX_IMAGE_UNITS covers their units, and texture units elsewhere."""
    import numpy as np
    import hydro
    from hydro import _native, water_erosion
    g = hydro.WaterGrid(ctx, np.zeros((8, 9), np.float32), water=np.full((8, 9), 0.1, np.float32))
    g._retune(g._tuning.replace(erosion_images=True))
    g.erosion = hydro.Erosion()
    g.step(0.05, substeps=1)
    assert g._erosion.images is (_native.image_units(ctx) >= water_erosion.NEIGHBOUR_UNITS)
    monkeypatch.setattr(g._erosion, "_image_units", 8)
    g.step(0.05, substeps=1)
    assert g._erosion.images is False
    assert abs(g.volume() - g.ledger()["expected"]) <= 1e-6 * g.volume()
    g.release()
