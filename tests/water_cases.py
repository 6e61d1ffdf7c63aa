"""Shared builders for the water tests: a GPU grid and its float64 reference twin in the same state."""
import numpy as np

import hydro
from hydro.reference import water as ref

def _has_compute() -> bool:
    """Whether the test machine's context has compute shaders (llvmpipe posing as a GL 4.1 driver has
    not: the grids then run as fragment passes, hydro.water_fragment)."""
    context = hydro.create_context()
    try:
        return context.version_code >= 430
    finally:
        context.release()


# The kernels a test of every kernel runs: on a context without compute shaders the grids have one
# schedule, their fragment passes (kernel=None).
KERNELS = ("fused", "blocked", "cells") if _has_compute() else (None,)
CELL_WISE = KERNELS[-1]             # the cell-wise kernel's name, or None there

GRIDS = {"square": hydro.WaterGrid}
try:                                    # the hex lattice joins every shared test once it exists
    GRIDS["hex"] = hydro.HexWaterGrid
except AttributeError:
    pass


# Whether the paths' results must match to the bit: on the CPU rasterisers CI runs (every path's
# arithmetic in the same order, nothing fused); a GPU's compiler contracts multiplies and adds as it
# likes, differently in each kernel (NVIDIA: 2-3 ulps apart, and now and then a cell whose outflow
# scale or dry bed that rounding tips the other way, 1e-4 of the largest value after 8 substeps on the
# H100), so there they match to GPU_TOLERANCE of the largest value, which still fails a kernel that is
# wrong (the hex pack's lost z flows: 8e-3). conftest's ctx fixture sets it from the test context.
BITWISE = True
GPU_TOLERANCE = 1e-3


def assert_same_bits(a, b, err_msg=""):
    """float32 arrays a and b hold the same bits: the same numbers, the sign of zero included (where
    array_equal takes -0.0 for +0.0); on a GPU, the same to GPU_TOLERANCE of b's largest value."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    assert a.shape == b.shape, (a.shape, b.shape)
    if not BITWISE:
        scale = max(float(np.abs(b).max()), 1e-30)
        np.testing.assert_allclose(a, b, rtol=0, atol=GPU_TOLERANCE * scale, err_msg=err_msg)
        return
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32), err_msg=err_msg)


# On a GPU a ledger entry may differ by GPU_TOLERANCE of itself plus LEDGER_FLOOR of the largest entry
# (an entry of signed flows that nearly cancel carries the others' rounding): tight enough that a
# boundary's volume booked twice, or not at all, fails even beside a large initial volume.
LEDGER_FLOOR = 1e-5


def assert_same_ledger(a, b, err_msg=""):
    """Ledgers a and b (WaterGrid.ledger()) are equal, entry by entry; on a GPU, each to GPU_TOLERANCE
    of itself plus LEDGER_FLOOR of the largest entry (their sums run in another order)."""
    assert a.keys() == b.keys(), err_msg
    if BITWISE:
        assert a == b, err_msg
        return
    scale = max(max(abs(v) for v in b.values()), 1e-30)
    for key in a:
        limit = GPU_TOLERANCE * max(abs(a[key]), abs(b[key])) + LEDGER_FLOOR * scale
        assert abs(a[key] - b[key]) <= limit, (key, a[key], b[key], limit, err_msg)


def random_state(rng, shape, dry_fraction=0.25):
    ny, nx = shape
    terrain = rng.uniform(0.0, 1.0, shape)
    water = rng.uniform(0.0, 0.6, shape)
    water[rng.random(shape) < dry_fraction] = 0.0
    return terrain, water


def twins(ctx, kind, terrain, water, rng=None, flows_scale=0.0, **params):
    """GPU grid and reference State with identical float32-representable inputs."""
    cls = GRIDS[kind]
    terrain = np.asarray(terrain, np.float32).astype(np.float64)
    water = np.asarray(water, np.float32).astype(np.float64)
    g = cls(ctx, terrain, water=water, **params)
    s = ref.State.new(terrain, water, hexagonal=(kind == "hex"), params=g.params)
    if flows_scale:
        for k, name in enumerate(("flow_x", "flow_y", "flow_z")[:len(s.flows())]):
            q = rng.normal(0.0, flows_scale, s.flows()[k].shape).astype(np.float32)
            setattr(g, name, q)
            setattr(s, name, q.astype(np.float64))
    return g, s


def set_boundary_both(g, s, *args, **kwargs):
    """The same boundary on the grid and in the reference's table (built by the grid's own checks)."""
    from hydro import boundary as bnd
    g.set_boundary(*args, **kwargs)
    ny, nx = s.water.shape
    s.table = bnd.with_boundary(s.table, bnd.layout(nx, ny, s.hexagonal), *args, **kwargs)


def gpu_flows(g):
    return [g.flow_x, g.flow_y] + ([g.flow_z] if hasattr(g, "flow_z") else [])


def retune(g, **changes):
    """The test seam: g plans its calls from its tuning with `changes` (hydro.water_plan.Tuning)."""
    g._retune(g._tuning.replace(**changes))
    return g


def blocked_shape(g, shape, odd=None):
    """g runs the blocked kernel in every call, launches of `shape` ((cells x, cells y), substeps) and
    no wide ones (and `odd`'s for a call's remainder, where given)."""
    g.kernel = "blocked"
    return retune(g, blocked=shape, wide=(), **({"odd": odd} if odd else {}))


def solve_level(terrain, volume, cell_area, mask=None):
    """Surface height eta with sum(max(eta - z, 0)) * S = volume over `mask` (bisection, float64)."""
    z = terrain[mask] if mask is not None else terrain.ravel()
    lo, hi = z.min(), z.max() + volume / cell_area
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.maximum(mid - z, 0.0).sum() * cell_area < volume:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def cycle_long_run(make, rng):
    """Rain (a field), evaporation, springs and drains, with inflow, outflow and level sides, for 2 x 10^4
    substeps on the grid `make(terrain, water)` makes: the volume equals the ledger to float precision
    (what rounding held back from the columns is owed to them, so no error grows with the substeps), and
    no depth goes negative."""
    import pytest
    terrain, water = random_state(rng, (8, 9))
    g = make(terrain, water)
    g.set_boundary("left", "inflow", 0.05)
    g.set_boundary("right", "outflow", 0.08)
    g.set_boundary("top", "level", 0.7)
    g.rain = rng.uniform(0.0, 4e-4, (8, 9))
    g.evaporation = 2e-4
    g.add_source(2.0, 3.0, 1.5, 0.03)
    g.add_source(6.0, 5.0, 2.0, -0.05)
    for _ in range(10):
        g.step(20.0, substeps=2000)
    ledger = g.ledger()
    assert g.iteration == 20_000
    assert min(ledger["rain"], ledger["sources"], -ledger["evaporation"], -ledger["drains"]) > 1.0
    assert g.volume() == pytest.approx(ledger["expected"], rel=3e-7)
    assert g.water.min() >= 0.0
    g.release()
