"""Gauges on the fragment backend (hydro/water_fragment.py's _FragmentGauges, fragment/gauge.frag): what
crosses a line summed after every substep as float pairs, read one call late from a fenced pixel buffer.
On an OpenGL 4.1 context with no compute shaders (a child process, as tests/test_water_fragment.py)
against the float64 statement (hydro.reference.probes); here against the compute grids' gauges on the
same water, on both lattices; bad lines refused by name with the grid unchanged."""
import json
import math

import numpy as np
import pytest

import hydro
from hydro import _native
from hydro.reference import probes
from hydro.water_fragment import GAUGE_ROW, FragmentHexWaterGrid, FragmentWaterGrid
from hydro.water_probes import MAX_GAUGES
from test_water_fragment import _flushed, _same, gl41_checked, refusals
from test_water_game_calls import gauged, removed_gauge_and_its_slot
import water_cases
from water_cases import assert_same_bits, assert_same_ledger, random_state

SHAPE = (14, 18)
KINDS = {"square": FragmentWaterGrid, "hex": FragmentHexWaterGrid}
COMPUTE = {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}
CALLS = [0.05, 0.04, 0.06, 0.05, 0.03, 0.05]
# volumes here are of order 1 m^3: float pairs keep about 44 bits of their sums, so they agree to this
VOLUME_TOLERANCE = 1e-12


def _flow_names(kind):
    return ("flow_x", "flow_y", "flow_z")[:2 + (kind == "hex")]


def _gauged(ctx, cls, seed=5, **params):
    """tests/test_water_game_calls.py's case: an inflow span on the left, a level side and an outflow span,
    gauges across the interior, along the left edge (its boundary faces, the inflow), on a diagonal and
    along the top edge."""
    terrain, water = random_state(np.random.default_rng(seed), SHAPE)
    return gauged(cls(ctx, terrain, water=water, **params))


def _bad_lines(g):
    """(argument named, call) for add_gauge calls that must be refused."""
    ny, nx = g.shape
    return [("p0", lambda: g.add_gauge((nx - 0.4, 1.0), (1.0, 1.0))),
            ("p1", lambda: g.add_gauge((1.0, 1.0), (1.0, -0.6))),
            ("p1", lambda: g.add_gauge((1.0, 1.0), (1.0, 1.0))),
            ("p0", lambda: g.add_gauge("here", (1.0, 1.0))),
            ("p1", lambda: g.add_gauge((1.0, 1.0), (float("nan"), 2.0))),
            ("p0", lambda: g.add_gauge((1.0, 2.0, 3.0), (1.0, 1.0))),
            ("p0", lambda: g.add_gauge((0.2, 0.2), (0.4, 0.3)))]       # between cell centres: cuts no pipe


def _snapshot(g, kind):
    return {**{name: getattr(g, name) for name in ("water",) + _flow_names(kind)}, "sim_time": g.sim_time,
            "iteration": g.iteration, "gauges": [(gauge.line, gauge.volume, gauge.discharge) for gauge in g.gauges]}


def _refusals(g, kind):
    """[name, error, message] per bad line, and what changed of the grid (nothing, if all is well)."""
    before = _snapshot(g, kind)
    refused = refusals(_bad_lines(g))
    after = _snapshot(g, kind)
    return refused, [k for k in before if not _same(before[k], after[k])]


def _channel():
    """A river bed 6 cells wide down a slope of 0.02 between banks of 3, 40 cells long."""
    y, x = np.mgrid[0:10, 0:40]
    return np.where((y < 2) | (y > 7), 3.0, 1.0 - 0.02 * x)


def _river(ctx, cls, hexagonal):
    """A river of 1 m^3/s into a sea and a gauge across it (through no cell centre)."""
    g = cls(ctx, _channel(), friction=0.05)
    g.set_boundary("left", "inflow", 1.0, span=(2, 8))
    g.set_boundary("right", "level", 0.0)
    across = ((20.2, 1.5), (16.2, 8.5)) if hexagonal else ((20.5, 1.5), (20.5, 8.5))     # hex: axial
    return g, across


def _river_reading(g, gauge, calls, mean_over=80):
    """After `calls` steps of 0.25 s, the gauge's mean discharge over `mean_over` more, and its last."""
    for _ in range(calls):
        g.step(0.25)
    volume, time = gauge.volume, gauge.sim_time
    for _ in range(mean_over):
        g.step(0.25)
    return (gauge.volume - volume) / (gauge.sim_time - time), gauge.discharge


def child():
    """In the GL 4.1 process: per lattice the gauges' faces, their readings before each call of one
    substep and the flows after it, the refusals of bad lines, a river's gauge; as JSON on stdout."""
    import moderngl
    ctx = moderngl.create_standalone_context(backend="egl", require=410)
    out = {"version": ctx.version_code, "vendor": ctx.info["GL_VENDOR"], "kinds": {}}
    for kind in KINDS:
        g, gauges = _gauged(ctx, COMPUTE[kind])
        result = {"backend": g.backend, "faces": [[a.tolist() for a in gauge.faces] for gauge in gauges],
                  "read": [], "flows": [], "times": []}
        for dt in CALLS:
            result["read"].append([[gauge.volume, gauge.discharge, gauge.sim_time] for gauge in gauges])
            g.step(dt, substeps=1)
            result["times"].append([g.sim_time, dt])
            result["flows"].append([getattr(g, name).tolist() for name in _flow_names(kind)])
        result["read"].append([[gauge.volume, gauge.discharge, gauge.sim_time] for gauge in gauges])
        result["refused"], result["changed"] = _refusals(g, kind)
        g.release()
        river, across = _river(ctx, COMPUTE[kind], kind == "hex")
        result["river"] = _river_reading(river, river.add_gauge(*across), 500)
        river.release()
        out["kinds"][kind] = result
    out["error"] = ctx.error
    print(json.dumps(out))


@pytest.fixture(scope="module")
def gl41():
    return gl41_checked("test_water_fragment_gauges")


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_a_gauge_is_its_faces_flows_summed_every_substep_one_call_late(gl41, kind):
    """On GL 4.1, after each call of one substep the float64 statement sums each gauge's faces (sign q dt):
    a gauge's volume is their sum over every call but the latest, its discharge the one before the
    latest's volume over its dt, its sim_time that call's end; all 0 before the second call."""
    got = gl41["kinds"][kind]
    assert got["backend"] == "fragment"
    faces = [list(zip(*gauge)) for gauge in got["faces"]]
    done = [[] for _ in faces]
    for call, (flows, (sim_time, dt)) in enumerate(zip(got["flows"], got["times"])):
        flows = [np.array(f, np.float32) for f in flows]
        for crossed, gauge_faces in zip(done, faces):
            crossed.append(probes.gauge_volume(gauge_faces, flows, np.float32(dt)))
        read = got["read"][call + 1]            # after this call: of the one before it
        for (volume, discharge, when), crossed, gauge_faces in zip(read, done, faces):
            if call == 0:
                assert (volume, discharge, when) == (0.0, 0.0, 0.0)
                continue
            scale = sum(abs(float(flows[k][j, i])) for k, i, j, _ in gauge_faces) * dt * call
            assert volume == pytest.approx(math.fsum(crossed[:-1]), abs=1e-12 * scale + 1e-300)
            assert discharge == pytest.approx(crossed[-2] / got["times"][call - 1][1], abs=1e-12 * scale / dt + 1e-300)
            assert when == got["times"][call - 1][0]
    assert got["read"][0] == [[0.0, 0.0, 0.0]] * len(faces)
    last = got["read"][-1]
    assert abs(last[1][0]) > 0.1 and abs(last[0][0]) > 1e-3         # they count something


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_bad_lines_are_refused_by_name_and_change_nothing(gl41, kind):
    got = gl41["kinds"][kind]
    assert len(got["refused"]) == 7                  # _bad_lines's
    for name, error, message in got["refused"]:
        assert error in ("ValueError", "TypeError"), (name, error, message)
        assert message.startswith(name), (name, message)
    assert got["changed"] == []


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_a_gauge_on_a_river_reads_its_inflow(gl41, kind):
    mean, last = gl41["kinds"][kind]["river"]
    assert mean == pytest.approx(1.0, rel=0.01) and last == pytest.approx(1.0, rel=0.02)


# ----------------------------------------------------------------------------- in the test context

@pytest.mark.parametrize("params", [{}, {"inertia": True, "manning": 0.03}], ids=["pipes", "inertia"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_gauges_read_what_the_compute_grids_read(ctx, kind, params):
    """On the same water (the cell-wise kernel's bits), every gauge reads what the compute grid's reads
    (fp64 there, float pairs here), in calls of 1 to 5 substeps and planned ones, one call late."""
    fragment, gauges = _gauged(ctx, KINDS[kind], **params)
    compute, expected = _gauged(ctx, COMPUTE[kind], kernel="cells", **params)
    for dt, substeps in [(0.05, 1), (0.1, 3), (0.08, 2), (0.1, 5), (0.1, None), (0.07, 4), (0.2, None)]:
        fragment.step(dt, substeps)
        compute.step(dt, substeps)
        for name in ("water",) + _flow_names(kind):
            assert_same_bits(_flushed(getattr(fragment, name)), _flushed(getattr(compute, name)), err_msg=name)
        for gauge, want in zip(gauges, expected):
            assert gauge.volume == pytest.approx(want.volume, rel=0, abs=VOLUME_TOLERANCE)
            assert gauge.discharge == pytest.approx(want.discharge, rel=0, abs=VOLUME_TOLERANCE / 0.05)
            assert gauge.sim_time == want.sim_time
    assert abs(gauges[1].volume) > 0.1 and abs(gauges[0].volume) > 1e-3
    for gauge, want in zip(gauges, expected):        # water_probes.line_faces's, as the compute grid's
        assert all(np.array_equal(a, b) for a, b in zip(gauge.faces, want.faces))
    fragment.release()
    compute.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_with_fixed_substeps_only_calls_that_advance_the_water_count(ctx, kind):
    """With fixed_substep a call too short for a substep records nothing: the gauges read what the compute
    grid's read, of the same calls."""
    fragment, gauges = _gauged(ctx, KINDS[kind], fixed_substep=0.02)
    compute, expected = _gauged(ctx, COMPUTE[kind], kernel="cells", fixed_substep=0.02)
    for dt in (0.05, 0.01, 0.005, 0.03, 0.01, 0.045, 0.001, 0.04):
        assert fragment.step(dt) == compute.step(dt)
        for gauge, want in zip(gauges, expected):
            assert (gauge.volume, gauge.discharge, gauge.sim_time) == pytest.approx(
                (want.volume, want.discharge, want.sim_time), rel=0, abs=VOLUME_TOLERANCE / 0.02)
    assert gauges[1].volume != 0.0
    fragment.release()
    compute.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_gauges_change_no_water(ctx, kind):
    """The gauges' pass reads the flows and writes only its own sums: with gauges the water, flows and
    ledger are the bits they are without."""
    g, _ = _gauged(ctx, KINDS[kind], seed=6)
    plain, _ = _gauged(ctx, KINDS[kind], seed=6)
    for gauge in plain.gauges:
        gauge.remove()
    assert plain.gauges == ()
    for n in (1, 3, 2, None, 5):
        g.step(0.1, n)
        plain.step(0.1, n)
    for name in ("water",) + _flow_names(kind):
        assert_same_bits(getattr(g, name), getattr(plain, name), err_msg=name)
    assert_same_ledger(g.ledger(), plain.ledger())
    g.release()
    plain.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_gauge_on_a_river_reads_its_inflow_and_a_gate_stops_and_restores_it(ctx, kind):
    """As the compute grids' test: at steady state a gauge across the river reads its 1 m^3/s inflow (its
    discharge, and the mean of its volume over 20 s), reversed it reads the opposite; a gate closed
    upstream stops it while the water piles up behind, every cubic metre on the ledger; opened again,
    the river and the reading come back."""
    g, across = _river(ctx, KINDS[kind], kind == "hex")
    gauge = g.add_gauge(*across)
    mean, last = _river_reading(g, gauge, 500)
    assert mean == pytest.approx(1.0, rel=0.01) and last == pytest.approx(1.0, rel=0.02)
    reversed_gauge = g.add_gauge(*across[::-1])
    g.step(0.25)
    g.step(0.25)
    assert reversed_gauge.discharge == pytest.approx(-gauge.discharge, rel=1e-12)
    reversed_gauge.remove()
    gate = _channel()[2:8, 10:12].copy()
    g.set_terrain(np.full((6, 2), 3.0), origin=(10, 2))
    behind = g.sample([[5.0, 5.0]])[0, 1]
    mean, last = _river_reading(g, gauge, 300)
    assert abs(mean) < 1e-3 and abs(last) < 1e-3
    assert g.sample([[5.0, 5.0]])[0, 1] > behind + 0.05
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
    g.set_terrain(gate, origin=(10, 2))
    mean, last = _river_reading(g, gauge, 500)
    assert mean == pytest.approx(1.0, rel=0.01) and last == pytest.approx(1.0, rel=0.02)
    g.release()


def test_removed_gauges_read_no_more_and_their_slots_start_again(ctx):
    """A removed gauge raises when read; a gauge added in its slot starts from 0 and counts only the calls
    after it was added; a grid holds MAX_GAUGES gauges, their faces in more than one row of the faces
    texture, each reading what the compute grid's reads."""
    slope = 0.05 * np.mgrid[0:8, 0:40][0]                # the water runs toward -y too
    grids = [cls(ctx, slope, water=np.full((8, 40), 0.3)) for cls in (FragmentWaterGrid, hydro.WaterGrid)]
    g, compute = grids
    for grid in grids:
        grid.set_boundary("left", "inflow", 1.0)
    removed_gauge_and_its_slot(g).remove()
    compute.step(0.5)                       # both grids' water as it is now
    compute.water, compute.flow_x, compute.flow_y = g.water, g.flow_x, g.flow_y
    compute.sim_time = g.sim_time
    lines = [((0.5 + (k % 30), -0.5), (0.5 + (k % 30), 7.5)) if k % 2 else ((-0.5, 0.5 + k % 7), (39.5, 0.5 + k % 7))
             for k in range(MAX_GAUGES)]
    many = [[grid.add_gauge(*line) for line in lines] for grid in grids]
    assert sum(len(gauge.faces[0]) for gauge in many[0]) > GAUGE_ROW       # more than a row of faces
    with pytest.raises(RuntimeError, match=f"it has {MAX_GAUGES} gauges"):
        g.add_gauge((0.5, -0.5), (0.5, 7.5))
    assert len(g.gauges) == MAX_GAUGES
    for _ in range(3):
        for grid in grids:
            grid.step(0.1, 2)
    rel = 0 if water_cases.BITWISE else water_cases.GPU_TOLERANCE      # a GPU's grids step apart
    for gauge, want in zip(*many):
        assert gauge.volume == pytest.approx(want.volume, rel=rel, abs=VOLUME_TOLERANCE)
        assert gauge.discharge == pytest.approx(want.discharge, rel=rel, abs=VOLUME_TOLERANCE / 0.1)
    assert many[0][0].volume != 0.0 and many[0][1].volume != 0.0
    for grid in grids:
        grid.release()
    with pytest.raises(RuntimeError, match="after release"):
        many[0][0].volume


@pytest.mark.parametrize("kind", list(KINDS))
def test_gauges_read_back_at_once_where_there_are_no_fences(ctx, monkeypatch, kind):
    """Where moderngl gives no function loader (no fences), a gauge's record is read when its call ends:
    the same values as through the ring."""
    fenced, gauges = _gauged(ctx, KINDS[kind])
    monkeypatch.setattr(_native, "gl_functions", lambda *args: None)
    g, unfenced = _gauged(ctx, KINDS[kind])
    assert g._gauges.ring is None and fenced._gauges.ring is not None
    for n in (1, 3, None, 2):
        fenced.step(0.1, n)
        g.step(0.1, n)
        for a, b in zip(gauges, unfenced):
            assert (a.volume, a.discharge, a.sim_time) == (b.volume, b.discharge, b.sim_time)
    assert gauges[1].volume != 0.0
    g.release()
    fenced.release()


def test_release_frees_the_gauges_objects(ctx, gl_objects):
    g, gauges = _gauged(ctx, FragmentHexWaterGrid)
    g.step(0.1)
    gauges[0].remove()
    g.add_gauge((2.0, 2.0), (4.0, 4.0))
    g.step(0.1)
    assert gauges[1].volume != 0.0
    g.release()
    g.release()
    assert gl_objects() == []
    with pytest.raises(RuntimeError, match="after release"):
        gauges[1].volume
