"""The water cycle on the GPU: rain (a rate or a field), evaporation, springs and drains, on both
lattices and every kernel, against the float64 reference and against each other; booked in the ledger
exactly; water conserved over long runs with every boundary kind; bad values rejected by name with the
grid unchanged."""
import math

import numpy as np
import pytest

import hydro
from hydro.reference import water as ref
from water_cases import (CELL_WISE, GRIDS, KERNELS, assert_same_bits, assert_same_ledger, cycle_long_run, gpu_flows,
                         random_state, set_boundary_both, twins)

CYCLE_KEYS = ("rain", "evaporation", "sources", "drains")


def _boundaries(g, s):
    set_boundary_both(g, s, "left", "inflow", 0.6, span=(2, 6))
    set_boundary_both(g, s, "right", "outflow", 0.4)
    set_boundary_both(g, s, "bottom", "level", 0.9)


def _cycle_both(g, s, rain=0.0, evaporation=0.0, sources=()):
    """The same cycle on the grid and its reference twin; the grid's sources."""
    g.rain = rain
    g.evaporation = evaporation
    s.rain = np.asarray(rain, np.float32).astype(np.float64) if np.ndim(rain) else float(np.float32(rain))
    s.evaporation = float(np.float32(evaporation))
    made = [g.add_source(*src) for src in sources]
    s.sources = [tuple(float(np.float32(v)) for v in src) for src in sources]
    return made


def _close(a, b, rtol):
    scale = max(float(np.abs(b).max()), 1e-3)
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("kind", list(GRIDS))
def test_cycle_matches_reference(ctx, rng, kind, kernel):
    """A rain field, evaporation, a spring and a drain over a random state with open boundaries: the
    water, the flows and the ledger's cycle entries as the float64 reference has them."""
    terrain, water = random_state(rng, (11, 14))
    g, s = twins(ctx, kind, terrain, water, kernel=kernel)
    _boundaries(g, s)
    rain = rng.uniform(0.0, 2e-3, (11, 14))
    _cycle_both(g, s, rain, 4e-3, [(3.0, 4.0, 2.5, 0.3), (9.5, 6.0, 3.0, -0.5), (12.0, 2.0, 0.4, -0.2)])
    for _ in range(4):
        g.step(0.2, substeps=4)
        ref.step(s, 0.2, substeps=4)
    _close(g.water, s.water, 2e-4)
    for a, b in zip(gpu_flows(g), s.flows()):
        _close(a, b, 2e-4)
    ledger = g.ledger()
    for key in ("rain", "sources"):
        assert ledger[key] == pytest.approx(s.cycle_ledger[key], rel=1e-6)
    for key in ("evaporation", "drains"):
        assert ledger[key] == pytest.approx(s.cycle_ledger[key], rel=1e-4)
    assert ledger["drains"] < 0 and ledger["evaporation"] < 0
    assert g.volume() == pytest.approx(ledger["expected"], rel=1e-6)
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_kernels_agree_with_the_cycle(ctx, rng, kind):
    """Every kernel moves the same water and books the same ledger with the cycle on (to the bit on CPU
    rasterisers), over calls of one substep and of many."""
    terrain, water = random_state(rng, (13, 17))
    results = []
    for kernel in KERNELS:
        g = GRIDS[kind](ctx, terrain, water=water, kernel=kernel)
        g.set_boundary("left", "level", 0.8)
        g.set_boundary("top", "outflow", 0.2)
        g.rain = 1e-3
        g.evaporation = 3e-3
        g.add_source(5.0, 5.0, 2.0, 0.4)
        g.add_source(12.0, 9.0, 3.0, -0.6)
        for substeps in (1, 5, 2):
            g.step(0.15, substeps=substeps)
        results.append((g.water, g.ledger()))
        g.release()
    for (water_k, ledger_k), kernel in zip(results[1:], KERNELS[1:]):
        assert_same_bits(water_k, results[0][0], err_msg=kernel)
        assert_same_ledger(ledger_k, results[0][1], err_msg=kernel)


@pytest.mark.parametrize("kind", list(GRIDS))
def test_water_equals_its_ledger_over_a_long_run(ctx, rng, kind):
    """water_cases.cycle_long_run on the cell-wise kernel (10^5 substeps with erosion too: test_water_erosion)."""
    cycle_long_run(lambda terrain, water: GRIDS[kind](ctx, terrain, water=water, kernel=CELL_WISE), rng)


@pytest.mark.parametrize("kind", list(GRIDS))
def test_rain_too_small_for_a_float32_column_still_arrives(ctx, kind):
    """2e-5 m/s of rain in substeps of 0.02 s is 4e-7 m a substep, less than half the last bit of a
    10 m column: rounding alone would lose all of it. What rounding holds back is owed to the column,
    so the lake rises by rate x time, as the ledger says."""
    depth = np.full((6, 7), 10.0)
    g = GRIDS[kind](ctx, np.zeros((6, 7)), water=depth)
    g.rain = 2e-5
    for _ in range(20):
        g.step(5.0, substeps=250)
    rise = g.water - 10.0
    np.testing.assert_allclose(rise, 2e-5 * 100.0, rtol=0.01)
    assert g.ledger()["rain"] == pytest.approx(2e-5 * 100.0 * 42 * g.geometry.cell_area, rel=1e-6)
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-7)
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_rain_adds_rate_times_area_times_time(ctx, kind):
    """Rain on a dry walled basin, over every cell and then as a field over half of it: the volume is
    rain x area x time, and the ledger books exactly that."""
    g = GRIDS[kind](ctx, np.zeros((8, 10)))
    area = g.geometry.cell_area
    g.rain = 1e-3
    g.step(2.0, substeps=10)
    assert g.volume() == pytest.approx(1e-3 * 2.0 * 80 * area, rel=1e-6)
    field = np.zeros((8, 10))
    field[:, :5] = 4e-3
    g.rain = field
    assert isinstance(g.rain, np.ndarray) and g.rain.shape == (8, 10)
    g.step(1.0, substeps=5)
    assert g.ledger()["rain"] == pytest.approx((2e-3 + 4e-3 * 1.0 * 0.5) * 80 * area, rel=1e-6)
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
    g.rain = 0.0
    before = g.volume()
    g.step(1.0, substeps=5)
    assert g.rain == 0.0 and g.volume() == pytest.approx(before, rel=1e-6)
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_evaporation_takes_what_is_there_and_stops_at_dry(ctx, kind):
    """5 cm of water at rest on a flat bed, 1 mm/s of evaporation: 2 cm after 30 s; dry (never below 0)
    after 60 s, the ledger booking the 5 cm and nothing more."""
    g = GRIDS[kind](ctx, np.zeros((6, 6)), water=np.full((6, 6), 0.05))
    g.evaporation = 1e-3
    g.step(30.0, substeps=300)
    np.testing.assert_allclose(g.water, 0.02, rtol=1e-4)
    g.step(40.0, substeps=400)
    assert np.all(g.water == 0.0)
    assert g.ledger()["evaporation"] == pytest.approx(-0.05 * 36 * g.geometry.cell_area, rel=1e-5)
    assert g.volume() == 0.0
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_springs_and_drains_persist_change_and_go(ctx, kind):
    """A spring adds its rate every second with no per-frame call, a changed rate from the next step on,
    nothing once removed; a drain takes nothing where it is dry and no more than a puddle holds."""
    g = GRIDS[kind](ctx, np.zeros((12, 12)))
    spring = g.add_source(6.0, 6.0, 2.0, 0.5)
    assert g.sources == (spring,) and spring.alive and spring.rate == 0.5
    g.step(4.0, substeps=40)
    assert g.volume() == pytest.approx(2.0, rel=1e-6)
    spring.rate = 0.25
    g.step(4.0, substeps=40)
    assert g.ledger()["sources"] == pytest.approx(3.0, rel=1e-6)
    spring.remove()
    assert not spring.alive and g.sources == ()
    with pytest.raises(RuntimeError, match="removed"):
        spring.rate = 1.0
    drain = g.add_source(6.0, 6.0, 12.0, -2.0)
    g.step(10.0, substeps=100)
    assert drain.alive and g.volume() == pytest.approx(0.0, abs=1e-6)
    assert g.ledger()["drains"] == pytest.approx(-3.0, rel=1e-5)
    assert g.water.min() >= 0.0
    before = g.ledger()["drains"]
    g.step(2.0, substeps=20)                  # dry: the drain takes nothing
    assert g.ledger()["drains"] == before
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_rain_on_a_slope_reaches_its_steady_state(ctx, kind):
    """Rain on a slope draining to a sea (a level side): the water settles to a steady state in which
    the sea takes what the rain brings, rain x area, as a mass balance demands."""
    ny, nx = 6, 16
    terrain = np.tile(np.linspace(1.5, 0.1, nx), (ny, 1))
    g = GRIDS[kind](ctx, terrain, manning=0.03)
    g.set_boundary("right", "level", 0.0)
    g.rain = 5e-3
    for _ in range(40):
        g.step(5.0)
    first = g.ledger()
    g.step(20.0)
    last = g.ledger()
    out = -(last["level"] - first["level"]) / 20.0
    assert out == pytest.approx(5e-3 * nx * ny * g.geometry.cell_area, rel=0.02)
    g.release()


def test_bad_cycle_values_are_rejected_by_name_and_change_nothing(ctx, rng):
    terrain, water = random_state(rng, (7, 8))
    g = hydro.WaterGrid(ctx, terrain, water=water)
    g.rain = 1e-3
    source = g.add_source(3.0, 3.0, 1.0, 0.2)
    g.step(0.1)
    before = (g.water, g.ledger(), g.rain, g.evaporation, g.sources)
    bad = [
        ("rain", lambda: setattr(g, "rain", -1e-3), ValueError),
        ("rain", lambda: setattr(g, "rain", float("nan")), ValueError),
        ("rain", lambda: setattr(g, "rain", "heavy"), TypeError),
        ("rain", lambda: setattr(g, "rain", np.ones((3, 3))), ValueError),
        ("rain", lambda: setattr(g, "rain", np.full((7, 8), -1.0)), ValueError),
        ("evaporation", lambda: setattr(g, "evaporation", -1.0), ValueError),
        ("evaporation", lambda: setattr(g, "evaporation", math.inf), ValueError),
        ("evaporation", lambda: setattr(g, "evaporation", [1.0]), TypeError),
        ("x", lambda: g.add_source("a", 1.0, 1.0, 1.0), TypeError),
        ("y", lambda: g.add_source(1.0, math.nan, 1.0, 1.0), ValueError),
        ("radius", lambda: g.add_source(1.0, 1.0, 0.0, 1.0), ValueError),
        ("rate", lambda: g.add_source(1.0, 1.0, 1.0, 1e39), ValueError),
        ("x, y", lambda: g.add_source(-50.0, 1.0, 1.0, 1.0), ValueError),
        ("rate", lambda: setattr(source, "rate", None), TypeError),
    ]
    for name, call, error in bad:
        with pytest.raises(error, match=f"^{name}"):
            call()
        assert_same_bits(g.water, before[0])
        assert g.ledger() == before[1] and g.rain == before[2] and g.evaporation == before[3]
        assert g.sources == before[4] and source.rate == 0.2
    g.release()
    with pytest.raises(RuntimeError, match="release"):
        source.rate = 1.0
    assert not source.alive


@pytest.mark.parametrize("kernel", KERNELS)
def test_a_grid_past_a_storage_blocks_size_books_its_cycle(ctx, kernel):
    """Each cell's record is a texel of a texture the grid's size: a grid more than
    GL_MAX_SHADER_STORAGE_BLOCK_SIZE / 16 cells wide and high (a 16384² grid on a GPU, whose records
    in a storage buffer booked none of its evaporation) takes the cycle like any other, and books
    what it took everywhere, the last rows too: the volume equals the ledger."""
    block = ctx.info.get("GL_MAX_SHADER_STORAGE_BLOCK_SIZE") or 1 << 27
    if block > 1 << 28:
        pytest.skip("a grid past this context's storage block is too large for a test")
    rows = 2048
    shape = (rows + 1, block // 16 // rows)
    water = np.zeros(shape, np.float32)
    water[:8] = water[-8:] = 0.05                   # the first rows and the last, past the block's reach
    g = GRIDS["square"](ctx, np.zeros(shape, np.float32), water=water, kernel=kernel)
    g.evaporation = 2e-3
    g.add_source(shape[1] - 20.0, shape[0] - 4.0, 3.0, 0.5)
    g.step(0.2, substeps=2)
    ledger = g.ledger()
    taken = 2e-3 * 0.2 * 16 * shape[1]              # from the rows it started in, for 0.2 s
    assert -1.5 * taken < ledger["evaporation"] < -0.9 * taken      # and a few cells it spread to
    assert ledger["sources"] == pytest.approx(0.5 * 0.2, rel=1e-5)
    assert g.volume() == pytest.approx(ledger["expected"], rel=1e-6)
    g.release()
