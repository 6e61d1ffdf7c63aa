"""The public surface of the water grids: bad input is refused with a message naming the argument and
the grid untouched; lifetime (release, context manager, no leaks); contexts; shader loading."""
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import hydro
from hydro import _gl, _native, water_plan
from hydro.reference import water as ref
from water_cases import GRIDS, assert_same_bits, random_state, twins

KINDS = list(GRIDS)


def _snapshot(g):
    return (g.water, g.terrain, [f.copy() for f in (g.flow_x, g.flow_y)], g.boundaries, g.sim_time,
            g.iteration, g.ledger(), g.gauges)


def _same(a, b):
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert_same_bits(x, y)
        elif isinstance(x, list):
            for u, v in zip(x, y):
                assert_same_bits(u, v)
        else:
            assert x == y


BAD_CALLS = [
    # (what, call, exception, name in the message)
    ("nan water", lambda g: setattr(g, "water", np.full(g.shape, np.nan)), ValueError, "water"),
    ("inf terrain", lambda g: setattr(g, "terrain", np.full(g.shape, np.inf)), ValueError, "terrain"),
    ("negative depth", lambda g: setattr(g, "water", -np.ones(g.shape)), ValueError, "water"),
    ("wrong shape", lambda g: setattr(g, "water", np.ones((3, 3))), ValueError, "water"),
    ("transposed", lambda g: setattr(g, "terrain", np.ones(g.shape[::-1])), ValueError, "terrain"),
    ("text water", lambda g: setattr(g, "water", "deep"), TypeError, "water"),
    ("bool water", lambda g: setattr(g, "water", np.ones(g.shape, bool)), TypeError, "water"),
    ("zero dt", lambda g: g.step(0.0), ValueError, "dt"),
    ("nan dt", lambda g: g.step(float("nan")), ValueError, "dt"),
    ("string dt", lambda g: g.step("0.1"), TypeError, "dt"),
    ("zero substeps", lambda g: g.step(0.1, substeps=0), ValueError, "substeps"),
    ("float substeps", lambda g: g.step(0.1, substeps=2.5), TypeError, "substeps"),
    ("unstable substeps", lambda g: g.step(50.0, substeps=1), ValueError, "substeps"),
    ("huge dt", lambda g: g.step(1e9), ValueError, "dt"),
    ("bad side", lambda g: g.set_boundary("north", "wall"), ValueError, "side"),
    ("bad kind", lambda g: g.set_boundary("left", "sea"), ValueError, "kind"),
    ("negative inflow", lambda g: g.set_boundary("left", "inflow", -1.0), ValueError, "value"),
    ("nan level", lambda g: g.set_boundary("top", "level", math.nan), ValueError, "value"),
    ("wall with value", lambda g: g.set_boundary("top", "wall", 2.0), ValueError, "value"),
    ("span reversed", lambda g: g.set_boundary("left", "inflow", 1.0, span=(5, 2)), ValueError, "span"),
    ("span too long", lambda g: g.set_boundary("left", "inflow", 1.0, span=(0, 99)), ValueError, "span"),
    ("span not a pair", lambda g: g.set_boundary("left", "inflow", 1.0, span=3), TypeError, "span"),
    ("dig nan", lambda g: g.dig(math.nan, 2, 2, 1), ValueError, "x"),
    ("dig zero radius", lambda g: g.dig(3, 3, 0.0, 1), ValueError, "radius"),
    ("dig inf depth", lambda g: g.dig(3, 3, 2, math.inf), ValueError, "depth"),
    ("dig off the grid", lambda g: g.dig(500, 500, 2, 1), ValueError, "x, y"),
    ("water negative", lambda g: g.add_water(3, 3, 2, -1.0), ValueError, "volume"),
    ("water none", lambda g: g.add_water(3, 3, None, 1.0), TypeError, "radius"),
    ("dig overflow", lambda g: g.dig(3, 3, 2, 1e39), ValueError, "depth"),
    ("level overflow", lambda g: g.set_boundary("top", "level", -1e39), ValueError, "value"),
    ("drain negative", lambda g: g.remove_water(3, 3, 2, -1.0), ValueError, "volume"),
    ("bool dt", lambda g: g.step(True), TypeError, "dt"),
    ("sample nan", lambda g: g.sample([[math.nan, 1.0]]), ValueError, "points"),
    ("sample a flat pair", lambda g: g.sample([1.0, 2.0]), ValueError, "points"),
    ("sample three columns", lambda g: g.sample(np.ones((4, 3))), ValueError, "points"),
    ("sample nothing", lambda g: g.sample(np.zeros((0, 2))), ValueError, "points"),
    ("sample off the grid", lambda g: g.sample_async([[0.0, 0.0], [3.0, 11.6]]), ValueError, "points"),
    ("sample text", lambda g: g.sample("here"), TypeError, "points"),
    ("terrain rectangle nan", lambda g: g.set_terrain([[0.0, math.nan]], (1, 1)), ValueError, "heights"),
    ("terrain rectangle 1D", lambda g: g.set_terrain(np.ones(4), (1, 1)), ValueError, "heights"),
    ("terrain rectangle too big", lambda g: g.set_terrain(np.ones((13, 2))), ValueError, "heights"),
    ("terrain rectangle past the edge", lambda g: g.set_terrain(np.ones((3, 4)), (11, 2)), ValueError, "origin"),
    ("terrain origin negative", lambda g: g.set_terrain(np.ones((3, 4)), (2, -1)), ValueError, "origin"),
    ("terrain origin float", lambda g: g.set_terrain(np.ones((3, 4)), (2.5, 1)), TypeError, "origin"),
    ("terrain origin single", lambda g: g.set_terrain(np.ones((3, 4)), 2), TypeError, "origin"),
    ("gauge nan", lambda g: g.add_gauge((math.nan, 0.0), (3.0, 3.0)), ValueError, "p0"),
    ("gauge off the grid", lambda g: g.add_gauge((0.0, 0.0), (3.0, 12.0)), ValueError, "p1"),
    ("gauge of no length", lambda g: g.add_gauge((2.0, 2.0), (2.0, 2.0)), ValueError, "p1"),
    ("gauge across no face", lambda g: g.add_gauge((2.1, 2.1), (2.2, 2.3)), ValueError, "p0, p1"),
    ("gauge not a pair", lambda g: g.add_gauge(3.0, (2.0, 2.0)), TypeError, "p0"),
    ("gauge text", lambda g: g.add_gauge((1.0, 1.0), ("5", 2.0)), TypeError, "p1"),
]


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_is_named_and_changes_nothing(ctx, rng, kind, monkeypatch):
    """Each bad call raises naming the argument, and leaves the grid as it was; those that do not
    depend on the water refuse before any GPU work (no stats read back, which waits for the GPU)."""
    terrain, water = random_state(rng, (12, 14))
    g = GRIDS[kind](ctx, terrain, water=water)
    g.set_boundary("left", "inflow", 1.0)
    g.step(0.3)
    g.add_water(3, 3, 1.5, 0.5)                   # an edit: the next step() waits for its stats
    before = _snapshot(g)
    reads = []
    read_stats = type(g)._read_stats
    monkeypatch.setattr(type(g), "_read_stats", lambda self: reads.append(1) or read_stats(self))
    measured = False
    for what, call, exc, name in BAD_CALLS:
        with pytest.raises(exc) as info:
            call(g)
        assert str(info.value).startswith((name + ":", name + "[")), f"{what}: message {info.value!r} does not name {name!r}"
        if what in ("unstable substeps", "huge dt"):        # refused for the water as measured
            measured = True
        else:
            assert not reads and (measured or g._sync_next), f"{what}: read the stats back before refusing"
        reads.clear()
        _same(before, _snapshot(g))
    g.release()


# A slip of a game's code: an attribute that is misspelt, fixed when the grid is made or read-only is
# refused with what is meant, and nothing is set (it used to become a new attribute nothing reads);
# the settable ones validate like every other setter.
@pytest.mark.parametrize("kind", KINDS)
def test_attributes_that_cannot_be_set_are_refused_with_what_is_meant(ctx, rng, kind):
    terrain, water = random_state(rng, (12, 14))
    g = GRIDS[kind](ctx, terrain, water=water)
    name_of = type(g).__name__
    before = _snapshot(g)
    for name, value, message in [
        ("frictoin", 0.3, f"{name_of} has no attribute 'frictoin' (did you mean 'friction'?)"),
        ("friction", 0.3, f"{name_of}.friction cannot be set: it is fixed when the grid is made "
                          f"(grid.params.friction is 0.02); make a new {name_of} with friction=..."),
        ("watr", water, "(did you mean 'water'?)"),
        ("nx", 3, f"{name_of}.nx is read-only"),
        ("iteration", 0, f"{name_of}.iteration is read-only"),
        ("volume", 1.0, f"{name_of}.volume is a method"),
    ]:
        with pytest.raises(AttributeError) as info:
            setattr(g, name, value)
        assert message in str(info.value) and "kernel, rain, sediment, sim_time, sleep, terrain, water" in str(info.value)
        assert name not in vars(g) or name == "nx" and g.nx == 14
        _same(before, _snapshot(g))
    for name, value in [("sim_time", math.nan), ("sim_time", -1.0), ("kernel", "fast"), ("kernel", 1)]:
        with pytest.raises(ValueError, match=f"^{name}: "):
            setattr(g, name, value)
    _same(before, _snapshot(g))
    g.sim_time, g.kernel = 12.5, "cells"
    assert (g.sim_time, g.kernel) == (12.5, "cells")
    g.step(0.2)
    assert g.sim_time == pytest.approx(12.7)
    g.release()


def test_a_games_subclass_keeps_its_own_attributes(ctx):
    """The guard is hydro's classes' own: a game's subclass can keep state of its own on the grid."""
    class Pond(hydro.WaterGrid):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.label = "pond"

    g = Pond(ctx, np.zeros((8, 9)))
    g.fish = 3
    assert (g.label, g.fish) == ("pond", 3)
    g.release()
    plain = hydro.WaterGrid(ctx, np.zeros((8, 9)))
    with pytest.raises(AttributeError, match="no attribute 'fish'"):
        plain.fish = 3
    plain.release()


@pytest.mark.parametrize("kwargs, exc, name", [
    ({"friction": 1.5}, ValueError, "friction"),
    ({"friction": -0.1}, ValueError, "friction"),
    ({"gravity": 0.0}, ValueError, "gravity"),
    ({"cell_size": -1.0}, ValueError, "cell_size"),
    ({"cell_size": math.inf}, ValueError, "cell_size"),
    ({"gravity": 1e39}, ValueError, "gravity"),
    ({"kernel": "three-pass"}, ValueError, "kernel"),
    ({"kernel": 3}, ValueError, "kernel"),
    ({"pipe_area": "wide"}, ValueError, "pipe_area"),
    ({"pipe_area": -2.0}, ValueError, "pipe_area"),
    ({"water": np.ones((2, 2))}, ValueError, "water"),
])
def test_bad_constructor_arguments(ctx, kwargs, exc, name):
    with pytest.raises(exc, match=f"^{name}:"):
        hydro.WaterGrid(ctx, np.zeros((6, 7)), **kwargs)


def test_bad_terrain_and_context(ctx):
    with pytest.raises(ValueError, match="^terrain:"):
        hydro.WaterGrid(ctx, np.zeros(7))
    with pytest.raises(ValueError, match=r"^terrain: expected a 2D array \(ny, nx\) with ny, nx >= 1, got shape \(0, 5\)"):
        hydro.WaterGrid(ctx, np.zeros((0, 5)))
    with pytest.raises(ValueError, match="^terrain:"):
        hydro.WaterGrid(ctx, np.full((4, 4), np.nan))
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # the error alone, no RuntimeWarning before it
        with pytest.raises(ValueError, match="^water: values overflow float32"):
            hydro.WaterGrid(ctx, np.zeros((4, 4)), water=np.full((4, 4), 1e39))
    with pytest.raises(ValueError, match="^pipe_area: expected 'depth' or a number > 0, got 'dept'"):
        hydro.WaterGrid(ctx, np.zeros((4, 4)), pipe_area="dept")
    with pytest.raises(TypeError, match="^ctx:"):
        hydro.WaterGrid("not a context", np.zeros((4, 4)))
    with pytest.raises(TypeError, match="^ctx: expected a moderngl.Context, got ndarray"):
        hydro.WaterGrid(np.zeros((4, 4)), ctx)           # the arguments swapped


@pytest.mark.parametrize("cls", [hydro.WaterGrid, hydro.HexWaterGrid])
def test_a_call_missing_arguments_names_the_class_and_the_arguments(ctx, cls):
    with pytest.raises(TypeError, match=rf"^{cls.__name__}.__init__\(\) missing 2 required positional "
                                        r"arguments: 'ctx' and 'terrain'"):
        cls()
    with pytest.raises(TypeError, match=rf"^{cls.__name__}.__init__\(\) got an unexpected keyword argument 'depth'"):
        cls(ctx, np.zeros((4, 4)), depth=np.ones((4, 4)))
    g = cls(ctx, np.zeros((4, 5)), 2.0, 9.0, 0.1, water=np.ones((4, 5)), kernel="cells", pipe_area=0.5)
    assert (g.params.cell_size, g.params.gravity, g.params.friction, g.params.pipe_area, g.kernel) == (2.0, 9.0, 0.1, 0.5, "cells")
    assert g.water.sum() == 20.0
    g.release()


@pytest.mark.parametrize("cls", [hydro.WaterGrid, hydro.HexWaterGrid])
def test_a_grid_the_context_cannot_hold_is_refused_before_any_gpu_work(ctx, cls, gl_objects):
    side = ctx.info["GL_MAX_TEXTURE_SIZE"]
    with pytest.raises(ValueError, match=rf"^terrain: shape \(2, {side}\) is too large .*GL_MAX_TEXTURE_SIZE is {side}"):
        cls(ctx, np.zeros((2, side), np.float32))
    assert gl_objects() == []                     # nothing left behind
    for kernel in (None, "blocked"):              # the largest side it takes works, on every kernel: the
        g = cls(ctx, np.zeros((2, side - 1), np.float32),   # blocked kernel's state, whose margin does not
                water=np.full((2, side - 1), 0.5, np.float32), kernel=kernel)  # fit, gives way to the fused one
        g._retune(g._tuning.replace(one="fused", many="blocked"))
        g.step(0.01, substeps=4)
        assert g.volume() == pytest.approx(0.5 * 2 * (side - 1) * g.geometry.cell_area, rel=1e-6)
        assert g._last_call.kernel == "fused"
        g.release()


def test_release_is_idempotent_and_use_after_release_is_clear(ctx):
    with hydro.WaterGrid(ctx, np.zeros((5, 6))) as g:
        g.step(0.1)
    g.release()
    for call in (lambda: g.step(0.1), lambda: g.water, lambda: g.volume(), lambda: g.dig(1, 1, 1, 1),
                 lambda: g.boundaries, lambda: g.ledger(), lambda: setattr(g, "kernel", "cells"),
                 lambda: setattr(g, "sim_time", 1.0), lambda: g.water_texture, lambda: g.terrain_texture):
        with pytest.raises(RuntimeError, match="after release"):
            call()



def test_a_grid_whose_standalone_context_is_not_current_refuses_and_spoils_nothing():
    """GL calls go to the current context, and GL names coincide between contexts: a grid called while
    another standalone context is current would read that one's objects and overwrite them. It raises
    instead, and both grids are as they were; made current again, it works."""
    code = """if True:
        import numpy as np, moderngl, hydro
        a = moderngl.create_standalone_context(backend="egl", require=430)
        ga = hydro.WaterGrid(a, np.zeros((16, 20)), water=np.ones((16, 20)))
        b = moderngl.create_standalone_context(backend="egl", require=430)      # b is current now
        gb = hydro.WaterGrid(b, np.zeros((16, 20)), water=np.full((16, 20), 5.0))
        for call in (lambda: ga.step(0.1), lambda: ga.volume(), lambda: ga.water, lambda: ga.water_texture,
                     lambda: setattr(ga, "water", np.zeros((16, 20)))):
            try:
                call()
                print("not refused")
            except hydro.HydroGLError as e:
                assert "not current" in str(e), e
        print("b", gb.volume(), gb.water.sum())
        with a:
            ga.step(0.1)
            print("a", ga.volume())
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "not refused" not in out.stdout
    assert "b 1600.0 1600.0" in out.stdout and "a 320.0" in out.stdout, out.stdout

def test_a_grid_is_not_copied_or_pickled(ctx):
    """A copy would share the GPU objects, so releasing it would break the original: copy, deepcopy
    and pickle are refused with what to save instead, and the grid goes on working."""
    import copy
    import pickle
    with hydro.WaterGrid(ctx, np.zeros((5, 6)), water=np.ones((5, 6))) as g:
        for call in (copy.copy, copy.deepcopy, pickle.dumps):
            with pytest.raises(TypeError, match="cannot be copied or pickled.*np.savez"):
                call(g)
        g.step(0.1)
        assert g.volume() == pytest.approx(30.0)


@pytest.mark.parametrize("kind", list(GRIDS))
def test_release_frees_every_gpu_object_on_every_kernel(ctx, kind, gl_objects):
    """After release() nothing the grid made holds GPU memory, whichever kernels its calls took: the
    cell-wise, fused and blocked kernels (walled and with a ring, computing every tile and sleeping, with
    erosion as GPUs run it), brushes, the stats and the flows read back."""
    # the blocked kernel computing every tile on odd tiles, and sleeping as GPUs do (its own sleeping tiles)
    runs = [(None, {}), ("cells", {}), ("fused", {}), ("blocked", dict(blocked=((5, 3), 2), wide=())),
            ("blocked", dict(blocked=((8, 8), 2), sleep_blocked=True)), (None, "erosion")]
    for kernel, tuning in runs:
        g = GRIDS[kind](ctx, np.zeros((40, 44)), water=np.ones((40, 44)), kernel=kernel)
        if tuning == "erosion":
            g._retune(water_plan.Tuning.for_device("gpu", kind == "hex"))
            g.erosion = hydro.Erosion()
        elif tuning:
            g._retune(g._tuning.replace(**tuning))
        for sides in ("wall", "open"):
            if sides == "open":
                g.set_boundary("left", "level", 1.0)
            g.step(0.05, substeps=4)
            g.step(0.05, substeps=1)
        g.add_water(3, 3, 2, 1.0)
        g.remove_water(3, 3, 2, 0.5)
        g.dig(10, 10, 3, 0.5)
        g.volume(), g.flow_x, g.water_texture, g.flow_buffers
        g.sample([[1.0, 2.0]]), g.sample_async(np.ones((100, 2))), g.sample_async([[3.0, 3.0]])
        gauge = g.add_gauge((3.5, 0.0), (3.5, 20.0))
        g.step(0.05, substeps=3)
        g.step(0.05, substeps=1)
        gauge.discharge, gauge.volume
        assert gl_objects(), "the grid holds its textures and buffers until release"
        assert tuning != "erosion" or "eroding" in g._kernels
        g.release()
        assert gl_objects() == [], f"kernel={kernel} {tuning}"


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_create_step_release_cycles_leak_nothing(ctx):
    terrain = np.zeros((256, 256))
    def cycle():
        g = hydro.WaterGrid(ctx, terrain, water=np.ones((256, 256)))
        g.step(0.05)
        g.volume()
        g.release()
    for _ in range(5):
        cycle()
    start = _rss_mb()
    for _ in range(40):                  # each grid holds ~2.5 MB of textures and buffers
        cycle()
    assert _rss_mb() - start < 20


def test_grid_on_a_host_context_leaves_its_framebuffer_usable(ctx):
    fbo = ctx.simple_framebuffer((8, 8))
    fbo.use()
    g = hydro.WaterGrid(ctx, np.zeros((6, 6)), water=np.ones((6, 6)))
    g.step(0.1)
    fbo.clear(0.25, 0.5, 0.75, 1.0)
    pixel = np.frombuffer(fbo.read(components=4), np.uint8)[:4].astype(int)
    assert np.abs(pixel - [64, 128, 191, 255]).max() <= 1        # drivers round 127.5 either way
    g.release()
    ctx.detect_framebuffer(0).use()               # never leave a released framebuffer bound
    fbo.release()


@pytest.mark.parametrize("kind", list(GRIDS))
@pytest.mark.parametrize("kernel", ["cells", "fused", "blocked"])
def test_step_leaves_the_games_texture_units_alone(ctx, rng, kind, kernel):
    """A game that binds its textures once keeps them through step() with every kernel and call length:
    the water grids never bind texture units."""
    probe = ctx.compute_shader("""#version 430
        layout(local_size_x = 1) in;
        layout(binding = 0) uniform sampler2D u_a;
        layout(binding = 1) uniform sampler2D u_b;
        layout(std430, binding = 0) buffer Out { vec4 u_out[]; };
        void main() { u_out[0] = texelFetch(u_a, ivec2(0), 0); u_out[1] = texelFetch(u_b, ivec2(0), 0); }""")
    mine = [ctx.texture((1, 1), 4, np.full(4, v, np.float32).tobytes(), dtype="f4") for v in (42.0, 43.0)]
    out = ctx.buffer(reserve=32)
    terrain, water = random_state(rng, (20, 24))
    g = GRIDS[kind](ctx, terrain, water=water, kernel=kernel)
    mine[0].use(0)
    mine[1].use(1)
    for substeps in (1, 2, 5):
        g.step(0.05, substeps=substeps)
        out.bind_to_storage_buffer(0)
        probe.run(1, 1, 1)
        assert np.frombuffer(out.read(), np.float32).reshape(2, 4)[:, 0].tolist() == [42.0, 43.0], substeps
    g.release()
    for obj in (probe, out, *mine):
        obj.release()


def test_on_a_context_without_compute_shaders_the_water_runs_as_fragment_passes(ctx):
    """As on macOS (GL 4.1, no compute shaders): create_context() gives the 4.1 context, WaterGrid and
    HexWaterGrid run on their fragment backend (the model's arguments too: inertia, Manning), what needs
    compute (a kernel, the smoke) is refused by name."""
    if "Mesa" not in ctx.info["GL_VERSION"]:
        pytest.skip("the GL version is lowered through Mesa's MESA_GL_VERSION_OVERRIDE")
    code = """if True:
        import numpy as np, hydro
        ctx = hydro.create_context()
        print("version", ctx.version_code)
        for cls in (hydro.WaterGrid, hydro.HexWaterGrid):
            g = cls(ctx, np.zeros((12, 16)), water=np.ones((12, 16)))
            g.add_water(8, 6, 3, 5.0)
            g.step(0.5)
            print(cls.__name__, g.backend, abs(g.volume() / g.ledger()["expected"] - 1) < 1e-6, g.iteration > 0)
        g = hydro.HexWaterGrid(ctx, np.zeros((12, 16)), water=np.ones((12, 16)), inertia=True, manning=0.03)
        g.add_water(8, 6, 3, 5.0)
        g.step(0.5)
        print("inertia", g.params.inertia, g.params.manning, abs(g.volume() / g.ledger()["expected"] - 1) < 1e-6)
        for make in (lambda: hydro.WaterGrid(ctx, np.zeros((4, 4)), kernel="cells"),
                     lambda: hydro.SmokeGrid(ctx, (16, 16))):
            try:
                make()
            except (ValueError, hydro.HydroGLError) as e:
                print("refused:", e)
    """
    env = dict(os.environ, MESA_GL_VERSION_OVERRIDE="4.1", MESA_GLSL_VERSION_OVERRIDE="410",
               MESA_EXTENSION_OVERRIDE="-GL_ARB_compute_shader -GL_ARB_shader_storage_buffer_object "
                                       "-GL_ARB_shader_image_load_store")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "version 410"
    assert lines[1] == "WaterGrid fragment True True" and lines[2] == "HexWaterGrid fragment True True", lines
    assert lines[3] == "inertia True 0.03 True", lines[3]
    assert lines[4].startswith("refused: kernel: 'cells' needs compute shaders (OpenGL 4.3)"), lines[4]
    assert lines[5].startswith("refused: ctx: hydro needs OpenGL 4.3") and "OpenGL 4.1" in lines[5], lines[5]


def test_strict_defines_and_compile_errors(ctx, monkeypatch):
    with pytest.raises(ValueError, match="does not use 'NOT_THERE'"):
        _gl.source("water/settle.comp", {"HEX": 0, "NOT_THERE": 1})
    with pytest.raises(FileNotFoundError):
        _gl.program(ctx, "water/nope.comp")
    broken = "#version 430\nlayout(local_size_x = 1) in;\nvoid main() { undefined_call(); }\n"
    real_read = _gl._read
    monkeypatch.setattr(_gl, "_read", lambda name: broken if name == "test/broken.comp" else real_read(name))
    with pytest.raises(_gl.ShaderError) as info:
        _gl.program(ctx, "test/broken.comp")
    text = str(info.value)
    assert "test/broken.comp" in text and "   3  void main() { undefined_call(); }" in text
    ctx.error                                          # a failed compile may leave an error flag: clear it


def test_bindings_come_from_the_shared_glsl_file():
    assert _gl.BINDINGS["B_WATER"] == 1 and _gl.BINDINGS["B_LEDGER"] == 7


def test_readme_examples_run_on_a_host_context():
    # In a subprocess: the example makes its own context current, which would change this process's.
    # The embedding, drawing and smoke examples run in order, as one script, as a reader would paste them.
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    blocks = [readme.split(f"<!-- {name}-example -->")[1].split("```python")[1].split("```")[0]
              for name in ("embedding", "drawing", "smoke")]
    out = subprocess.run([sys.executable, "-c", "\n".join(blocks)], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    volume, expected = map(float, lines[0].split())
    assert volume == pytest.approx(expected, rel=1e-6) and volume > 50.0
    assert float(lines[1]) > 0.2                    # the camera sees the terrain and the water (0.34 on llvmpipe)
    residual, divergence = map(float, lines[2].split())
    assert residual <= 1e-4 and divergence < 1e-2


def test_failed_construction_releases_what_it_made(ctx, monkeypatch):
    """A grid whose construction fails part-way frees the textures and buffers it made (here the
    statistics buffer cannot be created), and an owned context too."""
    made = []
    real_buffer = ctx.buffer

    def failing_buffer(*args, **kwargs):
        if kwargs.get("reserve") == hydro.water_stats.STATS_DTYPE.itemsize:    # the statistics record
            raise MemoryError("out of GPU memory")
        buf = real_buffer(*args, **kwargs)
        made.append(buf)
        return buf

    monkeypatch.setattr(ctx, "buffer", failing_buffer)
    with pytest.raises(MemoryError):
        hydro.WaterGrid(ctx, np.zeros((6, 7)))
    monkeypatch.undo()
    assert made and all(type(b.mglo).__name__ == "InvalidObject" for b in made)


@pytest.mark.parametrize("kind", KINDS)
def test_boundaries_read_back_as_they_were_set(ctx, kind):
    g = GRIDS[kind](ctx, np.zeros((8, 10)))
    g.set_boundary("left", "inflow", 2.0, span=(0, 4))
    g.set_boundary("left", "inflow", 10.0, span=(4, 8))
    g.set_boundary("bottom", "inflow", 3.0)
    g.set_boundary("top", "level", 1.5, span=(2, 6))
    g.set_boundary("right", "outflow", 0.5, span=(1, 3))
    table = g._table.copy()
    runs = g.boundaries
    assert runs["left"] == [("inflow", 0, 4, pytest.approx(2.0)), ("inflow", 4, 8, pytest.approx(10.0))]
    assert runs["bottom"] == [("inflow", 0, 10, pytest.approx(3.0))]
    other = GRIDS[kind](ctx, np.zeros((8, 10)))
    for side, side_runs in runs.items():
        for k, first, stop, value in side_runs:
            other.set_boundary(side, k, value, span=(first, stop))
    np.testing.assert_allclose(other._table["value"], table["value"], rtol=1e-6)
    np.testing.assert_array_equal(other._table["kind"], table["kind"])
    g.release()
    other.release()


def test_digging_stays_inside_float32(ctx):
    g = hydro.WaterGrid(ctx, np.zeros((6, 6)))
    g.dig(3, 3, 2, 3e38)
    g.dig(3, 3, 2, 3e38)
    assert np.all(np.isfinite(g.terrain))
    g.release()


@pytest.mark.parametrize("rows, records", [(0, 4096), (0, 6), (0, 3), (5, 4096), (16, 4096)],
                         ids=["tiles", "tiles-walk-2", "tiles-walk-4", "strips-5", "strips-16"])
@pytest.mark.parametrize("kind", KINDS)
def test_both_stats_reductions_measure_the_same(ctx, rng, kind, rows, records):
    """The GPU reduction (tiles in shared memory; with few records allowed, each workgroup walks up
    2 or 4 tiles, past the top of the 3 x 3 tiles here) and the CPU one (column strips) give the
    volume, the deepest water and the lowest edge bed the step planner reads, on a ragged grid."""
    terrain, water = (a.astype(np.float32).astype(np.float64) for a in random_state(rng, (37, 45)))
    g = GRIDS[kind](ctx, terrain, water=water)
    g._retune(g._tuning.replace(stats_rows=rows, stats_records=records))
    assert g._stats.walk == (1 if rows else {4096: 1, 6: 2, 3: 4}[records])
    stats = g._read_stats()
    edge = np.concatenate([terrain[0], terrain[-1], terrain[:, 0], terrain[:, -1]])
    assert stats["volume"] == pytest.approx(water.sum() * g.geometry.cell_area, rel=1e-12)
    assert stats["max_depth"] == water.max()
    assert stats["min_terrain"] == edge.min()
    g.release()


# step() plans from the stats of earlier calls through a fenced, persistently mapped ring, so it does
# not wait for the GPU to finish the previous call.

def test_fenced_readback_returns_the_newest_finished_record(ctx):
    ring = _native.FencedReadback.create(ctx, 16)
    assert ring is not None                      # llvmpipe has GL 4.5: buffer storage and sync objects
    source = ctx.buffer(reserve=16)
    for seq in range(1, 6):                      # more records than slots: the ring wraps
        source.write(np.full(4, seq, np.float32).tobytes())
        ring.push(source, seq)
    data, seq = ring.newest(4)                   # a GPU may still be copying record 5: then record 4
    assert seq in (4, 5) and np.all(np.frombuffer(data, np.float32) == seq)
    ctx.finish()
    data, seq = ring.newest(4)
    assert seq == 5 and np.all(np.frombuffer(data, np.float32) == 5)
    real = ring._done                            # the GPU still busy with record 5: record 4
    ring._done = lambda slot, timeout_ns=0: ring._seqs[slot] != 5 and real(slot, timeout_ns)
    data, seq = ring.newest(4)
    assert seq == 4 and np.all(np.frombuffer(data, np.float32) == 4)
    with pytest.raises(ValueError, match="oldest: record 1 is not in the ring"):
        ring.newest(1)                           # overwritten by record 4
    ring._done = real
    # record(seq) is that record, newer ones done or not (a smoke step reads the check it ran ahead of)
    assert np.all(np.frombuffer(ring.record(3), np.float32) == 3)
    assert np.all(np.frombuffer(ring.record(5), np.float32) == 5)
    with pytest.raises(ValueError, match="seq: record 2 is not in the ring"):
        ring.record(2)                           # overwritten by record 5
    ring.release()
    ring.release()                               # idempotent
    source.release()


def _deep_column(n=24):
    water = np.full((n, n), 0.2)
    water[n // 2 - 2:n // 2 + 2, n // 2 - 2:n // 2 + 2] = 3.0     # spreads out: the deepest water falls
    return np.zeros((n, n)), water


@pytest.mark.parametrize("kind", KINDS)
def test_step_plans_from_the_call_before_the_previous_one(ctx, kind):
    """step() plans from the stats queued at the end of the call before the previous one, with the
    depth margin widened for two calls, whether or not the GPU has finished the previous call; after an
    edit it plans from the stats as they are, waiting for them; a call that would wait on the previous
    call's own record never does."""
    terrain, water = _deep_column()
    g = GRIDS[kind](ctx, terrain, water=water, friction=0.1)
    dt = 1.0
    g.step(dt)
    before = g._read_stats()                     # queued at the end of the first call
    g.step(dt)
    last = g._read_stats()
    assert last["max_depth"] < before["max_depth"]
    ring, real = g._stats.ring, g._stats.ring._done
    ring._done = lambda slot, timeout_ns=0: (ring._seqs[slot] != g._stats.seq or pytest.fail("waited")) and real(slot, timeout_ns)
    taken = g.step(dt)
    assert taken == g._auto_substeps(before, dt, lag=1)
    assert taken > g._auto_substeps(last, dt)    # the older, deeper water and the wider margin
    g.add_water(12.0, 12.0, 3.0, 40.0)           # an edit: the next call plans from the water as it is
    now = g._read_stats()
    assert g.step(dt) == g._auto_substeps(now, dt)
    assert g.step(dt) == g._auto_substeps(now, dt, lag=1)          # the edit's stats are the newer
    ring._done = real
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-5)
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_same_calls_give_the_same_bits_whatever_the_gpus_timing(ctx, kind):
    """A game's replay: the same grid and the same calls, one run with the CPU waiting for the GPU after
    every call and one without, give the same substeps and the same bits; a volume() read in between
    (a HUD) changes nothing."""
    runs = []
    for wait in (False, True):
        terrain, water = _deep_column(40)
        g = GRIDS[kind](ctx, terrain, water=water, friction=0.05)
        g.set_boundary("left", "inflow", 3.0, span=(5, 15))
        taken = []
        for frame in range(30):
            taken.append(g.step(0.2))
            if wait:
                ctx.finish()
                g.volume()
            if frame == 12:
                g.add_water(20.0, 20.0, 4.0, 30.0)
        runs.append((taken, g.water, g.flow_x, g.flow_y, g.ledger()))
        g.release()
    (ta, *a, la), (tb, *b, lb) = runs
    assert ta == tb and len(set(ta)) > 1
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.view(np.uint32), y.view(np.uint32))
    assert la == lb


@pytest.mark.parametrize("kind", KINDS)
def test_step_reads_the_stats_where_buffers_cannot_be_mapped(ctx, monkeypatch, kind):
    """Without persistent mapping (GL < 4.4 without ARB_buffer_storage) step() reads the previous call's
    stats, waiting for the GPU, and plans from them exactly."""
    monkeypatch.setattr(_native.FencedReadback, "create", classmethod(lambda cls, ctx, size, slots=3: None))
    terrain, water = _deep_column()
    g = GRIDS[kind](ctx, terrain, water=water, friction=0.1)
    assert g._stats.ring is None
    for _ in range(3):
        last = g._read_stats()
        assert g.step(0.3) == g._auto_substeps(last, 0.3)
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-5)
    g.release()


@pytest.mark.parametrize("kernel", ["cells", "fused", "blocked"])
def test_grids_sharing_a_context_step_as_if_alone(ctx, kernel):
    """Grids of different sizes and lattices on one context share its programs, whose uniforms are
    written only when they change: interleaved steps of the same dt (nothing changes but the grid)
    still give each grid what the float64 reference gives it."""
    specs = [("square", (13, 21), 1), ("square", (30, 9), 2), ("hex", (17, 17), 3), ("hex", (9, 24), 4)]
    pairs = []
    for kind, shape, seed in specs:
        terrain, water = random_state(np.random.default_rng(seed), shape)
        pairs.append(twins(ctx, kind, terrain, water, friction=0.1, kernel=kernel))
    for _ in range(3):
        for g, s in pairs:
            g.step(0.05, substeps=2)
            ref.step(s, 0.05, substeps=2)
    for g, s in pairs:
        np.testing.assert_allclose(g.water, s.water, rtol=0, atol=2e-5 * s.water.max())
        g.release()


def test_uniforms_are_written_when_they_change(ctx):
    prog = _gl.program(ctx, "water/add_water.comp")
    _gl.set_uniforms(prog, u_amount=1.5, u_origin=(1, 2))
    prog["u_amount"].value = 0.0                  # behind set_uniforms' back: it still thinks 1.5
    _gl.set_uniforms(prog, u_amount=1.5)
    assert prog["u_amount"].value == 0.0
    _gl.set_uniforms(prog, u_amount=2.5, u_origin=(3, 4))
    assert prog["u_amount"].value == 2.5 and tuple(prog["u_origin"].value) == (3, 4)


@pytest.mark.parametrize("kind", KINDS)
def test_fused_tile_by_grid_size(ctx, kind):
    """The fused kernel takes the lattice's large tile where the grid has min_tiles of them, else the
    small one (fewer, larger workgroups leave a GPU idle on small grids)."""
    tuning = water_plan.Tuning.for_device("gpu", kind == "hex")
    big, rows = tuning.fused_tile, 4
    side_x, side_y = big[0] * tuning.min_tiles // rows, big[1] * rows     # exactly min_tiles large tiles
    assert water_plan.fused_tile(tuning, side_x, side_y) == big
    assert water_plan.fused_tile(tuning, side_x - big[0], side_y) == tuning.small_tile
    g = GRIDS[kind](ctx, np.zeros((side_y, side_x - big[0])), kernel="fused")
    g._retune(tuning)
    g.step(0.01)
    assert g._kernel_object("fused").tile == tuning.small_tile
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_cell_wise_kernel_reads_flows_through_views_or_buffers_alike(ctx, rng, kind):
    """The cell-wise kernel reads its input flows through r32f buffer-texture views of the flow buffers
    where that is faster (llvmpipe) and as storage buffers elsewhere: the same numbers to the bit,
    with every boundary kind."""
    terrain, water = random_state(rng, (29, 37))
    grids = []
    for views in (False, True):
        g = GRIDS[kind](ctx, terrain, water=water, friction=0.1, kernel="cells")
        g._retune(g._tuning.replace(buffer_views=views))
        made = g._kernel_object("cells").views is not None
        if views and not made and hydro._gl.device_kind(ctx) == "gpu":
            for h in grids + [g]:
                h.release()
            pytest.skip("this GPU's driver made no buffer-texture views (GPUs read storage buffers anyway)")
        assert made == views
        g.set_boundary("left", "inflow", 0.7)
        g.set_boundary("right", "level", 0.8)
        g.set_boundary("top", "outflow", 0.2)
        for _ in range(3):
            g.step(0.1, substeps=3)
        grids.append(g)
    a, b = grids
    assert_same_bits(a.water, b.water)
    for fa, fb in zip(a.flow_buffers, b.flow_buffers):
        assert_same_bits(np.frombuffer(fa.read(), np.float32), np.frombuffer(fb.read(), np.float32))
    assert not np.array_equal(a.water, water.astype(np.float32))
    for g in grids:
        g.release()


def test_buffer_views_need_enough_image_units(ctx):
    buf = ctx.buffer(reserve=64)
    assert _native.BufferViews.create(ctx, [buf], units=1 << 20) is None
    views = _native.BufferViews.create(ctx, [buf], units=1)
    assert views is not None
    views.release()
    buf.release()
