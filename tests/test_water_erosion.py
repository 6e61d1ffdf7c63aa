"""Terrain that the water shapes: erosion, sediment transport and slumping on both lattices, against the
float64 reference (hydro.reference.erosion) and against physics: material (terrain + sediment) is
conserved to float precision over long runs with every boundary kind and the water cycle on, changes
of a millionth on a high bed are not lost to float32, a dug channel deepens where the flow is fast,
a river drops its sediment where it meets a lake, steep slopes relax to the talus angle, the bedrock
holds; bad values are rejected by name with the grid unchanged."""
import math

import numpy as np
import pytest

import hydro
import water_cases
from hydro import _native
from hydro import boundary as bnd
from hydro import water_plan as plan
from hydro.reference import erosion as ref_erosion
from hydro.reference import water as ref
from hydro.water_erosion import NEIGHBOUR_UNITS
from hydro.water_fragment import FragmentHexWaterGrid, FragmentWaterGrid
from hydro.water_plan import Tuning
from water_cases import GPU_TOLERANCE, GRIDS, assert_same_bits, assert_same_ledger, random_state, set_boundary_both, twins

EROSION = hydro.Erosion(capacity=0.4, dissolve=0.5, deposit=0.5, talus=30.0, slump=0.5)


def _erosion_both(g, s, erosion, sediment=None, bedrock=None):
    g.erosion = erosion
    s.erosion = erosion
    if sediment is not None:
        g.sediment = sediment
        s.sediment = np.asarray(sediment, np.float32).astype(np.float64)
    if bedrock is not None:
        g.bedrock = bedrock
        s.bedrock = np.asarray(bedrock, np.float32).astype(np.float64)


@pytest.mark.parametrize("images", [True, False], ids=["neighbour-images", "neighbour-textures"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_erosion_matches_reference(ctx, rng, kind, images):
    """Random beds and water with open sides of every kind, suspended sediment, a bedrock under part of
    the grid: bed, sediment and water after a few substeps as the float64 reference has them, and the
    sediment that left through the sides booked alike; the passes reading their neighbours through image
    units where the context has enough (CPU rasterisers) or texture units (GPUs)."""
    terrain, water = random_state(rng, (10, 12))
    terrain = 3.0 * terrain
    g, s = twins(ctx, kind, terrain, water)
    g._retune(g._tuning.replace(erosion_images=images))
    set_boundary_both(g, s, "left", "inflow", 0.6, span=(2, 7))
    set_boundary_both(g, s, "right", "outflow", 0.5)
    set_boundary_both(g, s, "bottom", "level", 1.5)
    sediment = 0.3 * np.asarray(water, np.float32) * rng.uniform(0.0, 1.0, water.shape)
    bedrock = np.where(rng.random(water.shape) < 0.3, np.asarray(terrain, np.float32) - 0.01, -1e3)
    _erosion_both(g, s, EROSION, sediment, bedrock)
    for _ in range(3):
        g.step(0.1, substeps=2)
        ref.step(s, 0.1, substeps=2)
    assert g._erosion.images is (images and _native.image_units(ctx) >= NEIGHBOUR_UNITS)   # where it has them
    np.testing.assert_allclose(g.terrain, s.terrain, rtol=0, atol=2e-5)
    np.testing.assert_allclose(g.sediment, s.sediment, rtol=0, atol=2e-5)
    np.testing.assert_allclose(g.water, s.water, rtol=0, atol=2e-5)
    assert s.sediment_out < 0
    assert g.ledger()["sediment_out"] == pytest.approx(s.sediment_out, rel=1e-3)
    assert g.material() == pytest.approx(ref_erosion.material(s), rel=1e-7)
    g.release()


@pytest.mark.parametrize("shape", [None, ((1, 1), 1), ((5, 3), 1)], ids=["tuned", "1x1", "5x3"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_the_blocked_kernels_erosion_on_tiny_and_ragged_grids(ctx, rng, kind, shape):
    """Erosion in the tile program (a GPU's plan) where its tiles do not fit: grids narrower or shorter
    than one tile, one column or row past a multiple of it, tiles of one cell; every side open. Water, bed,
    sediment and ledgers as the cell-wise kernel's passes leave them, to the bit on CPU rasterisers."""
    for size in [(2, 2), (3, 40), (40, 3), (2, 29), (25, 2)]:
        terrain, water = random_state(rng, size)
        terrain = 3.0 * terrain
        grids = []
        for kernel in ("blocked", "cells"):
            g = GRIDS[kind](ctx, terrain, water=water, friction=0.2, kernel=kernel)
            _as_a_gpu(g, **({} if shape is None else {"erosion_blocked": shape}))
            g.set_boundary("left", "inflow", 0.8)
            g.set_boundary("right", "level", 0.9)
            g.set_boundary("bottom", "outflow", 0.3)
            g.set_boundary("top", "level", 0.4, span=(0, 1))
            g.erosion, g.sediment = EROSION, 0.2 * np.asarray(water)
            for n in (2, 1, 3):
                g.step(0.1 * n, substeps=n)
            grids.append(g)
        blocked, cells = grids
        assert blocked._last_call.kernel == "blocked" and cells._last_call.kernel == "cells"
        for name in ("water", "terrain", "sediment"):
            assert_same_bits(getattr(blocked, name), getattr(cells, name), f"{name} {size}")
        assert_same_ledger(blocked.ledger(), cells.ledger(), str(size))
        for g in grids:
            g.release()


@pytest.mark.parametrize("kernel", ["cells", "blocked"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_material_and_water_equal_their_ledgers_over_a_hundred_thousand_substeps(ctx, rng, kind, kernel):
    """Erosion, slumping, rain (a field), evaporation, a spring and a drain, with inflow, outflow and
    level sides, for 10^5 substeps, erosion after the cell-wise kernel's substeps or in the blocked
    kernel's tile program (a GPU's plan; 2 10^4 substeps of the same 1000 s on CPU rasterisers, which
    run its launches of a substep slowly): material changes by exactly what left through the sides and the water equals its
    ledger, each to float precision; the bedrock holds and nothing goes negative."""
    ny, nx = 7, 8
    terrain = np.add.outer(np.linspace(0.0, 0.5, ny), np.linspace(2.0, 0.0, nx)) + rng.uniform(0, 0.3, (ny, nx))
    g = GRIDS[kind](ctx, terrain, water=np.full((ny, nx), 0.05), kernel=kernel)
    if kernel == "blocked":
        _as_a_gpu(g)
    g.set_boundary("left", "inflow", 0.02)
    g.set_boundary("right", "outflow", 0.03)
    g.set_boundary("top", "level", 0.8)
    g.rain = rng.uniform(0.0, 2e-4, (ny, nx))
    g.evaporation = 5e-5
    g.add_source(1.0, 2.0, 1.5, 0.01)
    g.add_source(5.0, 4.0, 1.5, -0.02)
    bedrock = np.asarray(g.terrain) - 0.2
    g.bedrock = bedrock
    g.erosion = hydro.Erosion(capacity=0.2, dissolve=0.2, deposit=0.2, talus=20.0, slump=0.2)
    material = g.material()
    each = 800 if kernel == "blocked" and water_cases.BITWISE else 4000
    for _ in range(25):
        g.step(40.0, substeps=each)
    ledger = g.ledger()
    assert g.iteration == 25 * each and g._last_call.kernel == kernel
    assert ledger["sediment_out"] < -1e-3 and np.abs(g.terrain - terrain).max() > 1e-2
    # to float precision of what moved: the volumes that crossed the sides, fell and were taken
    moved = sum(abs(v) for k, v in ledger.items() if k not in ("initial", "expected", "sediment_out"))
    assert moved > 10 * g.volume()
    assert g.material() - material == pytest.approx(ledger["sediment_out"], rel=0, abs=2e-8 * material)
    assert g.volume() == pytest.approx(ledger["expected"], rel=0, abs=5e-8 * moved)
    assert np.all(g.terrain >= bedrock - 1e-6) and g.sediment.min() >= 0 and g.water.min() >= 0
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_millionths_on_a_high_bed_are_not_lost(ctx, kind):
    """A 1000 m plateau under a slow sheet of water: each substep's exchange with the bed is far below
    half a float32 bit of 1000 m (3e-5), so a bed that stored each change would never move. What
    rounding drops is owed to the bed: it lowers as the float64 reference's does, and material equals
    its ledger."""
    ny, nx = 5, 12
    terrain = 1000.0 + np.tile(np.linspace(0.06, 0.0, nx), (ny, 1))
    g, s = twins(ctx, kind, terrain, np.full((ny, nx), 0.02))
    set_boundary_both(g, s, "left", "inflow", 0.01)
    set_boundary_both(g, s, "right", "outflow", 0.01)
    erosion = hydro.Erosion(capacity=0.1, dissolve=0.02, deposit=0.02, talus=45.0, slump=0.0)
    _erosion_both(g, s, erosion)
    material = g.material()
    for _ in range(10):
        g.step(4.0, substeps=80)
        ref.step(s, 4.0, substeps=80)
    start = np.asarray(terrain, np.float32).astype(np.float64)
    lowered = (start - s.terrain).sum()
    assert (start - s.terrain).max() > 2e-4 and lowered > 5e-3          # the reference's bed moved
    # the GPU's float32 beds show it but for what is still owed to them: under half a bit each
    owed_bound = ny * nx * 0.5 * np.spacing(np.float32(1000.0))
    assert abs((start - g.terrain).sum() - lowered) < owed_bound < 0.5 * lowered
    assert g.material() - material == pytest.approx(g.ledger()["sediment_out"], rel=0, abs=1e-9 * material)
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_a_dug_channel_deepens_where_the_flow_is_fast(ctx, kind):
    """A channel dug down a gentle slope, a steep step and a gentle run-out, a stream let in at its head:
    after a minute the bed has gone down where the water runs fastest, down the step, and the material
    it took has settled where the water slows below it, or gone out with it."""
    ny, nx = 12, 40
    x = np.arange(nx)
    profile = np.where(x < 14, 4.0 - 0.02 * x, np.where(x < 22, 3.72 - 0.25 * (x - 14), 1.72 - 0.02 * (x - 22)))
    g = GRIDS[kind](ctx, np.tile(profile, (ny, 1)), manning=0.03)
    for cx in range(0, nx, 2):
        g.dig(cx, 6.0, 2.0, 0.3)
    before = g.terrain
    g.set_boundary("left", "inflow", 0.8, span=(4, 9))
    g.set_boundary("right", "level", -0.5)
    g.erosion = hydro.Erosion()
    material = g.material()
    for k in range(30):
        g.step(2.0)
        if k == 14:                   # the stream runs the whole channel
            speed = np.hypot(*g.sample(np.stack([x, np.full(nx, 6)], -1))[:, 2:].T)      # the channel's axis
    lowered = (before - g.terrain)[5:8]
    step, below, above = slice(15, 22), slice(22, 28), slice(4, 12)
    assert speed[step].mean() > 1.5 * max(speed[below].mean(), speed[above].mean())
    assert lowered[:, step].mean() > 0.05
    assert lowered[:, step].mean() > 3 * max(lowered[:, above].mean(), 1e-6)
    assert -lowered[:, below].mean() > 0.05
    assert g.material() - material == pytest.approx(g.ledger()["sediment_out"], rel=0, abs=1e-7 * material)
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_a_river_drops_its_sediment_where_it_meets_a_lake(ctx, kind):
    """A muddy river runs into a deep flat lake: its sediment settles near the mouth (the lake bed rises
    there, more than far out in the lake), and the water in the lake runs clear away from the mouth."""
    ny, nx = 12, 36
    x = np.arange(nx)
    terrain = np.tile(np.where(x < 12, 2.0 - 0.1 * x, -2.0), (ny, 1)).astype(np.float64)
    water = np.where(terrain < 0, 2.8 - terrain, 0.0)
    g = GRIDS[kind](ctx, terrain, water=water, manning=0.03)
    g.set_boundary("left", "inflow", 1.0)
    g.set_boundary("right", "level", 0.8)
    g.erosion = hydro.Erosion(capacity=0.2, dissolve=0.5, deposit=0.5, talus=40.0, slump=0.0)
    g.sediment = np.where(x < 12, 0.02, 0.0) * np.ones((ny, 1))
    before = g.terrain
    for _ in range(30):
        g.step(2.0)
    raised = (g.terrain - before)[:, 12:]
    mouth, far = raised[:, :4].mean(), raised[:, -6:].mean()
    assert mouth > 1e-3 and mouth > 10 * max(far, 1e-7)
    sediment = g.sediment[:, 12:]
    assert sediment[:, :4].mean() > 10 * max(sediment[:, -6:].mean(), 1e-9)
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_steep_slopes_slump_to_the_talus_angle_and_conserve_material(ctx, kind):
    """A dry block 3 m high on a flat bed (slopes of 72 degrees), talus 30 degrees: the block spreads until
    no face is steeper than the talus angle (to a few percent of the drop), with no material lost, none
    of it below the bedrock the flat bed stands on."""
    ny, nx = 14, 14
    terrain = np.zeros((ny, nx))
    terrain[5:9, 5:9] = 3.0
    g = GRIDS[kind](ctx, terrain)
    g.bedrock = np.zeros((ny, nx))
    g.erosion = hydro.Erosion(talus=30.0, slump=2.0)
    material = g.material()
    for _ in range(40):
        g.step(1.0, substeps=10)
    z = g.terrain.astype(np.float64)
    drop = g.geometry.pipe_length * math.tan(math.radians(30.0))
    steepest = max(np.abs(np.diff(z, axis=1)).max(), np.abs(np.diff(z, axis=0)).max())
    assert steepest < 1.05 * drop
    assert z.max() < 2.9 and z.min() >= -1e-6
    assert g.material() == pytest.approx(material, rel=1e-7)
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_the_bedrock_holds(ctx, kind):
    """A fast stream over rock 5 cm under the soil: it carves the soil away and stops at the rock."""
    ny, nx = 8, 24
    terrain = np.tile(np.linspace(2.0, 0.0, nx), (ny, 1))
    g = GRIDS[kind](ctx, terrain)
    rock = np.asarray(g.terrain) - 0.05
    g.bedrock = rock
    assert_same_bits(g.bedrock, rock)
    g.set_boundary("left", "inflow", 2.0)
    g.set_boundary("right", "level", -0.5)
    g.erosion = hydro.Erosion(capacity=1.0, dissolve=2.0, deposit=0.1, talus=60.0, slump=1.0)
    for _ in range(20):
        g.step(1.0)
    assert np.all(g.terrain >= rock - 1e-6)
    assert np.isclose(g.terrain, rock, atol=1e-3).sum() > nx        # it got there somewhere
    g.release()


def _as_a_gpu(g, **changes):
    """The test seam: plan g's calls as a GPU's, whatever the context: erosion in the blocked kernel's
    tile program (CPU rasterisers run the cell-wise kernel's passes)."""
    tuning = Tuning.for_device("gpu", isinstance(g, hydro.HexWaterGrid), inertia=g.params.inertia)
    g._retune(tuning.replace(**changes))


@pytest.mark.parametrize("as_gpu", [False, True], ids=["device-plan", "gpu-plan"])
def test_erosion_gives_the_same_bits_whatever_kernel_was_asked(ctx, rng, as_gpu):
    """With erosion on every kernel setting gives the same bits: erosion runs in the blocked kernel's tile
    program where the plan has it (GPUs) in calls of several substeps (in every call where the blocked
    kernel is asked for) unless the cell-wise kernel is asked for, else its passes follow the cell-wise
    kernel's substeps."""
    terrain, water = random_state(rng, (9, 10))
    results = []
    for kernel in (None, "cells", "fused", "blocked"):
        g = hydro.WaterGrid(ctx, terrain, water=water, kernel=kernel)
        if as_gpu:
            _as_a_gpu(g)
        g.erosion = EROSION
        for n in (1, 3):
            g.step(0.1 * n, substeps=n)
            shape = g._tuning.erosion_blocked
            blocked = shape is not None and (kernel == "blocked" or kernel != "cells" and n > 1)
            assert g._last_call.kernel == ("blocked" if blocked else "cells"), (kernel, n)
            assert g._last_call.launches == ((shape,) * n if blocked else ())
        results.append((g.terrain, g.sediment, g.water))
        g.release()
    for other in results[1:]:
        for a, b in zip(other, results[0]):
            assert_same_bits(a, b)


@pytest.mark.parametrize("inertia", [False, True], ids=["classic", "inertia"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_the_blocked_kernels_erosion_gives_the_cell_wise_kernels_bits(ctx, rng, kind, inertia):
    """Erosion in the blocked kernel's tile program (a GPU's plan; its interior tiles through the program
    without boundary tests) against the cell-wise kernel's passes: random beds, water and sediment, a
    bedrock under part of the grid, open sides of every kind, rain, evaporation, a spring, a drain and a
    gauge, calls of 2, 1 and 3 substeps. Water, bed, sediment, ledgers, material and the gauge alike, to
    the bit on CPU rasterisers."""
    ny, nx = 56, 61
    terrain = 3.0 * rng.uniform(0.0, 1.0, (ny, nx))
    water = np.where(rng.random((ny, nx)) < 0.6, rng.uniform(0.0, 1.5, (ny, nx)), 0.0)
    sediment = 0.3 * water * rng.uniform(0.0, 1.0, (ny, nx))
    bedrock = np.where(rng.random((ny, nx)) < 0.3, terrain - 0.01, -1e3)
    grids = []
    for kernel in (None, "cells"):
        g = GRIDS[kind](ctx, terrain, water=water, friction=0.05, manning=0.02, inertia=inertia, kernel=kernel)
        _as_a_gpu(g, split_from=0)
        g.set_boundary("left", "inflow", 0.5, span=(2, 7))
        g.set_boundary("right", "level", 0.3)
        g.set_boundary("top", "outflow", 0.2)
        g.erosion, g.sediment, g.bedrock = EROSION, sediment, bedrock
        g.rain, g.evaporation = 1e-3, 2e-4
        g.add_source(20.0, 20.0, 4.0, 0.5)
        g.add_source(10.0, 30.0, 3.0, -0.3)
        gauge = g.add_gauge((5.0, 3.0), (5.0, 40.0))
        for n in (2, 1, 3):
            g.step(0.02 * n, substeps=n)
        grids.append((g, gauge))
    (blocked, gauge), (cells, cells_gauge) = grids
    assert blocked._last_call.kernel == "blocked" and cells._last_call.kernel == "cells"
    layout = plan.tile_layout(blocked._eroding_tuning, nx, ny, blocked._tuning.erosion_blocked)
    assert min(layout.inner) > 0                        # the interior program ran too
    for name in ("water", "terrain", "sediment"):
        assert_same_bits(getattr(blocked, name), getattr(cells, name), name)
    assert_same_ledger(blocked.ledger(), cells.ledger())
    assert blocked.ledger()["sediment_out"] < 0
    exact = water_cases.BITWISE
    assert blocked.material() == pytest.approx(cells.material(), rel=0 if exact else 1e-7)
    blocked.step(0.02)
    cells.step(0.02)
    assert gauge.volume == pytest.approx(cells_gauge.volume, rel=0 if exact else GPU_TOLERANCE)
    for g, _ in grids:
        g.release()


def test_bad_erosion_values_are_rejected_by_name_and_change_nothing(ctx, rng):
    terrain, water = random_state(rng, (6, 7))
    g = hydro.WaterGrid(ctx, terrain, water=water)
    g.erosion = EROSION
    g.step(0.1)
    snapshot = lambda: (g.terrain, g.water, g.sediment, g.erosion, g.bedrock, g.material())
    before = snapshot()
    for name, make, error in [
        ("capacity", lambda: hydro.Erosion(capacity=-0.1), ValueError),
        ("dissolve", lambda: hydro.Erosion(dissolve=math.nan), ValueError),
        ("deposit", lambda: hydro.Erosion(deposit="fast"), TypeError),
        ("talus", lambda: hydro.Erosion(talus=90.0), ValueError),
        ("talus", lambda: hydro.Erosion(talus=0.0), ValueError),
        ("slump", lambda: hydro.Erosion(slump=-1.0), ValueError),
    ]:
        with pytest.raises(error, match=f"^{name}"):
            make()
    for name, call, error in [
        ("erosion", lambda: setattr(g, "erosion", {"capacity": 0.1}), TypeError),
        ("sediment", lambda: setattr(g, "sediment", -np.ones((6, 7))), ValueError),
        ("sediment", lambda: setattr(g, "sediment", np.ones((7, 6))), ValueError),
        ("bedrock", lambda: setattr(g, "bedrock", np.full((6, 7), np.nan)), ValueError),
        ("bedrock", lambda: setattr(g, "bedrock", "granite"), TypeError),
    ]:
        with pytest.raises(error, match=f"^{name}"):
            call()
        after = snapshot()
        for a, b in zip(after[:3], before[:3]):
            assert_same_bits(a, b)
        assert after[3:] == before[3:]
    g.erosion = None
    g.step(0.1)
    assert g.erosion is None and g.material() == pytest.approx(before[5], rel=1e-7)
    g.release()


@pytest.mark.parametrize("cls", [*GRIDS.values(), FragmentWaterGrid, FragmentHexWaterGrid], ids=lambda c: c.__name__)
def test_bedrock_removed_leaves_no_floor_anywhere_on_a_large_grid(ctx, cls):
    """Erosion's textures are filled a band of rows at a time (no host array the size of the grid): on a
    grid of several bands, a bedrock set and then removed leaves no floor in any band, and the sediment
    starts at 0 everywhere; both backends."""
    ny, nx = 1000, 1100                  # over a million cells: more than one band
    g = cls(ctx, np.zeros((ny, nx), np.float32))
    g.erosion = hydro.Erosion()
    assert not g.sediment.any()
    g.bedrock = np.zeros((ny, nx))
    g.bedrock = None
    assert g.bedrock is None
    assert (g._read_texture(g._erosion.bedrock) == np.float32(-3.0e38)).all()
    g.release()
