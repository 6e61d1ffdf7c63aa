"""The fragment backend's grids (hydro/water_fragment.py) with inertia, Manning's friction, a constant pipe
area and fixed substeps: in the test context (GL 4.3+) against the cell-wise kernel on the same inputs,
to the bit on CPU rasterisers; on a GL 4.1 context with no compute shaders (a child process, Mesa's
overrides as in tests/test_water_fragment.py) against the float64 reference on random inputs, a lake at
rest, the ledger, and a dry-bed dam break whose front runs as the compute grid's."""
import json
import math

import numpy as np
import pytest

import hydro
from hydro import boundary as bnd
from hydro.reference import water as ref
from hydro.water_fragment import FragmentHexWaterGrid, FragmentWaterGrid
from test_water_fragment import _lake_at_rest, _same_bits, gl41_child, gl41_context
from water_cases import random_state

SHAPE = (20, 24)
KINDS = {"square": FragmentWaterGrid, "hex": FragmentHexWaterGrid}
COMPUTE = {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}
MODELS = {
    "inertia": {"inertia": True},
    "manning": {"manning": 0.03},
    "inertia+manning": {"inertia": True, "manning": 0.02},
    "inertia+constant-area": {"inertia": True, "pipe_area": 0.4},
    "constant-area": {"pipe_area": 0.4},
    "fixed-substep": {"inertia": True, "manning": 0.02, "fixed_substep": 0.04},
}
DAM = {"rows": 3, "cells": 120, "seconds": 4.0}


def _flow_names(kind):
    return ("flow_x", "flow_y", "flow_z")[:2 + (kind == "hex")]


def _inputs(kind, wet=0.0, seed=41):
    """Random terrain, water (`wet` deeper everywhere) and flows on every face, walls included, float32."""
    rng = np.random.default_rng(seed)
    terrain, water = random_state(rng, SHAPE)
    ny, nx = SHAPE
    shapes = [(ny, nx + 1), (ny + 1, nx), (ny + 1, nx + 1)]
    flows = {name: rng.normal(0.0, 0.05, shape).astype(np.float32) for name, shape in zip(_flow_names(kind), shapes)}
    return terrain.astype(np.float32), (water + wet).astype(np.float32), flows


def _open(g):
    g.set_boundary("left", "inflow", 0.6, span=(3, 15))
    g.set_boundary("right", "level", 0.7)
    g.set_boundary("top", "outflow", 0.2)


def _grid(ctx, cls, kind, model, wet=0.0, **extra):
    terrain, water, flows = _inputs(kind, wet)
    g = cls(ctx, terrain, water=water, friction=0.05, **model, **extra)
    for name, q in flows.items():
        setattr(g, name, q)
    _open(g)
    return g


def _run(g, fixed):
    """Automatic and set substeps, brushes and a side's kind changed between calls: the substeps taken.
    A brush first: the compute grid measures the water it plans from at an edit, not at a flow setter."""
    g.add_water(8.0, 10.0, 3.0, 4.0)
    taken = [g.step(0.1) for _ in range(3)]
    g.remove_water(12.0, 4.0, 2.0, 1.0)
    g.set_boundary("bottom", "level", 0.9, span=(2, 12))
    g.set_boundary("left", "wall")
    taken += [g.step(0.2), g.step(0.05)]
    if not fixed:
        taken.append(g.step(0.1, 3))
    g.dig(15.0, 6.0, 2.5, 0.3)
    taken.append(g.step(0.15))
    return taken


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_matches_the_cell_wise_kernel(ctx, kind, model):
    """The same inputs (flows on walls too), boundaries of every kind, brushes and calls: the fragment
    grid plans the cell-wise kernel's substeps (with inertia from the fastest water as well) and holds
    its water and flows to the bit (subnormal numbers flushed), and the same ledger."""
    params = MODELS[model]
    fixed = "fixed_substep" in params
    grids = [_grid(ctx, KINDS[kind], kind, params), _grid(ctx, COMPUTE[kind], kind, params, kernel="cells")]
    fragment, cells = (_run(g, fixed) for g in grids)
    assert fragment == cells, (fragment, cells)
    for name in ("water",) + _flow_names(kind):
        _same_bits(getattr(grids[0], name), getattr(grids[1], name), err_msg=name)
    la, lb = grids[1].ledger(), grids[0].ledger()
    scale = max(abs(v) for v in la.values())
    for key in lb:
        assert lb[key] == pytest.approx(la[key], rel=1e-7, abs=1e-7 * scale), key
    assert grids[0].volume() == pytest.approx(lb["expected"], rel=1e-6)
    assert (grids[0].iteration, grids[0].sim_time) == (grids[1].iteration, grids[1].sim_time)
    if params.get("inertia"):
        assert grids[0]._last_smoothing == grids[1]._last_call.smoothing > 0.0
    for g in grids:
        g.release()


def _speed_bound(g, kind):
    """The planner's speed bound (common/speed.glsl) in float64 from the grid's water and flows: per cell
    deeper than 0.05, half the sum over the axes of |its two faces' flows| over (face width x depth)."""
    h = g.water.astype(np.float64)
    qx, qy = g.flow_x.astype(np.float64), g.flow_y.astype(np.float64)
    total = np.abs(qx[:, :-1] + qx[:, 1:]) + np.abs(qy[:-1] + qy[1:])
    if kind == "hex":
        qz = g.flow_z.astype(np.float64)
        total += np.abs(qz[:-1, 1:] + qz[1:, :-1])
    speed = np.where(h > 0.05, 0.5 * total / (g.geometry.face_width * np.maximum(h, 0.05)), 0.0)
    return float(speed.max())


@pytest.mark.parametrize("kind", list(KINDS))
def test_both_backends_bound_the_speed_as_numpy_does(ctx, kind):
    """The fastest water the planner reads (water/stats.comp, fragment/stats_cells.frag: one function)
    against NumPy on random water and flows; films no deeper than 0.05 left out."""
    for cls in (KINDS[kind], COMPUTE[kind]):
        g = _grid(ctx, cls, kind, {"inertia": True}, wet=0.02)
        if cls is KINDS[kind]:
            stats = g._measure()
        else:                               # the compute grid's reduction, queued and read back
            g._stats.queue()
            stats = g._read_stats()
        got, want = stats["max_speed"], _speed_bound(g, kind)
        assert want > 0.1 and got == pytest.approx(want, rel=1e-6), (cls.__name__, got, want)
        g.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_inertia_plans_from_the_fastest_water(ctx, kind):
    """A fast stream in shallow water: the substeps keep it within half a cell each, which the depth's
    bound alone would not (the compute grid's rule, params.auto_substeps)."""
    terrain = np.zeros(SHAPE, np.float32)
    water = np.full(SHAPE, 0.1, np.float32)
    g = KINDS[kind](ctx, terrain, water=water, friction=0.0, inertia=True)
    g.flow_x = np.full((SHAPE[0], SHAPE[1] + 1), 0.8, np.float32)      # 8 m/s in 0.1 m of water
    g.set_boundary("left", "inflow", 0.8 * SHAPE[0])
    g.set_boundary("right", "outflow", 0.8 * SHAPE[0])
    stats = g._measure()
    assert stats["max_speed"] > 7.0, stats
    n = g.step(0.5)
    depth_only = hydro.params.auto_substeps(hydro.params.WaterParams(friction=0.0), g.geometry,
                                            g._coupling(stats, 0.5, 1.25), 0.5)
    assert n > depth_only and n >= 0.5 * stats["max_speed"] / 0.5, (n, depth_only, stats)
    g.release()


def test_bad_model_arguments_are_named_and_leave_the_grid_as_it_was(ctx):
    terrain = np.zeros((6, 7), np.float32)
    for name, kwargs, error in [("inertia", {"inertia": "yes"}, TypeError), ("manning", {"manning": -1.0}, ValueError),
                                ("pipe_area", {"pipe_area": "wide"}, ValueError),
                                ("fixed_substep", {"fixed_substep": 0.0}, ValueError),
                                ("fixed_substep", {"pipe_area": 5.0, "fixed_substep": 2.0}, ValueError)]:
        with pytest.raises(error, match=name):
            FragmentWaterGrid(ctx, terrain, **kwargs)
    g = FragmentWaterGrid(ctx, terrain, water=np.full((6, 7), 0.5, np.float32), inertia=True, fixed_substep=0.05)
    g.step(0.12)
    water, time, carry = g.water, g.sim_time, g._carry
    with pytest.raises(ValueError, match="substeps"):
        g.step(0.1, 2)
    with pytest.raises(ValueError, match="dt"):
        g.step(1e6)
    assert np.array_equal(g.water, water) and (g.sim_time, g._carry) == (time, carry)
    g.release()


# --------------------------------------------------------------------------------- GL 4.1 context

REF_MODELS = ("inertia+manning", "inertia+constant-area")


def _ref_run(g):
    """The run compared with the reference: a brush, set and automatic substeps; per call the substeps
    and de Almeida's weight the grid took."""
    g.add_water(8.0, 10.0, 3.0, 4.0)
    calls = []
    for dt, n in [(0.1, 2), (0.1, None), (0.2, None), (0.1, 3), (0.15, None)]:
        taken = g.step(dt, n)
        calls.append([dt, taken, g._last_smoothing])
    return calls


def _dam_break(ctx, cls, inertia):
    """A flume of 1 m cells, a reservoir 1 m deep in its first half on a dry bed, released: the mean
    depth along it after DAM["seconds"]."""
    rows, n = DAM["rows"], DAM["cells"]
    x = np.arange(n) + 0.5
    water = np.tile(np.where(x < n / 2, 1.0, 0.0), (rows, 1)).astype(np.float32)
    g = cls(ctx, np.zeros((rows, n), np.float32), water=water, friction=0.0, inertia=inertia)
    for _ in range(int(DAM["seconds"] * 10)):
        g.step(0.1)
    depth = g.water.mean(axis=0)
    ledger_gap = abs(g.volume() - g.ledger()["expected"]) / g.volume()
    g.release()
    return depth, ledger_gap


def _front(depth):
    """The 1 cm contour's speed over 2 sqrt(g h0)."""
    n = DAM["cells"]
    x = np.arange(n) + 0.5
    return (x[np.nonzero(depth > 0.01)[0].max()] - n / 2) / DAM["seconds"] / (2 * math.sqrt(9.81))


def child():
    """In the GL 4.1 process: the checks' results, as JSON on stdout."""
    ctx, out = gl41_context()
    out.update(ref={}, lake={})
    for kind, cls in KINDS.items():
        for model in REF_MODELS:
            g = _grid(ctx, cls, kind, MODELS[model], wet=0.2)
            calls = _ref_run(g)
            out["ref"][f"{kind}/{model}"] = {"calls": calls, "ledger": g.ledger(), "volume": g.volume(),
                                             **{name: getattr(g, name).tolist() for name in ("water",) + _flow_names(kind)}}
            g.release()
        terrain, water = _lake_at_rest()
        lake = cls(ctx, terrain, water=water, friction=0.0, manning=0.03, inertia=True)
        lake.set_boundary("left", "level", 1.25)
        lake.set_boundary("bottom", "level", 1.25, span=(2, 9))
        taken = [lake.step(0.25) for _ in range(8)]
        out["lake"][kind] = {"taken": taken, "still": bool(np.array_equal(lake.water, water)),
                             "flows": max(float(np.abs(getattr(lake, name)).max()) for name in _flow_names(kind))}
        lake.release()
    out["dam"] = {}
    for inertia in (True, False):
        depth, gap = _dam_break(ctx, FragmentWaterGrid, inertia)
        out["dam"][str(inertia)] = {"depth": depth.tolist(), "ledger_gap": gap}
    out["error"] = ctx.error
    print(json.dumps(out))


@pytest.fixture(scope="module")
def gl41():
    """The GL 4.1 process's results."""
    return gl41_child("test_water_fragment_inertia")


def test_gl41_context_has_no_compute_shaders(gl41):
    assert gl41["version"] == 410
    assert gl41["compute"].startswith("refused"), gl41["compute"]
    assert gl41["error"] == "GL_NO_ERROR"


@pytest.mark.parametrize("model", REF_MODELS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_inertia_and_manning_match_the_reference(gl41, kind, model):
    """Random rough ground, standing flows, open sides of every kind, a brush, set and automatic
    substeps: the water and flows of the float64 reference (in the grid's substeps and weights) to 2e-4
    of their largest (float32's rounding, grown over the run), what each kind of side booked to its volume, and the water its ledger."""
    run = gl41["ref"][f"{kind}/{model}"]
    terrain, water, flows = _inputs(kind, wet=0.2)
    s = ref.State.new(terrain.astype(np.float64), water.astype(np.float64), hexagonal=kind == "hex",
                      params=hydro.params.WaterParams(friction=0.05, **MODELS[model]))
    for name, q in flows.items():
        setattr(s, name, q.astype(np.float64))
    layout = bnd.layout(SHAPE[1], SHAPE[0], kind == "hex")
    s.table = bnd.with_boundary(s.table, layout, "left", "inflow", 0.6, span=(3, 15))
    s.table = bnd.with_boundary(s.table, layout, "right", "level", 0.7)
    s.table = bnd.with_boundary(s.table, layout, "top", "outflow", 0.2)
    initial = s.volume()
    ref.add_water(s, 8.0, 10.0, 3.0, 4.0)
    for dt, n, smoothing in run["calls"]:
        ref.step(s, dt, n, smoothing=smoothing)
    assert any(smoothing > 0.0 for _, _, smoothing in run["calls"])
    np.testing.assert_allclose(run["water"], s.water, rtol=0, atol=2e-4 * s.water.max())
    for name in _flow_names(kind):
        q = getattr(s, name)
        np.testing.assert_allclose(run[name], q, rtol=0, atol=2e-4 * np.abs(q).max(), err_msg=name)
    ledger = run["ledger"]
    for side, code in (("inflow", bnd.KINDS["inflow"]), ("outflow", bnd.KINDS["outflow"]), ("level", bnd.KINDS["level"])):
        want = float(s.ledger[s.table["kind"] == code].sum())
        assert ledger[side] == pytest.approx(want, rel=1e-4, abs=1e-5), side
    assert ledger["initial"] == pytest.approx(initial, rel=1e-6) and ledger["brushes"] == pytest.approx(4.0)
    assert ledger["expected"] == math.fsum(v for k, v in ledger.items() if k != "expected")
    assert run["volume"] == pytest.approx(ledger["expected"], rel=1e-6)


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_lake_at_rest_stays_at_rest_with_inertia(gl41, kind):
    """A flat lake between islands, open to an outside surface at its own height, with inertia and
    Manning's friction: not a bit moves."""
    lake = gl41["lake"][kind]
    assert lake["still"] and lake["flows"] == 0.0, lake
    assert min(lake["taken"]) >= 1


def test_gl41_dam_break_front_runs_as_the_compute_grids(gl41, ctx):
    """A dry-bed dam break on GL 4.1 with inertia: the compute grid's depths along the flume (to float
    precision) and so its front, which runs well ahead of the classic pipes' toward Ritter's; the water
    equal to its ledger."""
    compute, _ = _dam_break(ctx, hydro.WaterGrid, True)
    fragment = {key: np.array(value["depth"]) for key, value in ((k, gl41["dam"][k]) for k in ("True", "False"))}
    np.testing.assert_allclose(fragment["True"], compute, rtol=0, atol=1e-5)
    front, classic = _front(fragment["True"]), _front(fragment["False"])
    assert front == _front(compute)
    assert front > 0.6 and classic < 0.45, (front, classic)
    assert all(value["ledger_gap"] < 1e-6 for value in gl41["dam"].values())
