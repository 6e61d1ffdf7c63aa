"""Point samples on the fragment backend (hydro/water_fragment.py, fragment/sample.frag): common/sample.glsl's
sample_point() in a pass of one texel a point, against the float64 statement (hydro.reference.probes) on
an OpenGL 4.1 context with no compute shaders (a child process, as tests/test_water_fragment.py) and
against the compute grids' samples of the same water here, to the bit on CPU rasterisers; bad points
refused by name with the grid unchanged; the flow textures a game's shaders read."""
import json

import numpy as np
import pytest

import hydro
from hydro import _native
from hydro.reference import probes
from hydro.water_fragment import FragmentHexWaterGrid, FragmentWaterGrid
from hydro.water_probes import MAX_POINTS, SAMPLE_DRY_DEPTH
from test_water_fragment import _flushed, _same, gl41_checked, refusals
from water_cases import assert_same_bits, random_state

SHAPE = (11, 14)
CELL_SIZE = 2.0
KINDS = {"square": FragmentWaterGrid, "hex": FragmentHexWaterGrid}
COMPUTE = {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}


def _flow_names(kind):
    return ("flow_x", "flow_y", "flow_z")[:2 + (kind == "hex")]


def _moving_grid(ctx, cls, seed=11, **kwargs):
    """A grid of `cls` whose water moves: a river in on the left, a sea level on the right, a few steps."""
    terrain, water = random_state(np.random.default_rng(seed), SHAPE)
    g = cls(ctx, terrain, water=water, cell_size=CELL_SIZE, **kwargs)
    g.set_boundary("left", "inflow", 2.0)
    g.set_boundary("right", "level", 0.8)
    g.step(0.3, 3)
    return g


def _points(seed=5, count=300):
    """Random points within half a cell of the cell centres, the grid's corners and edges, and last four
    cell centres off the last row and column (where each point is its lower corner's cell, exactly)."""
    ny, nx = SHAPE
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform((-0.5, -0.5), (nx - 0.5, ny - 0.5), (count, 2)),
                           [[-0.5, -0.5], [nx - 0.5, ny - 0.5], [-0.5, ny - 0.5], [nx - 1, 0], [3.5, -0.5],
                            [nx - 1, ny - 1], [0, 0], [5, 7], [nx - 2, 3], [3, ny - 2]]]).astype(np.float32)


def _arrays(g, kind):
    return {name: getattr(g, name) for name in ("terrain", "water") + _flow_names(kind)}


def _expected(arrays, kind, points, face_width):
    flows = [arrays[name] for name in _flow_names(kind)]
    return probes.sample(arrays["terrain"], arrays["water"], flows, points, face_width,
                         SAMPLE_DRY_DEPTH * CELL_SIZE)


def _assert_samples(values, expected):
    """As tests/test_water_game_calls.py: depths and surfaces to float precision of the largest, velocities
    to 1e-5 of the fastest."""
    values = np.asarray(values)
    assert values.shape == expected.shape
    depth_scale = max(1.0, float(np.abs(expected[:, :2]).max()))
    np.testing.assert_allclose(values[:, :2], expected[:, :2], rtol=0, atol=1e-6 * depth_scale)
    speed_scale = max(1e-6, float(np.abs(expected[:, 2:]).max()))
    np.testing.assert_allclose(values[:, 2:], expected[:, 2:], rtol=0, atol=1e-5 * speed_scale)


def _bad_points(g):
    """(argument named, call) for sample calls that must be refused."""
    ny, nx = SHAPE
    return [("points", lambda: g.sample([[nx - 0.4, 1.0]])), ("points", lambda: g.sample([[1.0, -0.6]])),
            ("points", lambda: g.sample([[float("nan"), 1.0]])), ("points", lambda: g.sample(np.zeros((3, 3)))),
            ("points", lambda: g.sample(np.zeros((0, 2)))), ("points", lambda: g.sample("here")),
            ("points", lambda: g.sample_async([[1.0, float("inf")]])),
            ("points", lambda: g.sample_async(np.zeros((MAX_POINTS + 1, 2), np.float32)))]


def _snapshot(g, kind):
    return {**_arrays(g, kind), "ledger": g.ledger(), "sim_time": g.sim_time, "iteration": g.iteration}


def child():
    """In the GL 4.1 process: per lattice the arrays, the samples of the water as it is and of the water
    before a step (asked before it), and the refusals of bad points; as JSON on stdout."""
    import moderngl
    ctx = moderngl.create_standalone_context(backend="egl", require=410)
    out = {"version": ctx.version_code, "vendor": ctx.info["GL_VENDOR"], "kinds": {}}
    points = _points()
    for kind in KINDS:
        g = _moving_grid(ctx, hydro.HexWaterGrid if kind == "hex" else hydro.WaterGrid)
        before = _arrays(g, kind)
        asked = g.sample_async(points)              # the water as it is now, read after the step below
        g.step(0.2)
        values = g.sample(points)
        again = g.sample_async(points[:7])          # the same points' texture, fewer of them
        result = {"backend": g.backend, "face_width": g.geometry.face_width,
                  "before": {k: v.tolist() for k, v in before.items()}, "asked": asked.result().tolist(),
                  "after": {k: v.tolist() for k, v in _arrays(g, kind).items()}, "values": values.tolist(),
                  "again": again.result().tolist(), "dtype": str(values.dtype),
                  "flow_textures": [bool(_same(_texture_faces(tex, getattr(g, name).shape), getattr(g, name)))
                                    for tex, name in zip(g.flow_textures, _flow_names(kind))]}
        state = _snapshot(g, kind)
        refused = refusals(_bad_points(g))
        after = _snapshot(g, kind)
        result["refused"] = refused
        result["changed"] = [k for k in state if not _same(state[k], after[k])]
        g.release()
        out["kinds"][kind] = result
    out["error"] = ctx.error
    print(json.dumps(out))


@pytest.fixture(scope="module")
def gl41():
    return gl41_checked("test_water_fragment_probes")


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_samples_are_the_arrays_bilinear(gl41, kind):
    """On GL 4.1, depth, surface and velocity at random points, corners, edges and cell centres are the
    float64 statement's of the grid's arrays; at a cell centre the depth is the cell's, to the bit."""
    got = gl41["kinds"][kind]
    assert got["backend"] == "fragment" and got["dtype"] == "float32"
    arrays = {k: np.array(v, np.float32) for k, v in got["after"].items()}
    points = _points()
    values = np.array(got["values"], np.float32)
    _assert_samples(values, _expected(arrays, kind, points, got["face_width"]))
    centres = points[-4:].astype(int)
    np.testing.assert_array_equal(values[-4:, 0], arrays["water"][centres[:, 1], centres[:, 0]])
    assert np.abs(values[:, 2:]).max() > 0.1            # the water moves: the velocities are not all 0
    np.testing.assert_array_equal(np.array(got["again"], np.float32), values[:7])


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_a_sample_asked_before_a_step_is_the_water_then(gl41, kind):
    got = gl41["kinds"][kind]
    before = {k: np.array(v, np.float32) for k, v in got["before"].items()}
    after = {k: np.array(v, np.float32) for k, v in got["after"].items()}
    assert not np.array_equal(before["water"], after["water"])
    _assert_samples(np.array(got["asked"]), _expected(before, kind, _points(), got["face_width"]))


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_bad_points_are_refused_by_name_and_change_nothing(gl41, kind):
    got = gl41["kinds"][kind]
    for name, error, message in got["refused"]:
        assert error in ("ValueError", "TypeError"), (name, error, message)
        assert message.startswith(name), (name, message)
    assert got["changed"] == []


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_flow_textures_hold_the_flows(gl41, kind):
    assert gl41["kinds"][kind]["flow_textures"] == [True] * len(_flow_names(kind))


# ----------------------------------------------------------------------------- in the test context

@pytest.mark.parametrize("kind", list(KINDS))
def test_samples_are_the_compute_grids_bits(ctx, kind):
    """On the same water (the cell-wise kernel's bits), the fragment grid samples what the compute grid
    samples: the same arithmetic (common/sample.glsl), to the bit (subnormals flushed) on CPU rasterisers."""
    fragment = _moving_grid(ctx, KINDS[kind])
    compute = _moving_grid(ctx, COMPUTE[kind], kernel="cells")
    for name in ("water",) + _flow_names(kind):
        assert_same_bits(_flushed(getattr(fragment, name)), _flushed(getattr(compute, name)), err_msg=name)
    points = _points(count=2000)                      # two rows of the points texture
    values = fragment.sample(points)
    assert values.dtype == np.float32 and values.shape == (len(points), 4)
    assert_same_bits(_flushed(values), _flushed(compute.sample(points)))
    fragment.release()
    compute.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_sample_async_is_read_later_from_a_pixel_buffer(ctx, kind):
    """Requests asked in a row are each the water when asked; more than the ring holds take the oldest
    first; more points than the textures hold make them again."""
    g = _moving_grid(ctx, KINDS[kind])
    points = _points()
    handles, expected = [], []
    for _ in range(11):                               # more than the ring's 8 slots
        expected.append(_expected(_arrays(g, kind), kind, points, g.geometry.face_width))
        handles.append(g.sample_async(points))
        g.step(0.05)
    for handle, want in zip(handles, expected):
        _assert_samples(handle.result(), want)
        assert handle.ready
    many = _points(seed=9, count=5000)
    _assert_samples(g.sample(many), _expected(_arrays(g, kind), kind, many, g.geometry.face_width))
    g.release()
    with pytest.raises(RuntimeError, match="after release"):
        g.sample([[1.0, 1.0]])


def test_sample_async_reads_back_at_once_where_there_are_no_fences(ctx, monkeypatch):
    """Where moderngl gives no function loader (no fences), the values are read when asked."""
    monkeypatch.setattr(_native, "gl_functions", lambda *args: None)
    g = _moving_grid(ctx, FragmentWaterGrid)
    points = _points()
    want = _expected(_arrays(g, "square"), "square", points, g.geometry.face_width)
    handle = g.sample_async(points)
    assert handle.ready
    g.step(0.1)
    _assert_samples(handle.result(), want)
    g.release()


def _texture_faces(tex, shape):
    """A flow texture's faces, (rows, columns) = shape, its other texels checked to hold 0."""
    width, height = tex.size
    texels = np.frombuffer(tex.read(), np.float32).reshape(height, width)
    rows, cols = shape
    assert not texels[rows:].any() and not texels[:, cols:].any()
    return texels[:rows, :cols]


@pytest.mark.parametrize("kind", list(KINDS))
def test_flow_textures_follow_the_steps(ctx, kind):
    g = _moving_grid(ctx, KINDS[kind])
    for _ in range(2):                                # after an odd and an even number of substeps
        for tex, name in zip(g.flow_textures, _flow_names(kind)):
            flow = getattr(g, name)
            assert tex.size == (g.nx + 1, g.ny + 1)
            np.testing.assert_array_equal(_texture_faces(tex, flow.shape), flow)
        g.step(0.1, 1)
    g.release()


def test_release_frees_the_samples_objects(ctx, gl_objects):
    g = _moving_grid(ctx, FragmentHexWaterGrid)
    g.sample_async(_points())
    g.sample(_points(count=3000))
    g.release()
    g.release()
    assert gl_objects() == []
