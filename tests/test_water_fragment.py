"""FragmentWaterGrid and FragmentHexWaterGrid (hydro/water_fragment.py), the classic water model as
fragment-shader passes, on an OpenGL 4.1 core context with no compute shaders, storage buffers or image
stores (as macOS has): Mesa's overrides give one, set before the driver loads, so those checks run in a
child process that prints its results as JSON; the tests here compare them with the float64 reference
(hydro/reference/water.py) and, with the water cycle on, with the compute grids run here. In the test
context (GL 4.3+), the grids give the cell-wise kernel's water to the bit on CPU rasterisers, subnormal
numbers flushed, with the water cycle too."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hydro
from hydro import boundary as bnd
from hydro.params import Geometry, WaterParams
from hydro.reference import water as ref
from hydro.water_fragment import NO_CYCLE, FragmentHexWaterGrid, FragmentWaterGrid
from water_cases import assert_same_bits, cycle_long_run, random_state

# what makes llvmpipe a GL 4.1 core context with no compute shaders, storage buffers or image stores
GL41_ENV = {"MESA_GL_VERSION_OVERRIDE": "4.1", "MESA_GLSL_VERSION_OVERRIDE": "410",
            "MESA_EXTENSION_OVERRIDE": "-GL_ARB_compute_shader -GL_ARB_shader_storage_buffer_object "
                                       "-GL_ARB_shader_image_load_store"}
# the contexts the fragment backend is tested on: macOS's 4.1, and a GL 3.3 core driver, which compiles the
# passes as GLSL 3.30 (with GL_ARB_gpu_shader5's precise, which llvmpipe has)
POSES = {"4.1": GL41_ENV, "3.3": {**GL41_ENV, "MESA_GL_VERSION_OVERRIDE": "3.3", "MESA_GLSL_VERSION_OVERRIDE": "330"}}
# and a GL 3.3 driver without GL_ARB_gpu_shader5 (pre-2010 GPUs): no precise
NO_PRECISE = {**POSES["3.3"], "MESA_EXTENSION_OVERRIDE": POSES["3.3"]["MESA_EXTENSION_OVERRIDE"] + " -GL_ARB_gpu_shader5"}
SHAPE = (10, 15)
PARAMS = {"friction": 0.1}
KINDS = {"square": FragmentWaterGrid, "hex": FragmentHexWaterGrid}

# The run compared with the reference: boundaries of every kind, brushes and drains, calls of set and
# automatic substeps, kinds changed between calls (the ledger folds what faces booked under their old
# kinds) and a rectangle of the bed set.
RUN = [
    ("set_boundary", ("left", "inflow", 0.8), {"span": (2, 7)}),
    ("set_boundary", ("right", "outflow", 0.5), {}),
    ("set_boundary", ("bottom", "level", 0.9), {}),
    ("set_boundary", ("top", "level", 0.2), {"span": (0, 5)}),
    ("set_boundary", ("top", "outflow", 0.3), {"span": (9, 14)}),
    ("dig", (4.0, 6.0, 3.0, 0.4), {}),
    ("add_water", (6.5, 3.2, 2.5, 3.0), {}),
    ("step", (0.2, 4), {}),
    ("remove_water", (11.0, 5.0, 2.0, 0.8), {}),
    ("remove_water", (2.0, 2.0, 3.0, 50.0), {}),
    ("step", (0.2, 4), {}),
    ("set_boundary", ("right", "level", 1.1), {"span": (0, 4)}),
    ("set_boundary", ("left", "wall"), {}),
    ("set_boundary", ("bottom", "inflow", 1.5), {"span": (3, 12)}),
    ("step", (0.15, None), {}),
    ("step", (0.3, None), {}),
    ("set_boundary", ("top", "wall"), {}),
    ("set_terrain", (np.full((3, 4), 0.25),), {"origin": (5, 2)}),
    ("step", (0.2, 5), {}),
]


# The water cycle's run (docs/design.md, "The water cycle"): rain as a rate and as a field, evaporation,
# a spring and a drain over open sides; a rate changed, sources removed, the cycle off and on again; calls
# of set and automatic substeps, one longer than CYCLE_FOLD (the records added to the ledger mid-call)
# and one past MAX_CHUNK (measured again mid-call). "set": an attribute; "rate" / "remove": the grid's
# i-th live source.
def _rain_field():
    return np.random.default_rng(5).uniform(0.0, 2e-3, SHAPE).astype(np.float32)


CYCLE_RUN = [
    ("set_boundary", ("left", "inflow", 0.6), {"span": (2, 7)}),
    ("set_boundary", ("right", "outflow", 0.4), {}),
    ("set_boundary", ("bottom", "level", 0.9), {}),
    ("set", ("rain", 1e-3), {}),
    ("set", ("evaporation", 4e-3), {}),
    ("add_source", (3.0, 4.0, 2.5, 0.3), {}),
    ("add_source", (11.5, 6.0, 3.0, -0.5), {}),
    ("step", (0.2, 4), {}),
    ("step", (0.15, None), {}),
    ("set", ("rain", _rain_field()), {}),
    ("rate", (0, 0.8), {}),
    ("step", (0.2, None), {}),
    ("add_water", (6.5, 3.2, 2.5, 3.0), {}),
    ("step", (3.0, 150), {}),
    ("remove", (1,), {}),
    ("set", ("evaporation", 0.0), {}),
    ("step", (0.2, None), {}),
    ("set", ("rain", 0.0), {}),
    ("remove", (0,), {}),
    ("step", (0.2, 2), {}),
    ("set", ("evaporation", 1e-3), {}),
    ("add_source", (7.0, 5.0, 1.5, -0.2), {}),
    ("step", (15.0, None), {}),
    ("step", (0.2, None), {}),
]


def _flow_names(kind):
    return ("flow_x", "flow_y", "flow_z")[:2 + (kind == "hex")]


def _inputs(kind):
    """The run's terrain, water and starting flows (by name), float32."""
    rng = np.random.default_rng(41)
    terrain, water = random_state(rng, SHAPE)
    ny, nx = SHAPE
    shapes = [(ny, nx + 1), (ny + 1, nx), (ny + 1, nx + 1)]
    flows = {name: rng.normal(0.0, 0.3, shape).astype(np.float32) for name, shape in zip(_flow_names(kind), shapes)}
    return terrain.astype(np.float32), water.astype(np.float32), flows


def _grid(ctx, kind="square", cls=None, **kwargs):
    """The run's grid: a fragment grid of `kind`, or `cls` (a compute grid), with `kwargs`."""
    terrain, water, flows = _inputs(kind)
    g = (cls or KINDS[kind])(ctx, terrain, water=water, **PARAMS, **kwargs)
    for name, q in flows.items():
        setattr(g, name, q)
    return g


def _play(g, run, taken=None):
    """Apply `run` to grid g, its automatic steps in `taken`'s substeps where given; the substeps each
    step() took."""
    counts, done = iter(taken or ()), []
    for name, args, kwargs in run:
        if name in ("set", "rate", "remove"):
            if name == "set":
                setattr(g, *args)
            elif name == "rate":
                g.sources[args[0]].rate = args[1]
            else:
                g.sources[args[0]].remove()
            continue
        if name == "step" and taken is not None and args[1] is None:
            args = (args[0], next(counts))
        elif name == "step" and taken is not None:
            next(counts)
        result = getattr(g, name)(*args, **kwargs)
        if name == "step":
            done.append(result)
    return done


def _lake_at_rest():
    """Terrain in steps of 1/64 under a surface at 1.25, islands above it: every depth and surface is
    exact in float32, so not a bit of flow may start."""
    rng = np.random.default_rng(7)
    terrain = rng.integers(0, 65, SHAPE) / 64.0
    terrain[rng.random(SHAPE) < 0.15] = 1.5
    water = np.maximum(1.25 - terrain, 0.0)
    return terrain.astype(np.float32), water.astype(np.float32)


def _bad_calls(ctx, g):
    """(argument named, call) for calls each of which must be refused."""
    t = g.terrain
    return [
        ("dt", lambda: g.step(-0.1)), ("dt", lambda: g.step(float("nan"))), ("substeps", lambda: g.step(0.1, 0)),
        ("substeps", lambda: g.step(0.1, 2.5)), ("substeps", lambda: g.step(100.0, 1)),
        ("side", lambda: g.set_boundary("front", "wall")), ("kind", lambda: g.set_boundary("left", "river")),
        ("value", lambda: g.set_boundary("left", "inflow", -1.0)),
        ("value", lambda: g.set_boundary("left", "wall", 1.0)),
        ("span", lambda: g.set_boundary("left", "inflow", 1.0, span=(3, 2))),
        ("span[1]", lambda: g.set_boundary("left", "inflow", 1.0, span=(0, 99))),
        ("water", lambda: setattr(g, "water", np.zeros((3, 3)))),
        ("water", lambda: setattr(g, "water", -np.ones(SHAPE))),
        ("terrain", lambda: setattr(g, "terrain", np.full(SHAPE, np.nan))),
        ("flow_x", lambda: setattr(g, "flow_x", np.zeros(SHAPE))),
        ("radius", lambda: g.add_water(3.0, 3.0, 0.0, 1.0)), ("volume", lambda: g.add_water(3.0, 3.0, 1.0, -1.0)),
        ("x, y", lambda: g.add_water(-50.0, -50.0, 1.0, 1.0)),
        ("volume", lambda: g.remove_water(3.0, 3.0, 1.0, -1.0)), ("depth", lambda: g.dig(1.0, 1.0, 1.0, float("inf"))),
        ("x", lambda: g.dig("a", 1.0, 1.0, 1.0)),
        ("origin", lambda: g.set_terrain(np.zeros((2, 2)), origin=(14, 0))),
        ("heights", lambda: g.set_terrain(np.zeros(3))),
        ("terrain", lambda: FragmentWaterGrid(ctx, np.zeros(5))),
        ("cell_size", lambda: FragmentWaterGrid(ctx, t, cell_size=-1.0)),
        ("water", lambda: FragmentWaterGrid(ctx, t, water=np.ones((2, 2)))),
        ("ctx", lambda: FragmentWaterGrid("ctx", t)),
    ]


def _refuse_cycle_calls(ctx):
    """Bad values of the water cycle on a grid with it on, each refused by name: [name, error, message]
    per call, and what changed of the grid (nothing, if all is well)."""
    g = _grid(ctx)
    g.set_boundary("left", "level", 0.9)
    g.rain = 1e-3
    g.evaporation = 2e-3
    source = g.add_source(3.0, 3.0, 1.5, 0.2)
    removed = g.add_source(8.0, 5.0, 2.0, -0.3)
    g.step(0.1, 2)
    removed.remove()
    g.step(0.1)

    def state():
        return {**_snapshot(g), "rain": g.rain, "evaporation": g.evaporation, "sources": g.sources,
                "rate": source.rate, "volume": g.volume()}
    before = state()
    calls = [
        ("rain", lambda: setattr(g, "rain", -1e-3)), ("rain", lambda: setattr(g, "rain", float("nan"))),
        ("rain", lambda: setattr(g, "rain", "heavy")), ("rain", lambda: setattr(g, "rain", np.ones((3, 3)))),
        ("rain", lambda: setattr(g, "rain", np.full(SHAPE, -1.0))),
        ("evaporation", lambda: setattr(g, "evaporation", -1.0)),
        ("evaporation", lambda: setattr(g, "evaporation", math.inf)),
        ("x", lambda: g.add_source("a", 1.0, 1.0, 1.0)), ("y", lambda: g.add_source(1.0, math.nan, 1.0, 1.0)),
        ("radius", lambda: g.add_source(1.0, 1.0, 0.0, 1.0)), ("rate", lambda: g.add_source(1.0, 1.0, 1.0, 1e39)),
        ("x, y", lambda: g.add_source(-50.0, 1.0, 1.0, 1.0)), ("x, y", lambda: g.add_source(4.0, 60.0, 2.0, 1.0)),
        ("rate", lambda: setattr(source, "rate", None)),
        ("Source: removed", lambda: setattr(removed, "rate", 1.0)),
    ]
    refused = refusals(calls)
    after = state()
    changed = [k for k in before if not _same(before[k], after[k])]
    g.release()
    return {"refused": refused, "changed": changed}


def _snapshot(g):
    return {"water": g.water, "terrain": g.terrain, "flow_x": g.flow_x, "flow_y": g.flow_y, "ledger": g.ledger(),
            "boundaries": g.boundaries, "sim_time": g.sim_time, "iteration": g.iteration}


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return np.array_equal(a.view(np.uint32), b.view(np.uint32))
    return a == b


STATS_SHAPE = (23, 37)


def _stats_inputs(shape, seed=3):
    """Terrain (its lowest bed inside the grid, below the edge's) and water over many octaves, some cells
    dry, float32."""
    rng = np.random.default_rng(seed)
    terrain = rng.normal(0.0, 2.0, shape)
    if min(shape) > 2:
        terrain[shape[0] // 2, shape[1] // 2] = -50.0
    water = 10.0 ** rng.uniform(-6.0, 2.0, shape)
    water[rng.random(shape) < 0.2] = 0.0
    return terrain.astype(np.float32), water.astype(np.float32)


def _numpy_stats(terrain, water, cell_area):
    """What the planner's record holds, in float64: the volume, the deepest water, the lowest edge bed."""
    edge = np.concatenate([terrain[0], terrain[-1], terrain[:, 0], terrain[:, -1]])
    return {"volume": math.fsum(water.astype(np.float64).ravel()) * cell_area, "max_depth": float(water.max()),
            "min_terrain": float(edge.min())}


def _assert_stats(got, terrain, water, cell_area):
    want = _numpy_stats(terrain, water, cell_area)
    assert got["max_depth"] == want["max_depth"] and got["min_terrain"] == want["min_terrain"], (got, want)
    assert abs(got["volume"] - want["volume"]) <= 1e-13 * want["volume"], (got, want)


def gl41_context():
    """A child's GL 4.1 context, and what it says of itself: version, renderer, vendor, and whether a
    compute shader compiled (its error cleared, so the grids' are the ones checked)."""
    import moderngl
    ctx = moderngl.create_standalone_context(backend="egl", require=330)
    out = {"version": ctx.version_code, "renderer": ctx.info["GL_RENDERER"], "vendor": ctx.info["GL_VENDOR"],
           "pose": os.environ.get("MESA_GL_VERSION_OVERRIDE")}
    try:
        ctx.compute_shader("#version 430\nlayout(local_size_x = 1) in;\nvoid main() {}\n")
        out["compute"] = "compiled"
    except Exception as exc:  # noqa: BLE001 - what fails is reported
        out["compute"] = f"refused: {exc}"
    ctx.error
    return ctx, out


def child():
    """In the GL 4.1 process: every check's results, as JSON on stdout."""
    ctx, out = gl41_context()

    out["run"], out["lake"] = {}, {}
    for kind, cls in KINDS.items():
        g = _grid(ctx, kind)
        taken = _play(g, RUN)
        out["run"][kind] = {"taken": taken, "volume": g.volume(), "ledger": g.ledger(), "iteration": g.iteration,
                            "sim_time": g.sim_time,
                            **{name: getattr(g, name).tolist() for name in ("water", "terrain") + _flow_names(kind)}}
        g.release()

        terrain, water = _lake_at_rest()
        lake = cls(ctx, terrain, water=water)
        lake.set_boundary("left", "level", 1.25)
        lake.set_boundary("bottom", "level", 1.25, span=(2, 9))
        lake_taken = [lake.step(0.25) for _ in range(8)]
        out["lake"][kind] = {"taken": lake_taken, "still": bool(np.array_equal(lake.water, water)),
                             "flows": max(float(np.abs(getattr(lake, name)).max()) for name in _flow_names(kind)),
                             "ledger": lake.ledger(), "volume": lake.volume()}
        lake.release()

    out["cycle"] = {}
    for kind in KINDS:
        g = _grid(ctx, kind)
        taken = _play(g, CYCLE_RUN)
        out["cycle"][kind] = {"taken": taken, "volume": g.volume(), "ledger": g.ledger(), "iteration": g.iteration,
                              "sources": len(g.sources),
                              **{name: getattr(g, name).tolist() for name in ("water",) + _flow_names(kind)}}
        g.release()

    out["stats"] = {}
    for kind, cls in KINDS.items():
        terrain, water = _stats_inputs(STATS_SHAPE)
        g = cls(ctx, terrain, water=water)
        out["stats"][kind] = g._measure()
        g.release()

    out["sleep"] = []                   # sleep= reaches the fragment grid; its first call computes every tile
    terrain, water = _lake_at_rest()
    for sleep in (True, False, "yes"):
        try:
            g = hydro.WaterGrid(ctx, terrain, water=water, sleep=sleep)
        except TypeError as exc:
            out["sleep"].append([repr(sleep), str(exc)])
            continue
        g.step(0.1)
        out["sleep"].append([repr(sleep), g.backend, g.sleep, g.awake])
        g.release()

    g = _grid(ctx)
    g.set_boundary("left", "inflow", 0.5)
    g.set_boundary("top", "level", 0.7)
    g.step(0.1, 2)
    before = _snapshot(g)
    refused = refusals(_bad_calls(ctx, g))
    after = _snapshot(g)
    out["bad"] = {"refused": refused, "changed": [k for k in before if not _same(before[k], after[k])]}
    g.release()
    out["bad_cycle"] = _refuse_cycle_calls(ctx)
    out["error"] = ctx.error
    print(json.dumps(out))


def refusals(calls) -> list:
    """Each (name, call) called: [name, the error's type name or None, its message or "accepted"]."""
    out = []
    for name, call in calls:
        try:
            call()
            out.append([name, None, "accepted"])
        except Exception as exc:  # noqa: BLE001 - the kind of error is checked by the test
            out.append([name, type(exc).__name__, str(exc)])
    return out


def gl41_child(module: str, timeout: int = 600, pose: str = "4.1", env: dict | None = None,
               entry: str = "child") -> dict:
    """Run `module`'s `entry`() in a process of its own on a GL 4.1 context (or the POSES one named, or
    Mesa's overrides `env`) with no compute shaders (the overrides set before the driver loads) and return
    the JSON it printed last; skip where the driver is not Mesa's, whose overrides make that context."""
    env = dict(os.environ, **(env or POSES[pose]))
    here = Path(__file__).resolve().parent
    code = f"import sys; sys.path.insert(0, {str(here)!r}); import {module} as t; t.{entry}()"
    result = subprocess.run([sys.executable, "-c", code], cwd=here.parent, env=env, capture_output=True,
                            text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-4000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    if "Mesa" not in out["vendor"]:
        pytest.skip(f"Mesa's overrides make the GL 4.1 context with no compute shaders; this driver is "
                    f"{out['vendor']}, which gives a 4.1 context with them")
    return out


# the test files a Mac runs whole (gl41's test below)
GL41_SUITES = ("test_water_physics.py", "test_water_friction.py", "test_water_cycle.py")


def test_gl41_the_physics_friction_and_cycle_tests_pass_on_the_fragment_backend():
    """GL41_SUITES whole, in a pytest of its own on a GL 4.1 context with no compute shaders, where every
    grid is a fragment grid and each test of every kernel runs with kernel=None (water_cases.KERNELS):
    conservation with every boundary, positivity, a lake at rest, the seiche, the equilibrium level,
    the planner's depths; Manning's normal depth, frame-rate-free fixed substeps; the water cycle
    against the reference and its ledger over a long run."""
    here = Path(__file__).resolve().parent
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
                             *(str(here / name) for name in GL41_SUITES)], cwd=here.parent,
                            env=dict(os.environ, **POSES["4.1"]), capture_output=True, text=True, timeout=600)
    if "[square-None]" not in result.stdout:
        pytest.skip("the overrides left the context its compute shaders (a driver other than Mesa's)")
    assert result.returncode == 0, result.stdout[-4000:]
    assert " passed" in result.stdout.splitlines()[-1] and "failed" not in result.stdout.splitlines()[-1]


def gl41_checked(module: str) -> dict:
    """gl41_child(module)'s results, its context checked to be GL 4.1 and to have raised no error."""
    out = gl41_child(module, timeout=300)
    assert out["version"] == 410 and out["error"] == "GL_NO_ERROR", out["error"]
    return out


def child_without_precise():
    """On a GL 3.3 context without GL_ARB_gpu_shader5: the water cycle's run on both lattices, how far the
    volume lies from the ledger and what moved."""
    ctx, out = gl41_context()
    out["gpu_shader5"] = "GL_ARB_gpu_shader5" in ctx.extensions
    out["runs"] = {}
    for kind in KINDS:
        g = _grid(ctx, kind)
        taken = _play(g, CYCLE_RUN)
        ledger = g.ledger()
        out["runs"][kind] = {"volume": g.volume(), "expected": ledger["expected"], "substeps": sum(taken),
                             "moved": sum(abs(v) for k, v in ledger.items() if k not in ("initial", "expected")),
                             "min_water": float(g.water.min()),
                             "precise": "#define precise" in g._pass("move", NO_CYCLE)[0].extra["source"]}
        g.release()
    print(json.dumps(out))


@pytest.fixture(scope="module", params=list(POSES))
def gl41(request):
    """The GL 4.1 (and GL 3.3) process's results."""
    return gl41_child("test_water_fragment", pose=request.param)


class Twin:
    """The reference State and its ledger by kind: set_boundary folds what each face booked into its
    kind's total, as the grids do when a face's kind changes."""

    def __init__(self, kind, params):
        terrain, water, flows = _inputs(kind)
        self.s = ref.State.new(terrain.astype(np.float64), water.astype(np.float64), hexagonal=kind == "hex",
                               params=params)
        for name, q in flows.items():
            setattr(self.s, name, q.astype(np.float64))
        self.initial = self.s.volume()
        self.kinds = {kind: 0.0 for kind in bnd.KINDS if kind != "wall"}
        self.brushes = self.drains = 0.0

    def _fold(self):
        for kind, code in bnd.KINDS.items():
            if kind != "wall":
                self.kinds[kind] += float(self.s.ledger[self.s.table["kind"] == code].sum())
        self.s.ledger = np.zeros_like(self.s.ledger)

    def set_boundary(self, *args, **kwargs):
        self._fold()
        ny, nx = self.s.water.shape
        self.s.table = bnd.with_boundary(self.s.table, bnd.layout(nx, ny, self.s.hexagonal), *args, **kwargs)

    def dig(self, *args):
        ref.dig(self.s, *args)

    def remove_water(self, x, y, radius, volume):
        w = ref.brush_weights(self.s.water.shape, x, y, radius, self.s.hexagonal)
        after = np.maximum(self.s.water - volume * w / (w.sum() * self.s.lattice.cell_area), 0.0)
        self.drains -= (self.s.water - after).sum() * self.s.lattice.cell_area
        self.s.water = after

    def set_terrain(self, heights, origin):
        (x0, y0), (h, w) = origin, heights.shape
        self.s.terrain[y0:y0 + h, x0:x0 + w] = heights

    def add_water(self, *args):
        ref.add_water(self.s, *args)
        self.brushes += args[-1]

    def ledger(self):
        self._fold()
        return {"initial": self.initial, **self.kinds, "brushes": self.brushes, "drains": self.drains}


def _flushed(a):
    """float32 array a with its subnormal numbers flushed to zero (of their sign): fragment shaders may
    flush them where compute shaders keep them (llvmpipe does), a cell drained to a last residue then
    holds +0 in one and 3e-39 in the other."""
    a = np.asarray(a, np.float32)
    return np.where(np.abs(a) < np.finfo(np.float32).tiny, np.copysign(np.float32(0.0), a), a)


def _same_bits(fragment, cells, err_msg):
    """The fragment grid's array holds the cell-wise kernel's bits, subnormal numbers flushed."""
    assert_same_bits(_flushed(fragment), _flushed(cells), err_msg=err_msg)


def _close(a, b, rtol):
    b = np.asarray(b, np.float64)
    np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=0, atol=rtol * max(np.abs(b).max(), 1e-3))


def test_gl33_without_precise_keeps_the_water_to_a_few_parts_in_ten_million():
    """A GL 3.3 driver without GL_ARB_gpu_shader5 compiles the passes with no precise: the compiler may
    reorder the sums it guards, and the water keeps its ledger to a few parts in 10^7 of what moved."""
    out = gl41_child("test_water_fragment", env=NO_PRECISE, entry="child_without_precise")
    assert out["version"] == 330 and not out["gpu_shader5"]
    for kind, run in out["runs"].items():
        assert run["precise"], kind                  # precise defined away: the passes compiled without it
        assert run["min_water"] >= 0.0, kind
        assert abs(run["volume"] - run["expected"]) <= 1e-6 * (run["expected"] + run["moved"]), (kind, run)


def test_gl41_context_has_no_compute_shaders(gl41):
    """The child's context is what macOS gives, GL 4.1 (or a GL 3.3 driver's), a compute shader refused."""
    assert gl41["version"] == {"4.1": 410, "3.3": 330}[gl41["pose"]]
    assert gl41["compute"].startswith("refused"), gl41["compute"]
    assert gl41["error"] == "GL_NO_ERROR"


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_run_matches_reference(gl41, kind):
    """Random terrain, water and flows, boundaries of every kind changed between calls, brushes, set and
    automatic substeps: the water and flows of the float64 reference to 2e-4 of their largest, and the
    ledger's kinds its booked volumes."""
    run = gl41["run"][kind]
    twin = Twin(kind, WaterParams(**PARAMS))
    taken = iter(run["taken"])
    for name, args, kwargs in RUN:
        if name == "step":
            dt, substeps = args
            n = next(taken)
            assert substeps is None or n == substeps
            ref.step(twin.s, dt, n)
        else:
            getattr(twin, name)(*args, **kwargs)
    assert run["iteration"] == sum(run["taken"]) and run["sim_time"] == pytest.approx(1.05)
    _close(run["terrain"], twin.s.terrain, 1e-6)
    _close(run["water"], twin.s.water, 2e-4)
    for name in _flow_names(kind):
        _close(run[name], getattr(twin.s, name), 2e-4)
    expected = twin.ledger()
    scale = max(abs(v) for v in expected.values())
    for key, value in expected.items():
        assert run["ledger"][key] == pytest.approx(value, rel=2e-4, abs=2e-5 * scale), key
    assert run["ledger"]["assigned"] == 0.0
    for kind in ("inflow", "outflow", "level"):
        assert run["ledger"][kind] != 0.0, kind


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_volume_is_the_ledgers_expected_volume(gl41, kind):
    """What the boundary faces booked, the brushes and the start volume add up to the water there is."""
    run = gl41["run"][kind]
    ledger = run["ledger"]
    assert ledger["expected"] == math.fsum(v for k, v in ledger.items() if k != "expected")
    assert run["volume"] == pytest.approx(ledger["expected"], rel=1e-6)


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_lake_at_rest_stays_at_rest(gl41, kind):
    """A flat lake between islands, open to an outside surface at its own height: not a bit moves."""
    lake = gl41["lake"][kind]
    assert lake["still"] and lake["flows"] == 0.0
    assert lake["ledger"]["level"] == 0.0
    assert lake["volume"] == lake["ledger"]["initial"] == lake["ledger"]["expected"]
    assert all(n >= 1 for n in lake["taken"])


def test_gl41_grids_take_sleep_and_compute_every_tile_at_first(gl41):
    assert gl41["sleep"][:2] == [["True", "fragment", True, 1.0], ["False", "fragment", False, 1.0]]
    assert gl41["sleep"][2][0] == "'yes'" and gl41["sleep"][2][1].startswith("sleep: expected True")


def test_gl41_bad_arguments_are_refused_and_change_nothing(gl41):
    """Every bad argument raises ValueError or TypeError naming it, and the grid is as it was."""
    for name, kind, message in gl41["bad"]["refused"]:
        assert kind in ("ValueError", "TypeError"), (name, kind, message)
        assert message.startswith(name), (name, message)
    assert gl41["bad"]["changed"] == []


# ----------------------------------------------------------------------------------- the water cycle

def _compute_grid(kind):
    return {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}[kind]


def _assert_same_ledger(got, want, kind):
    """The fragment grid's ledger is the compute grid's, entry by entry, to float64 rounding of sums in
    another order; on the hex lattice evaporation and drains to 1e-7 (the compute grid books them with
    the float32 cell area, sqrt(3) / 2 rounded: 1.8e-8 off; the fragment grid with the float64 one)."""
    assert want.keys() == got.keys(), (got.keys(), want.keys())
    scale = max(abs(v) for v in want.values())
    for key, value in got.items():
        rel = 1e-7 if kind == "hex" and key in ("evaporation", "drains", "expected") else 1e-12
        assert value == pytest.approx(want[key], rel=rel, abs=1e-13 * scale), key


def _assert_cycle_run(fragment, compute, compute_taken, kind):
    """The fragment grid's results of CYCLE_RUN (a dict of lists, from the GL 4.1 child or here) are the
    compute grid's: the substeps it planned, the water and flows to the bit (subnormal numbers flushed),
    the ledger and the volume."""
    assert fragment["taken"] == compute_taken and max(compute_taken) > 64, (fragment["taken"], compute_taken)
    for name in ("water",) + _flow_names(kind):
        _same_bits(np.asarray(fragment[name], np.float32), getattr(compute, name), err_msg=name)
    ledger = fragment["ledger"]
    _assert_same_ledger(ledger, compute.ledger(), kind)
    assert fragment["iteration"] == compute.iteration
    assert fragment["volume"] == pytest.approx(compute.volume(), rel=1e-12)
    assert fragment["volume"] == pytest.approx(ledger["expected"], rel=1e-7)
    assert min(ledger["rain"], ledger["sources"], -ledger["evaporation"], -ledger["drains"]) > 0.01, ledger


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_water_cycle_matches_the_compute_grid(gl41, ctx, kind):
    """On the GL 4.1 context, rain (a rate, then a field), evaporation, springs and drains changed and
    removed between calls of set and automatic substeps: the compute grid's substeps, water, flows and
    ledger (the cycle's arithmetic is the same common/model.glsl functions)."""
    compute = _grid(ctx, kind, _compute_grid(kind), kernel="cells")
    taken = _play(compute, CYCLE_RUN)
    assert gl41["cycle"][kind]["sources"] == len(compute.sources) == 1
    _assert_cycle_run(gl41["cycle"][kind], compute, taken, kind)
    compute.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_water_cycle_matches_the_cell_wise_water_grid(ctx, kind):
    """The same run in one process, both grids on the test context."""
    grids = [_grid(ctx, kind), _grid(ctx, kind, _compute_grid(kind), kernel="cells")]
    fragment, compute = grids
    taken = [_play(g, CYCLE_RUN) for g in grids]
    run = {"taken": taken[0], "ledger": fragment.ledger(), "volume": fragment.volume(), "iteration": fragment.iteration,
           **{name: getattr(fragment, name) for name in ("water",) + _flow_names(kind)}}
    _assert_cycle_run(run, compute, taken[1], kind)
    assert fragment.rain == compute.rain == 0.0 and fragment.evaporation == compute.evaporation == np.float32(1e-3)
    for g in grids:
        g.release()


def test_gl41_bad_cycle_values_are_refused_and_change_nothing(gl41):
    """Rain negative, not finite or a field of the wrong shape, evaporation negative, a source off the grid
    or of a bad rate, a removed source's rate set: each refused naming it, the grid as it was."""
    for name, kind, message in gl41["bad_cycle"]["refused"]:
        expected = "RuntimeError" if name.startswith("Source") else ("ValueError", "TypeError")
        assert kind in expected, (name, kind, message)
        assert message.startswith(name), (name, message)
    assert gl41["bad_cycle"]["changed"] == []


def test_bad_cycle_values_are_refused_and_change_nothing(ctx):
    bad = _refuse_cycle_calls(ctx)
    assert [kind for _, kind, _ in bad["refused"]].count(None) == 0, bad
    assert bad["changed"] == []


@pytest.mark.parametrize("kind", list(KINDS))
def test_water_equals_its_ledger_over_a_long_run(ctx, rng, kind):
    """water_cases.cycle_long_run on the fragment grids."""
    cycle_long_run(lambda terrain, water: KINDS[kind](ctx, terrain, water=water), rng)


@pytest.mark.parametrize("kind", list(KINDS))
def test_rain_too_small_for_a_float32_column_still_arrives(ctx, kind):
    """4e-7 m of rain a substep on a 10 m lake, less than half its last bit: owed to the columns, the rain
    arrives all the same, rate x time, as the ledger says."""
    g = KINDS[kind](ctx, np.zeros((6, 7)), water=np.full((6, 7), 10.0))
    g.rain = 2e-5
    for _ in range(20):
        g.step(5.0, substeps=250)
    np.testing.assert_allclose(g.water - 10.0, 2e-5 * 100.0, rtol=0.01)
    assert g.ledger()["rain"] == pytest.approx(2e-5 * 100.0 * 42 * g.geometry.cell_area, rel=1e-6)
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-7)
    g.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_planning_counts_what_rain_and_springs_add(ctx, kind):
    """On dry land a strong spring is all the depth there will be: the planner counts what the supply
    adds during the call (as WaterGrid's _coupling), and both grids take the same substeps, more than
    one."""
    grids = [cls(ctx, np.zeros((12, 12))) for cls in (KINDS[kind], _compute_grid(kind))]
    for g in grids:
        g.add_source(6.0, 6.0, 1.0, 40.0)
        g.rain = 0.05
    taken = [[g.step(2.0) for _ in range(3)] for g in grids]
    assert taken[0] == taken[1] and taken[0][0] > 1, taken
    _same_bits(grids[0].water, grids[1].water, err_msg="water")
    for g in grids:
        g.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_water_cycle_reads_back_one_texel_a_call(ctx, monkeypatch, kind):
    """With the cycle on, what evaporation and drains took is summed on the GPU (a call longer than
    CYCLE_FOLD sums it mid-call too): a step() call reads back 16 bytes at most for its plan and 4 for
    its sleeping tiles' count, never the water."""
    terrain, water = _stats_inputs((40, 48))
    g = KINDS[kind](ctx, np.abs(terrain), water=np.minimum(water, 1.0))
    g.evaporation = 1e-3
    g.rain = np.full((40, 48), 2e-4)
    g.add_source(20.0, 20.0, 3.0, -0.5)
    reads = _Reads(monkeypatch)
    for substeps in (3, 150, None, None, None):
        before = len(reads.client)
        g.step(0.2 if substeps is None else 0.01 * substeps, substeps)
        assert sum(reads.client[before:]) <= 16 + 4, reads.client[before:]
    ledger = g.ledger()
    assert g.volume() == pytest.approx(ledger["expected"], rel=1e-7)
    assert ledger["evaporation"] < 0 and ledger["drains"] < 0
    g.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_matches_the_cell_wise_water_grid(ctx, kind):
    """In a GL 4.3+ context the fragment passes give the cell-wise kernel's water, flows and terrain (to
    the bit on CPU rasterisers, water_cases.assert_same_bits, subnormal numbers flushed), and the same
    ledger to float precision, in the fragment grid's substeps."""
    import hydro
    b = _grid(ctx, kind)
    taken = _play(b, RUN)
    a = _grid(ctx, kind, {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}[kind], kernel="cells")
    _play(a, RUN, taken)
    for name in ("water", "terrain") + _flow_names(kind):
        _same_bits(getattr(b, name), getattr(a, name), err_msg=name)
    # the same to float precision: the cell-wise kernel books drains with the float32 cell area (hex:
    # sqrt(3) / 2 rounded), and on a GPU its inflow total was seen to differ in the ninth digit from the
    # exact sum of dt times the inflows, which the fragment grid books
    la, lb = a.ledger(), b.ledger()
    scale = max(abs(v) for v in la.values())
    for key in lb:
        assert lb[key] == pytest.approx(la[key], rel=1e-7, abs=1e-7 * scale), key
    assert b.volume() == pytest.approx(a.volume(), rel=1e-12)
    assert (b.iteration, b.sim_time) == (a.iteration, a.sim_time)
    a.release()
    b.release()


# Walled all round, then open on two sides, then walled again: the substeps of a walled grid run neither
# the boundary faces' pass nor the ledger's, so the faces the open sides left must stop at once.
REWALLED = [
    ("step", (0.2, 3), {}),
    ("set_boundary", ("left", "inflow", 1.5), {}),
    ("set_boundary", ("top", "level", 0.1), {"span": (2, 9)}),
    ("step", (0.2, 3), {}),
    ("set_boundary", ("left", "wall"), {}),
    ("set_boundary", ("top", "wall"), {}),
    ("step", (0.1, 1), {}),
]


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_grid_walled_again_gives_the_cell_wise_bits_and_keeps_its_water(ctx, kind):
    """A grid opened and then walled all round again gives the cell-wise kernel's water and flows to the
    bit, and once walled its volume stays where it was (to the columns' rounding) and what the ledger
    booked at the sides does not move: no face carries anything."""
    import hydro
    b = _grid(ctx, kind)
    a = _grid(ctx, kind, {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}[kind], kernel="cells")
    for g in (a, b):
        _play(g, REWALLED)
    volume, ledger = b.volume(), b.ledger()
    assert ledger["inflow"] > 0.0 and ledger["level"] != 0.0
    for g in (a, b):
        _play(g, [("step", (0.2, 4), {})])
    for name in ("water",) + _flow_names(kind):
        _same_bits(getattr(b, name), getattr(a, name), err_msg=name)
    assert b.volume() == pytest.approx(volume, rel=1e-7)           # the columns' float32 rounding
    assert {k: b.ledger()[k] for k in ("inflow", "level")} == {k: ledger[k] for k in ("inflow", "level")}
    assert b.volume() == pytest.approx(b.ledger()["expected"], rel=1e-6)
    a.release()
    b.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_has_the_compute_grids_api(ctx, kind):
    """A game written against WaterGrid / HexWaterGrid runs on a Mac: the fragment grid has every public
    name of the compute grid of its lattice but `kernel` (refused at construction, named) and
    `flow_buffers` (it has `flow_textures`), and `surface` and the hex lattice's coordinates read what
    the compute grid's read."""
    import hydro
    compute = {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}[kind]
    public = {name for name in dir(compute) if not name.startswith("_")}
    missing = public - {name for name in dir(KINDS[kind]) if not name.startswith("_")}
    assert missing == {"kernel", "flow_buffers"}, missing
    b = _grid(ctx, kind)
    a = _grid(ctx, kind, compute, kernel="cells")
    np.testing.assert_array_equal(b.surface, a.surface)
    if kind == "hex":
        assert b.grid_to_world(3.0, 2.0) == a.grid_to_world(3.0, 2.0)
        assert b.world_to_grid(3.0, 2.0) == a.world_to_grid(3.0, 2.0)
    a.release()
    b.release()


@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (6, 1), (2, 3)], ids=["one-cell", "one-row", "one-column", "tiny"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_grids_one_cell_thin_give_the_cell_wise_bits(ctx, rng, kind, shape):
    """Grids whose every cell has boundary faces (a corner cell, on the hex lattice, up to four), open on
    three sides: the cell-wise kernel's water and flows, and the water the ledger expects."""
    import hydro
    terrain, water = random_state(rng, shape)
    cells = {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}[kind](ctx, terrain, water=water, kernel="cells")
    fragment = KINDS[kind](ctx, terrain, water=water)
    for g in (cells, fragment):
        g.set_boundary("left", "inflow", 0.3)
        g.set_boundary("right", "level", 0.8)
        g.set_boundary("top", "outflow", 0.2)
    for _ in range(3):
        cells.step(0.1, fragment.step(0.1))
    for name in ("water",) + _flow_names(kind):
        _same_bits(getattr(fragment, name), getattr(cells, name), err_msg=name)
    assert fragment.volume() == pytest.approx(fragment.ledger()["expected"], rel=1e-6)
    cells.release()
    fragment.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_boundary_table_wraps_onto_rows_past_the_texture_size(ctx, monkeypatch, kind):
    """Where the table has more entries than a texture has texels a side, it wraps onto rows (entry b at
    texel (b % width, b / width), its ledger too): with the side cut to 16 texels, the grid of 15 x 10
    cells wraps its table of 50 (hex: 98) entries onto 4 (7) rows and gives the same water and ledger."""
    import moderngl
    full = _grid(ctx, kind)
    info = ctx.info
    monkeypatch.setattr(moderngl.Context, "info", property(lambda self: {**info, "GL_MAX_TEXTURE_SIZE": 16}))
    wrapped = _grid(ctx, kind)
    assert wrapped._table_size[0] == 16 and wrapped._table_size[1] > 1
    for g in (full, wrapped):
        _play(g, RUN)
    for name in ("water",) + _flow_names(kind):
        assert_same_bits(getattr(wrapped, name), getattr(full, name), err_msg=name)
    assert wrapped.ledger() == full.ledger()
    full.release()
    wrapped.release()


def test_textures_stay_the_same_through_steps_and_brushes(ctx):
    """A game fetches water_texture and terrain_texture once: the grid keeps its state in them, calls of
    odd and even substeps and brushes alike."""
    g = _grid(ctx)
    water, terrain = g.water_texture, g.terrain_texture
    g.set_boundary("left", "inflow", 1.0)
    for substeps in (1, 2, 3):
        g.step(0.05, substeps)
        g.add_water(4.0, 5.0, 2.0, 0.5)
        g.dig(9.0, 3.0, 2.0, 0.1)
        assert g.water_texture is water and g.terrain_texture is terrain
        texels = np.frombuffer(water.read(), np.float32).reshape(SHAPE[0] + 1, SHAPE[1] + 1)
        assert np.array_equal(texels[:-1, :-1], g.water) and not texels[-1].any() and not texels[:, -1].any()
        assert np.array_equal(np.frombuffer(terrain.read(), np.float32).reshape(SHAPE), g.terrain)
    g.release()


@pytest.mark.parametrize("inertia", [False, True], ids=["", "inertia"])
@pytest.mark.parametrize("cycle", [False, True], ids=["", "cycle"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_release_frees_every_gl_object(ctx, gl_objects, kind, cycle, inertia):
    g = _grid(ctx, kind, inertia=inertia)
    g.add_water(3.0, 4.0, 2.0, 1.0)
    if cycle:
        g.rain = _rain_field()
        g.evaporation = 1e-3
        g.add_source(5.0, 5.0, 2.0, -0.2)
    g.step(0.1)
    g.release()
    g.release()
    assert gl_objects() == []
    with pytest.raises(RuntimeError, match="after release"):
        g.step(0.1)


# ----------------------------------------------------------------------------- the planning record

@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_stats_are_reduced_on_the_gpu(gl41, kind):
    """On the GL 4.1 context the record of the water (fragment/stats.frag) is NumPy's."""
    terrain, water = _stats_inputs(STATS_SHAPE)
    geometry = {"square": Geometry.square, "hex": Geometry.hexagonal}[kind](1.0)
    _assert_stats(gl41["stats"][kind], terrain, water, geometry.cell_area)


@pytest.mark.parametrize("shape", [(23, 37), (37, 23), (1, 1), (1, 5), (9, 1), (2, 2), (8, 8), (9, 65), (16, 17),
                                   (130, 67), (260, 300)])
@pytest.mark.parametrize("kind", list(KINDS))
def test_stats_reduced_on_the_gpu_are_numpys(ctx, kind, shape):
    """The record reduced level by level (sizes that are no multiple of the block, one cell, one row or
    column, several levels): the deepest water and the lowest bed on the edge to the bit (the lowest bed
    of the grid lies inside it), the volume to 1e-13 of float64's; the same bits when reduced again."""
    terrain, water = _stats_inputs(shape)
    g = KINDS[kind](ctx, terrain, water=water)
    assert g._levels[-1][0].size == (1, 1)
    _assert_stats(g._measure(), terrain, water, g.geometry.cell_area)
    first = g._levels[-1][0].read()
    g._reduce()
    assert g._levels[-1][0].read() == first
    assert g.volume() == g._record(first)["volume"]
    g.release()


def test_volume_keeps_float64_precision(ctx):
    """A sum float32 would round: 2^24 + 1 in cells of 1, 2^-24 (and a deep column's rounding)."""
    water = np.full((40, 50), 2.0 ** -24, np.float32)
    water[7, 9] = 2.0 ** 24
    water[0, 0] = 3.0
    g = FragmentWaterGrid(ctx, np.zeros(water.shape), water=water)
    exact = 2.0 ** 24 + 3.0 + (water.size - 2) * 2.0 ** -24
    assert g.volume() == pytest.approx(exact, rel=1e-15, abs=0)
    g.release()


def _expected_substeps(g, stats, dt, lag):
    """The planner's rule (docs/design.md, "Planning a call"), worked out here from `stats`."""
    from hydro.params import max_stable_dt
    from hydro.params import AUTO_SAFETY, DEPTH_MARGIN
    geo = g.geometry
    depth = stats["max_depth"] * DEPTH_MARGIN ** (1 + lag) + g._max_cell_inflow * dt / geo.cell_area
    if g._max_level is not None:
        depth = max(depth, g._max_level - stats["min_terrain"])
    coupling = g.params.gravity * depth * geo.face_width / (geo.pipe_length * geo.cell_area)
    return max(1, math.ceil(dt / (AUTO_SAFETY * max_stable_dt(coupling, geo, g.params)) - 1e-9))


@pytest.mark.parametrize("kind", list(KINDS))
def test_step_plans_from_the_record_of_the_call_before_the_previous_one(ctx, kind):
    """The first call after an edit plans from the water as it is (as the readback at every call did);
    later ones from the newer of that and the record of the end of the call before the previous one,
    with a margin for the calls since; a call past MAX_CHUNK substeps measures again after each
    MAX_CHUNK. Each count is the rule's for the water NumPy saw then."""
    terrain, water = _lake_at_rest()
    g = KINDS[kind](ctx, terrain, water=water)
    g.set_boundary("right", "level", 1.0)
    g.set_boundary("left", "inflow", 2.0)
    g.add_water(4.0, 5.0, 2.5, 12.0)
    area = g.geometry.cell_area

    def now():
        return _numpy_stats(g.terrain, g.water, area)
    edit, ends, taken = (0, now()), {}, []     # (calls then, the stats after the last edit); per call its end
    for dt in (0.3, 0.3, 0.3, 0.2, 0.3, "dig", 0.3, 0.3, 12.0, 0.3, 0.3, "pour", 0.2):
        if dt in ("dig", "pour"):
            g.dig(8.0, 5.0, 2.0, 0.5) if dt == "dig" else g.add_water(9.0, 4.0, 2.0, 30.0)
            edit = (g._calls, now())
            continue
        calls = g._calls
        base = (calls - 1, ends[calls - 1]) if calls - 1 > edit[0] else edit
        want = _expected_substeps(g, base[1], dt, calls - base[0])
        n = g.step(dt)
        taken.append(n)
        if want <= 64:
            assert n == want, (calls, n, want)
        else:                                  # 64 as planned, the rest planned from the water after them
            assert n > 64, (calls, n, want)
        ends[g._calls] = now()
    assert max(taken) > 64 and min(taken) >= 2, taken
    g.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_plans_the_substeps_the_compute_grid_plans(ctx, kind):
    """Planning by the same rule from the same water, the fragment grid and the cell-wise kernel's grid
    pick the same substeps in every automatic call of the run (and of more calls after it, without
    edits), and end with the same water."""
    import hydro
    run = RUN + [("step", (0.2, None), {})] * 4 + [("step", (15.0, None), {})]
    compute = {"square": hydro.WaterGrid, "hex": hydro.HexWaterGrid}[kind]
    grids = [_grid(ctx, kind), _grid(ctx, kind, compute, kernel="cells")]
    fragment, cells = (_play(g, run) for g in grids)
    assert fragment == cells and fragment[-1] > 64, (fragment, cells)
    _same_bits(grids[0].water, grids[1].water, err_msg="water")
    for g in grids:
        g.release()


@pytest.mark.parametrize("kind", list(KINDS))
def test_same_calls_give_the_same_bits_whatever_waits(ctx, kind):
    """Two grids given the same calls take the same substeps and hold the same bits, though one of them
    waits for the GPU between calls (volume(), max_stable_dt(), reading the water)."""
    a, b = _grid(ctx, kind), _grid(ctx, kind)
    run = RUN + [("step", (0.25, None), {})] * 5
    for g in (a, b):
        g.set_boundary("right", "inflow", 1.0)
    taken = []
    for name, args, kwargs in run:
        for g in (a, b):
            result = getattr(g, name)(*args, **kwargs)
            if g is a and name == "step":
                taken.append(result)
            elif name == "step":
                assert result == taken[-1]
        b.volume(), b.max_stable_dt(), b.water
    for name in ("water",) + _flow_names(kind):
        assert_same_bits(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.ledger() == b.ledger()
    a.release()
    b.release()


class _Reads:
    """Counts the bytes moderngl reads back from textures, framebuffers and buffers (read into client
    memory; read_into a buffer, which stays on the GPU, counted apart)."""

    def __init__(self, monkeypatch):
        import moderngl
        self.client, self.gpu = [], []
        for cls in (moderngl.Texture, moderngl.Framebuffer, moderngl.Buffer):
            self._wrap(monkeypatch, cls)

    def _wrap(self, monkeypatch, cls):
        import moderngl
        read, read_into = cls.read, cls.read_into

        def counted_read(obj, *args, **kwargs):
            data = read(obj, *args, **kwargs)
            self.client.append(len(data))
            return data

        def counted_into(obj, buffer, *args, **kwargs):
            before = buffer.size if isinstance(buffer, moderngl.Buffer) else None
            read_into(obj, buffer, *args, **kwargs)
            (self.gpu if before is not None else self.client).append(obj.width * obj.height * 4 * 4)
        monkeypatch.setattr(cls, "read", counted_read)
        monkeypatch.setattr(cls, "read_into", counted_into)


@pytest.mark.parametrize("kind", list(KINDS))
def test_step_reads_back_one_texel_not_the_water(ctx, monkeypatch, kind):
    """A step() call reads back one record of 16 bytes at most (after an edit, the reduced texel; else the
    record of the call before the previous one, from its pixel buffer) and where that call slept its
    count of tiles computed (4 bytes, as the record), and volume() one texel: never the water (96 x 80
    cells, 30 KB), in calls of set and automatic substeps, long ones included."""
    terrain, water = _stats_inputs((80, 96))
    g = KINDS[kind](ctx, np.abs(terrain), water=np.minimum(water, 1.0))
    g.set_boundary("left", "level", 2.0)
    reads = _Reads(monkeypatch)
    for call in range(8):
        if call == 5:
            g.add_water(30.0, 40.0, 4.0, 20.0)
        before = len(reads.client)
        g.step(0.2, None if call % 2 else 3)
        assert sum(reads.client[before:]) <= 16 + 4, (call, reads.client[before:])
    g.step(30.0)                                     # past MAX_CHUNK: measured again, one texel each time
    assert g.iteration > 64 + 8 and max(reads.client) == 16 and max(reads.gpu) == 16, (reads.client, reads.gpu)
    count = len(reads.client)
    g.volume()
    assert reads.client[count:] == [16]
    g.release()
