"""Sleeping tiles on the fragment backend (hydro/water_fragment.py's _FragmentSleep): FragmentWaterGrid and
FragmentHexWaterGrid skip the tiles where nothing changed and give the bits of computing every tile
(water, flows, ledger), whatever wakes them: a front running into dry land, brushes, the terrain, flows
and water set, boundaries, the water cycle. The checks run on a GL 4.1 core context with no compute
shaders (and a GL 3.3 one, whose passes compile as GLSL 3.30: test_water_fragment's poses) in a child
process that prints its results as JSON; the tiles the plan computes are held to hydro.reference.sleep
in the test context. Grids of 16-cell tiles (the test seam), small enough for llvmpipe, large enough
that most tiles sleep."""
import numpy as np
import pytest

import hydro
from hydro.reference import sleep as ref_sleep
from hydro.water_fragment import SLEEP_CHECK, FragmentHexWaterGrid, FragmentWaterGrid
from sleep_cases import EDITS, MODELS, SHAPES, TILE, basin, cycle_steps, dam
from test_water_fragment import POSES, gl41_child, gl41_context, refusals
from water_cases import assert_same_bits, assert_same_ledger

KINDS = {"square": FragmentWaterGrid, "hex": FragmentHexWaterGrid}


def twins(ctx, kind, terrain, water, **params):
    """The same fragment grid sleeping and computing every tile, with TILE-cell tiles, the sleeping one
    sleeping whatever fraction of its tiles moves (test_a_call_stops_sleeping_where_most_tiles_move)."""
    grids = [KINDS[kind](ctx, terrain, water=water, sleep=sleep, **params) for sleep in (True, False)]
    for g in grids:
        g._set_sleep_tile(TILE)
    grids[0]._sleeping.dense_above = 1.0
    return grids


def state(g) -> list:
    hexagonal = isinstance(g, FragmentHexWaterGrid)
    return [g.water] + [getattr(g, name) for name in ("flow_x", "flow_y", "flow_z")[:2 + hexagonal]]


def differences(a, b) -> list:
    """What differs between twins a and b: the arrays of state() not the same to the bit, the ledger."""
    names = ["water", "flow_x", "flow_y", "flow_z"]
    out = [name for name, x, y in zip(names, state(a), state(b))
           if not np.array_equal(np.asarray(x, np.float32).view(np.uint32), np.asarray(y, np.float32).view(np.uint32))]
    return out + ["ledger"] * (a.ledger() != b.ledger())


def step_twins(a, b, dt, calls, before=None) -> tuple[list, list]:
    """`calls` step(dt) calls of twins a and b, each after `before(g, call)` where given: what differed
    after each call, and a's awake fractions."""
    differs, awake = [], []
    for call in range(calls):
        for g in (a, b):
            if before is not None:
                before(g, call)
            g.step(dt)
        differs.append(differences(a, b))
        awake.append(a.awake)
    return differs, awake


def release(*grids):
    for g in grids:
        g.release()


# ------------------------------------------------------------------------- the cases, run in the child

def dam_break(ctx, kind, model, shape):
    """Water in a corner let go over dry land, ten calls: what differed after each, and the awake fractions."""
    terrain, water = dam(shape)
    a, b = twins(ctx, kind, terrain, water, **MODELS[model])
    out = dict(zip(("differs", "awake"), step_twins(a, b, 1.0, 10)), dense=b.awake)
    release(a, b)
    return out


def edit_wakes_lake(ctx, kind, edit):
    """A still lake asleep, then an edit and four calls: the awake fraction before, what differed after
    each call, the awake fraction after, whether the edit moved the lake's water."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water)
    for _ in range(3):
        for g in (a, b):
            g.step(0.2)
    out = {"asleep": a.awake}
    lake = b.water[:, :38].copy()
    for g in (a, b):
        EDITS[edit](g)
    out["differs"], awake = step_twins(a, b, 0.2, 4)
    out["awake"] = awake[-1]
    out["moved"] = not np.array_equal(b.water[:, :38], lake)
    release(a, b)
    return out


def tide(ctx, kind):
    """A sea at rest against a level side, the level raised every call."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water)
    for g in (a, b):
        g.set_boundary("left", "level", 1.5)            # the lake's own level: nothing moves
        g.step(0.2)
        g.step(0.2)
    out = {"asleep": a.awake}
    sea = b.water[:, :38].copy()
    out["differs"], _ = step_twins(a, b, 0.2, 6, lambda g, call: g.set_boundary("left", "level", 1.55 + 0.05 * call))
    out["rose"] = float(b.water[:, :38].sum(dtype=np.float64) - sea.sum(dtype=np.float64))
    release(a, b)
    return out


def water_cycle(ctx, kind):
    """Evaporation, a spring on dry land, a drain in the lake, rain on a patch, a spring removed, then
    rain everywhere: what differed and the awake fraction after each."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water)
    steps = cycle_steps(a.shape) + [("rain everywhere", lambda g: g.__setattr__("rain", 1e-4))]
    out = {}
    for what, change in steps:
        for g in (a, b):
            change(g)
            g.step(0.3)
            g.step(0.3)
        out[what] = {"differs": differences(a, b), "awake": a.awake}
    ledger = a.ledger()
    out["ledger_error"] = abs(a.volume() - ledger["expected"]) / ledger["expected"]
    release(a, b)
    return out


def film(ctx, kind):
    """A thin film evaporating from a flat field beside a still lake: its tiles dry out and sleep, their
    records still holding what evaporation took, which the ledger must count once."""
    terrain = np.full((64, 80), 1.0, np.float32)
    water = np.zeros_like(terrain)
    water[:, :10] = 0.5
    terrain[:, 10:14] = 3.0
    water[10:50, 40:70] = 2e-5
    a, b = twins(ctx, kind, terrain, water)
    for g in (a, b):
        g.evaporation = 1e-4
    out = dict(zip(("differs", "awake"), step_twins(a, b, 0.3, 6)))
    ledger = a.ledger()
    out["ledger_error"] = abs(a.volume() - ledger["expected"]) / ledger["expected"]
    out["dry"] = float(b.water[10:50, 40:70].max())
    release(a, b)
    return out


def erosion(ctx, kind):
    """Erosion on for a call (every tile computed), then off for two."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water)
    for g in (a, b):
        g.erosion = hydro.Erosion()
        g.step(0.3)
    out = {"eroding": a.awake, "terrain": np.array_equal(a.terrain.view(np.uint32), b.terrain.view(np.uint32))}
    for g in (a, b):
        g.erosion = None
        g.step(0.3)
        g.step(0.3)
    out["after"] = a.awake
    out["differs"] = differences(a, b) + ["terrain"] * (not np.array_equal(a.terrain, b.terrain))
    release(a, b)
    return out


def still_and_dry(ctx, kind):
    """A still lake and dry land, no pond: every tile the first call, none after; nothing moves."""
    terrain, water = basin()
    water[:, 60:] = 0.0
    g = KINDS[kind](ctx, terrain, water=water)
    g._set_sleep_tile(TILE)
    g.step(0.1)
    out = {"first": g.awake}
    before = g.water
    g.step(0.5)
    out["then"] = g.awake
    out["still"] = bool(np.array_equal(g.water, before))
    g.release()
    return out


def sleep_setting(ctx):
    """sleep= refused where not a bool, by name; the property's default, refusals and setting."""
    terrain, water = basin((40, 40))
    out = {"refused": refusals([(repr(v), lambda v=v: FragmentWaterGrid(ctx, terrain, water=water, sleep=v))
                                for v in ("yes", 1, None)])}
    g = FragmentWaterGrid(ctx, terrain, water=water)
    out["default"] = [g.sleep, g.awake]
    out["set"] = refusals([("1", lambda: setattr(g, "sleep", 1))])
    out["kept"] = g.sleep
    g.sleep = False
    g.step(0.1)
    out["off"] = [g.sleep, g.awake]
    g.release()
    return out


def child():
    """In the GL 4.1 (or 3.3) process: every case's results, as JSON on stdout; the GL 3.3 pose runs the
    classic model's dam breaks, one edit and the water cycle."""
    import json
    import os
    ctx, out = gl41_context()
    full = os.environ.get("MESA_GL_VERSION_OVERRIDE") == "4.1"
    models = list(MODELS) if full else ["classic"]
    out["gather"] = FragmentWaterGrid(ctx, np.zeros((8, 8), np.float32))._sleeping.gather
    out["dam"] = {f"{kind} {model} {shape}": dam_break(ctx, kind, model, SHAPES[shape])
                  for kind in KINDS for model in models for shape in SHAPES}
    edits = list(EDITS) if full else ["add_water"]
    out["edits"] = {f"{kind} {edit}": edit_wakes_lake(ctx, kind, edit) for kind in KINDS for edit in edits
                    if full or kind == "square"}
    out["cycle"] = {kind: water_cycle(ctx, kind) for kind in KINDS}
    out["film"] = {kind: film(ctx, kind) for kind in KINDS}
    if full:
        out["tide"] = {kind: tide(ctx, kind) for kind in KINDS}
        out["erosion"] = {kind: erosion(ctx, kind) for kind in KINDS}
        out["still"] = {kind: still_and_dry(ctx, kind) for kind in KINDS}
        out["setting"] = sleep_setting(ctx)
    out["error"] = ctx.error
    print(json.dumps(out))


@pytest.fixture(scope="module", params=list(POSES))
def gl41(request):
    """The GL 4.1 (and GL 3.3) process's results."""
    out = gl41_child("test_water_fragment_sleep", pose=request.param)
    assert out["error"] == "GL_NO_ERROR"
    return out


@pytest.fixture(scope="module")
def gl41_full(gl41):
    if gl41["pose"] != "4.1":
        pytest.skip("the GL 4.1 pose runs this case")
    return gl41


# ----------------------------------------------------------------------------------- on GL 4.1 and 3.3

def test_gl41_reads_two_by_two_texels_where_the_context_can(gl41):
    """GLSL 4.10's textureGather on GL 4.1; on GL 3.3 GL_ARB_texture_gather's, which llvmpipe has."""
    assert gl41["gather"] == {"4.1": 1, "3.3": 2}[gl41["pose"]]


def test_gl41_a_dam_break_into_dry_land_gives_the_bits_of_every_tile(gl41):
    for case, run in gl41["dam"].items():
        assert run["differs"] == [[]] * 10, case
        assert run["dense"] == 1.0, case
        awake = run["awake"]
        if "whole-tiles" in case:       # (the ragged grid is a few tiles, the water in most of them)
            assert awake[1] < 0.4, (case, awake)            # the dry land beyond the front slept
            assert awake[-1] > awake[1] + 0.2, (case, awake)    # and woke as the front came


def test_gl41_an_edit_wakes_the_still_lake_it_reaches(gl41):
    for case, run in gl41["edits"].items():
        assert run["asleep"] < 0.3, case        # the still lake and the dry land slept; the pond did not
        assert run["differs"] == [[]] * 4, case
        assert run["awake"] > run["asleep"], case
        assert run["moved"], f"{case}: the edit moved no water: the case tests nothing"


def test_gl41_the_water_cycle_keeps_awake_the_tiles_it_works_on(gl41):
    for kind, run in gl41["cycle"].items():
        for what in ("evaporation", "spring", "drain", "rain field", "spring off", "rain everywhere"):
            assert run[what]["differs"] == [], (kind, what)
        assert run["evaporation"]["awake"] < 0.8, kind      # before the water they add reaches everywhere
        assert run["spring"]["awake"] < 1.0 and run["drain"]["awake"] < 1.0, kind
        assert run["rain everywhere"]["awake"] == 1.0, kind
        assert run["ledger_error"] < 1e-6, kind


def test_gl41_a_dried_film_sleeps_and_its_evaporation_is_booked_once(gl41):
    """What the film's records took is added to the ledger once, though the move pass no longer rewrites
    the records of its sleeping tiles (sleep_record.frag clears them in both textures)."""
    for kind, run in gl41["film"].items():
        assert run["dry"] == 0.0, kind
        assert run["differs"] == [[]] * 6, kind
        assert run["awake"][-1] < 0.5, kind
        assert run["ledger_error"] < 1e-7, kind


def test_gl41_a_tide_on_a_still_sea_moves_it(gl41_full):
    for kind, run in gl41_full["tide"].items():
        assert run["asleep"] < 0.5, kind
        assert run["differs"] == [[]] * 6, kind
        assert run["rose"] > 0.0, f"{kind}: the tide moved no water: the case tests nothing"


def test_gl41_erosion_computes_every_tile(gl41_full):
    for kind, run in gl41_full["erosion"].items():
        assert run["eroding"] == 1.0 and run["terrain"], kind
        assert run["after"] < 1.0, kind
        assert run["differs"] == [], kind


def test_gl41_a_still_lake_and_dry_land_cost_nothing(gl41_full):
    for kind, run in gl41_full["still"].items():
        assert run == {"first": 1.0, "then": 0.0, "still": True}, kind


def test_gl41_sleep_is_checked_and_settable(gl41_full):
    run = gl41_full["setting"]
    for name, error, message in run["refused"]:
        assert error == "TypeError" and message.startswith("sleep: expected True"), (name, message)
    assert run["default"] == [True, 1.0]
    assert run["set"][0][1] == "TypeError" and "sleep" in run["set"][0][2]
    assert run["kept"] is True
    assert run["off"] == [False, 1.0]


# ----------------------------------------------------------------------------------- in the test context

@pytest.mark.parametrize("kind", list(KINDS))
def test_the_tiles_computed_are_those_the_plan_says(ctx, kind):
    """g.awake against hydro.reference.sleep over calls of one substep: the tiles that changed in the
    substep before and those beside them, those beside a side that is not a wall, and every tile after
    the grid is made and after a side changes kind."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water)
    tiles = -(-a.ny // TILE) * -(-a.nx // TILE)
    before = state(b)
    open_cells = None
    for call in range(12):
        if call >= 5:                            # a side opened, then its discharge changed every call
            for g in (a, b):
                g.set_boundary("left", "inflow", 2.0 + 0.1 * call, span=(60, 80))
            open_cells = np.zeros(a.shape, bool)
            open_cells[60:80, 0] = True
        for g in (a, b):
            g.step(0.05, substeps=1)
        after = state(b)
        if call in (0, 5):
            expected = 1.0                       # made, or a side changed kind: every tile
        else:
            expected = ref_sleep.awake_tiles(changed, TILE, open_cells).sum() / tiles
        assert a.awake == pytest.approx(expected, abs=1e-12), call
        changed = ref_sleep.changed_cells(before, after)
        before = after
    assert differences(a, b) == []
    assert 0.0 < a.awake < 0.8
    release(a, b)


@pytest.mark.parametrize("kind", list(KINDS))
def test_without_texture_gather_the_same_bits(ctx, kind):
    """A context with neither GLSL 4 nor GL_ARB_texture_gather flags the changes with texelFetch: the same
    bits and tiles, with inertia and the water cycle's records too."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water, **MODELS["inertia"])
    a._sleeping.gather = 0
    for g in (a, b):
        g.add_source(100, 10, 2.0, 0.5)
        g.evaporation = 1e-6
    awake = []
    for _ in range(4):
        for g in (a, b):
            g.step(0.3)
        awake.append(a.awake)
        assert differences(a, b) == []
    assert awake[-1] < 1.0
    release(a, b)


def test_gauges_and_samples_see_the_same_water(ctx):
    """A gauge's pass after every substep and a sample between calls read the water the sleeping tiles
    left: the same as computing every tile."""
    terrain, water = basin()
    a, b = twins(ctx, "square", terrain, water)
    gauges = [g.add_gauge((39.5, 20.0), (39.5, 60.0)) for g in (a, b)]
    for g in (a, b):
        g.set_terrain(np.full((30, 4), 0.5, np.float32), origin=(38, 25))    # the ridge breached
    points = np.array([[30.0, 40.0], [50.5, 30.2], [95.0, 80.0]], np.float32)
    for _ in range(4):
        for g in (a, b):
            g.step(0.3)
        assert differences(a, b) == []
        assert_same_bits(a.sample(points), b.sample(points))
    assert a.awake < 1.0 and gauges[1].volume != 0.0
    assert gauges[0].volume == gauges[1].volume
    release(a, b)


def test_a_fixed_substep_and_sleep_switched_mid_run(ctx):
    """fixed_substep's calls, sleep turned off and on between them (the grid computes every tile, then
    plans again from all of them awake): the same bits."""
    terrain, water = basin()
    a, b = twins(ctx, "square", terrain, water, fixed_substep=0.05)
    for call in range(6):
        a.sleep = call not in (2, 3)
        for g in (a, b):
            g.step(0.12)
        assert differences(a, b) == [], call
        assert (a.awake == 1.0) if call in (2, 3) else (a.awake < 1.0), call
    assert_same_ledger(a.ledger(), b.ledger())
    release(a, b)


def test_every_tile_changing_compares_the_water_one_substep_in_sleep_check(ctx):
    """A film evaporating everywhere changes every tile at every substep: the water is compared in one
    substep of SLEEP_CHECK only, every tile awake between; the first compared after the film has dried
    lets every tile sleep. The same bits throughout."""
    terrain = np.ones((64, 80), np.float32)
    water = np.full_like(terrain, 2e-5)                # dry after four substeps
    a, b = twins(ctx, "square", terrain, water, fixed_substep=0.05)
    for g in (a, b):
        g.evaporation = 1e-4
    differs, awake = step_twins(a, b, 0.3, 4)          # six substeps a call
    assert differs == [[]] * 4
    assert b.water.max() == 0.0
    # the first substep woken, the next seven unchecked; the eighth compared: the ninth and on sleep
    assert SLEEP_CHECK == 8 and awake == [1.0, pytest.approx(2 / 6), 0.0, 0.0], awake
    release(a, b)


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_call_stops_sleeping_where_most_tiles_move(ctx, kind):
    """SLEEP_DENSE_ABOVE (here 0.2): a sleeping call that computed more of its tiles than that makes the
    calls from two later compute every tile (planned from that call's count, whatever the GPU's timing),
    for SLEEP_RETRY (here 4) calls; a call that started with every tile woken is not judged. The same
    bits throughout."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water)
    a._sleeping.dense_above, a._sleeping.retry = 0.2, 4
    awake = []
    for call in range(12):
        for g in (a, b):
            g.step(0.2, substeps=4)
        awake.append(a.awake)
        assert differences(a, b) == [], call
    # call 0 woke every tile; calls 1 and 2 computed more than a fifth (the pond and its shore): calls 3
    # to 7 dense; 8 tries again (woken, not judged), 9 is judged, so 11 is dense again
    slept = [fraction < 1.0 for fraction in awake]
    assert slept == [True] * 3 + [False] * 5 + [True] * 3 + [False], awake
    assert 0.2 < awake[1] < 1.0
    release(a, b)


def test_release_frees_the_sleeping_tiles(ctx, gl_objects):
    terrain, water = basin((40, 40))
    g = FragmentWaterGrid(ctx, terrain, water=water)
    g._set_sleep_tile(TILE)
    g.step(0.2)
    g.release()
    assert gl_objects() == []
