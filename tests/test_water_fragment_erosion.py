"""Erosion on the fragment backend (hydro/water_fragment.py's _FragmentErosion, shaders/fragment/erode*.frag,
slump.frag, book_sediment.frag): in the test context against the cell-wise compute grid on the same
inputs, both lattices (to the bit but where a column drains to a subnormal residue, which fragment
shaders flush and compute shaders keep); on a GL 4.1 context with no compute shaders (a child process,
test_water_fragment.gl41_child) material equals its ledger with every boundary kind, a dug channel
deepens, bad values are refused by name with the grid unchanged."""
import math

import numpy as np
import pytest

import hydro
from hydro.water_fragment import FragmentHexWaterGrid, FragmentWaterGrid
from test_water_fragment import _flushed, gl41_child, gl41_context, refusals
from water_cases import assert_same_bits, random_state

KINDS = {"square": FragmentWaterGrid, "hex": FragmentHexWaterGrid}
COMPUTE = {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}
EROSION = hydro.Erosion(capacity=0.4, dissolve=0.5, deposit=0.5, talus=30.0, slump=0.5)
RESIDUE = 1e-30             # water below this in a column: drained to a residue a subnormal step away


def _open_sides(g):
    g.set_boundary("left", "inflow", 0.6, span=(2, 7))
    g.set_boundary("right", "outflow", 0.5)
    g.set_boundary("bottom", "level", 1.5)
    g.set_boundary("top", "level", 0.4, span=(0, 4))


@pytest.mark.parametrize("kind", list(KINDS))
def test_erosion_matches_the_cell_wise_grid(ctx, kind):
    """Random beds, water, sediment and a bedrock under part of the grid, open sides of every kind, 36
    substeps in calls of odd and even counts: bed, sediment and water as the compute grid has them, to
    the bit (the cells of drained columns to 1e-20), material and the sediment ledger to float64
    rounding, the water's ledger as its."""
    rng = np.random.default_rng(7)
    terrain, water = random_state(rng, (9, 11))
    terrain = 3.0 * terrain
    sediment = 0.3 * np.asarray(water, np.float32) * rng.uniform(0.0, 1.0, water.shape)
    bedrock = np.where(rng.random(water.shape) < 0.3, np.asarray(terrain, np.float32) - 0.01, -1e3)
    grids = [KINDS[kind](ctx, terrain, water=water), COMPUTE[kind](ctx, terrain, water=water, kernel="cells")]
    for g in grids:
        _open_sides(g)
        g.erosion, g.sediment, g.bedrock = EROSION, sediment, bedrock
        textures = g.terrain_texture, g.sediment_texture
        for substeps in (3, 6, 5, 8, 7, 7):
            g.step(0.05 * substeps, substeps=substeps)
        assert (g.terrain_texture, g.sediment_texture) == textures       # the same textures, handed out once
    fragment, cells = grids
    drained = cells.water < RESIDUE
    for name in ("terrain", "sediment", "water"):
        a, b = _flushed(getattr(fragment, name)), _flushed(getattr(cells, name))
        assert_same_bits(np.where(drained, 0, a), np.where(drained, 0, b), err_msg=name)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-20, err_msg=name)
    assert np.abs(fragment.terrain - terrain).max() > 1e-3                # the beds moved
    assert fragment.material() == pytest.approx(cells.material(), rel=1e-13)
    la, lb = cells.ledger(), fragment.ledger()
    assert la.keys() == lb.keys()
    assert la["sediment_out"] < -1e-3
    assert lb["sediment_out"] == pytest.approx(la["sediment_out"], rel=1e-9)
    scale = max(abs(v) for v in la.values())
    for key in la:
        assert lb[key] == pytest.approx(la[key], rel=1e-7, abs=1e-7 * scale), key
    for g in grids:
        g.release()


def _conserved(ctx, cls):
    """Every boundary kind, rain and evaporation, a bedrock, 1200 substeps: material's change and what
    the sediment ledger says left, the material, and the lowest bed above the bedrock."""
    ny, nx = 7, 8
    rng = np.random.default_rng(3)
    terrain = np.add.outer(np.linspace(0.0, 0.5, ny), np.linspace(2.0, 0.0, nx)) + rng.uniform(0, 0.3, (ny, nx))
    g = cls(ctx, terrain, water=np.full((ny, nx), 0.05))
    g.set_boundary("left", "inflow", 0.02)
    g.set_boundary("right", "outflow", 0.03)
    g.set_boundary("top", "level", 0.8)
    g.set_boundary("bottom", "wall")
    g.rain = 2e-4
    g.evaporation = 5e-5
    bedrock = np.asarray(g.terrain) - 0.2
    g.bedrock = bedrock
    g.erosion = hydro.Erosion(capacity=0.2, dissolve=0.2, deposit=0.2, talus=20.0, slump=0.2)
    material = g.material()
    for _ in range(4):
        g.step(12.0, substeps=300)
    out = {"change": g.material() - material, "sediment_out": g.ledger()["sediment_out"], "material": material,
           "moved": float(np.abs(g.terrain - terrain).max()),
           "above_rock": float((g.terrain - bedrock).min()), "sediment_min": float(g.sediment.min())}
    g.release()
    return out


def _channel(ctx, cls):
    """A channel dug down a slope with a step, a stream let in at its head: how far the bed went down on
    the step and below it, and material's change against the ledger."""
    ny, nx = 10, 30
    x = np.arange(nx)
    profile = np.where(x < 10, 4.0 - 0.02 * x, np.where(x < 17, 3.8 - 0.25 * (x - 10), 2.05 - 0.02 * (x - 17)))
    g = cls(ctx, np.tile(profile, (ny, 1)), manning=0.03)
    for cx in range(0, nx, 2):
        g.dig(cx, 5.0, 2.0, 0.3)
    before = g.terrain
    g.set_boundary("left", "inflow", 0.8, span=(3, 8))
    g.set_boundary("right", "level", -0.5)
    g.erosion = hydro.Erosion()
    material = g.material()
    for _ in range(20):
        g.step(2.0)
    lowered = (before - g.terrain)[4:7]
    out = {"step": float(lowered[:, 11:17].mean()), "above": float(lowered[:, 2:8].mean()),
           "change": g.material() - material, "sediment_out": g.ledger()["sediment_out"], "material": material}
    g.release()
    return out


def _bad_calls(g):
    return [("erosion", lambda: setattr(g, "erosion", {"capacity": 0.1})),
            ("sediment", lambda: setattr(g, "sediment", -np.ones(g.shape))),
            ("sediment", lambda: setattr(g, "sediment", np.ones(g.shape[::-1]))),
            ("bedrock", lambda: setattr(g, "bedrock", np.full(g.shape, np.nan))),
            ("bedrock", lambda: setattr(g, "bedrock", "granite"))]


def _refused(ctx):
    g = FragmentWaterGrid(ctx, np.linspace(1.0, 0.0, 42).reshape(6, 7), water=np.full((6, 7), 0.1))
    g.erosion = EROSION
    g.step(0.1, substeps=3)
    snapshot = lambda: [g.terrain.tolist(), g.water.tolist(), g.sediment.tolist(), g.bedrock, g.material()]
    before = snapshot()
    refused = refusals(_bad_calls(g))
    out = {"refused": refused, "unchanged": snapshot() == before, "erosion": repr(g.erosion)}
    g.release()
    return out


def child():
    """In the GL 4.1 process: each check's results, as JSON on stdout."""
    import json
    ctx, out = gl41_context()
    out["conserved"] = {kind: _conserved(ctx, cls) for kind, cls in KINDS.items()}
    out["channel"] = {kind: _channel(ctx, cls) for kind, cls in KINDS.items()}
    out["bad"] = _refused(ctx)
    out["error"] = ctx.error
    print(json.dumps(out))


@pytest.fixture(scope="module")
def gl41():
    return gl41_child("test_water_fragment_erosion")


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_material_equals_its_ledger_with_every_boundary_kind(gl41, kind):
    got = gl41["conserved"][kind]
    assert gl41["version"] == 410 and gl41["compute"].startswith("refused") and gl41["error"] == "GL_NO_ERROR"
    assert got["sediment_out"] < 0 and got["moved"] > 1e-3
    assert got["change"] == pytest.approx(got["sediment_out"], rel=0, abs=2e-8 * got["material"])
    assert got["above_rock"] >= -1e-6 and got["sediment_min"] >= 0


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_a_dug_channel_deepens_where_the_flow_is_fast(gl41, kind):
    got = gl41["channel"][kind]
    assert got["step"] > 0.05 and got["step"] > 3 * max(got["above"], 1e-6)
    assert got["change"] == pytest.approx(got["sediment_out"], rel=0, abs=1e-7 * got["material"])


def test_gl41_bad_erosion_values_are_refused_by_name_and_change_nothing(gl41):
    bad = gl41["bad"]
    kinds = {"erosion": "TypeError", "sediment": "ValueError", "bedrock": None}
    for name, error, message in bad["refused"]:
        assert error is not None and message.startswith(name), (name, error, message)
        assert kinds[name] in (None, error), (name, error)
    assert bad["unchanged"] and bad["erosion"] == repr(EROSION)


def test_bad_erosion_values_are_refused_by_name_and_change_nothing(ctx):
    bad = _refused(ctx)
    assert all(error is not None and message.startswith(name) for name, error, message in bad["refused"]), bad
    assert bad["unchanged"]
