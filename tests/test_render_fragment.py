"""hydro.render on the fragment backend (GL 4.1, macOS): the renderer draws a grid whose water, terrain and
flows are textures, its velocity pass a render-to-texture pass (render/velocity.frag) on common/velocity.glsl's
arithmetic. On llvmpipe posing as a GL 4.1 core driver with no compute shaders, storage buffers or image stores
(a child process: Mesa reads the overrides when it loads), a frame of a square and a hex grid must be the frame
the GL 4.3 renderer draws of the same scene here, and the velocity texture the grid's flows over its depths;
what needs compute shaders (fresh deposits, which come from erosion) is refused by name. In this process the
fragment grids run on the GL 4.3 context too, which checks the pass against the compute one directly."""
import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import moderngl
import numpy as np
import pytest

import hydro
import water_cases
from hydro import render
from hydro.water_fragment import FragmentHexWaterGrid, FragmentWaterGrid
from test_render import classify
from test_water_fragment import GL41_ENV

SKY = (0.2, 0.2, 0.2, 1.0)
SIZE = (120, 90)                        # pixels (width, height)
SHAPE = (16, 24)                        # cells (ny, nx)
KINDS = {"square": (hydro.WaterGrid, FragmentWaterGrid), "hex": (hydro.HexWaterGrid, FragmentHexWaterGrid)}


def _grid(ctx, kind, fragment=False):
    """A slope falling east into a pond, and a mound of water poured on the slope and left to run for a
    few steps: water moving along every axis of the lattice, foam where it runs fast. `fragment`: the
    fragment backend's grid on this context (hydro.WaterGrid gives it on GL 4.1 by itself)."""
    ny, nx = SHAPE
    x = np.arange(nx)[None, :] * np.ones((ny, 1))
    terrain = (4.0 * (1.0 - x / (nx - 1)) + 0.3 * np.sin(np.arange(ny)[:, None] / 3.0)).astype(np.float32)
    water = np.where(x > 2 * nx / 3, np.maximum(1.2 - terrain, 0.0), 0.0).astype(np.float32)
    grid = KINDS[kind][int(fragment)](ctx, terrain, water=water)
    grid.add_water(6.0, 8.0, 3.0, 25.0)
    for _ in range(6):
        grid.step(1 / 30)
    return grid


def _draw(ctx, renderer):
    ny, nx = SHAPE
    target = np.array([nx / 2, ny / 2, 1.0])
    eye = render.orbit_eye(target, 1.3 * nx, -90.0, 55.0)
    camera = render.perspective(45.0, SIZE[0] / SIZE[1], 0.5, 500.0) @ render.look_at(eye, target)
    fbo = ctx.simple_framebuffer(SIZE)
    fbo.clear(*SKY, depth=1.0)
    renderer.draw(camera, fbo)
    pixels = np.frombuffer(fbo.read(components=3), np.uint8).reshape(SIZE[1], SIZE[0], 3).astype(int)
    fbo.release()
    return pixels


def _velocity(renderer):
    return np.frombuffer(renderer.velocity_texture.read(), np.float32).reshape(*SHAPE, 2)


def _flows(grid, kind):
    return [grid.flow_x, grid.flow_y] + ([grid.flow_z] if kind == "hex" else [])


def _refusal(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the kind of error is checked by the test
        return [type(exc).__name__, str(exc)]
    return None


def child(path):
    """Run in the GL 4.1 process: each lattice's frame, velocity texture, water and flows into `path`
    (.npz), what the renderer refuses and the context's figures printed as JSON."""
    ctx = hydro.create_context()
    out = {"version": ctx.version_code, "vendor": ctx.info.get("GL_VENDOR", "?"),
           "compute": hydro._gl.has_compute(ctx), "refused": {}}
    arrays = {}
    for kind in KINDS:
        with _grid(ctx, kind) as grid, render.Renderer(ctx, grid) as renderer:
            out[f"{kind}_backend"] = grid.backend
            arrays[f"{kind}_pixels"] = _draw(ctx, renderer)
            arrays[f"{kind}_velocity"] = _velocity(renderer)
            arrays[f"{kind}_water"] = grid.water
            for axis, flow in zip("xyz", _flows(grid, kind)):
                arrays[f"{kind}_flow_{axis}"] = flow
            out["refused"][f"{kind}_deposits"] = _refusal(renderer.track_deposits)
            out[f"{kind}_tracking"] = renderer.tracking_deposits
            if kind == "hex":
                out["refused"]["hex_three_units"] = _refusal(lambda: render.Renderer(ctx, grid, texture_units=(1, 2, 3)))
    out["error"] = ctx.error
    np.savez(path, **arrays)
    print(json.dumps(out))


@pytest.fixture(scope="module")
def gl41(tmp_path_factory):
    """The GL 4.1 process's report and arrays."""
    path = tmp_path_factory.mktemp("gl41") / "frames.npz"
    here = Path(__file__).resolve().parent
    code = f"import sys; sys.path.insert(0, {str(here)!r}); import test_render_fragment as t; t.child({str(path)!r})"
    result = subprocess.run([sys.executable, "-c", code], cwd=here.parent, env=dict(os.environ, **GL41_ENV),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    if "Mesa" not in out["vendor"]:
        pytest.skip(f"Mesa's overrides make the GL 4.1 context with no compute shaders; this driver is "
                    f"{out['vendor']}, which gives a 4.1 context with them")
    with np.load(path) as arrays:
        out.update(arrays)
    return out


def _assert_same_picture(got, expected, what):
    """Pixel for pixel on CPU rasterisers (the same shaders over the same bits); elsewhere within 2 of 255
    on 99.5 % of the pixels (a GPU's fragment and compute stages may round the water's last bits apart)."""
    assert got.shape == expected.shape
    if water_cases.BITWISE:
        differ = np.any(got != expected, axis=-1)
        assert not differ.any(), f"{what}: {differ.sum()} pixels differ, by up to {np.abs(got - expected).max()}"
    else:
        near = np.all(np.abs(got - expected) <= 2, axis=-1)
        assert near.mean() >= 0.995, f"{what}: {np.mean(~near):.2%} of the pixels differ by more than 2"


def _expected_velocity(water, flows, face_width, min_depth, hexagonal):
    """common/velocity.glsl's cell velocity in float64: the mean of each axis's two faces over depth x
    face width, on the triangular lattice 2/3 of the sum of the three axes' means along them."""
    h = water.astype(np.float64)
    qx, qy = (f.astype(np.float64) for f in flows[:2])
    fx, fy = 0.5 * (qx[:, :-1] + qx[:, 1:]), 0.5 * (qy[:-1, :] + qy[1:, :])
    if hexagonal:
        qz = flows[2].astype(np.float64)
        fz = 0.5 * (qz[:-1, 1:] + qz[1:, :-1])          # z faces (x+1, y) and (x, y+1)
        s = np.sqrt(3) / 2
        vx, vy = 2 / 3 * (fx + 0.5 * fy - 0.5 * fz), 2 / 3 * (s * fy + s * fz)
    else:
        vx, vy = fx, fy
    wet = h > min_depth
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(wet[..., None], np.stack([vx, vy], axis=-1) / (h * face_width)[..., None], 0.0), wet


# ----------------------------------------------------------------------------------------- GL 4.1

def test_gl41_grids_run_the_fragment_backend(gl41):
    """The child's context is macOS's: GL 4.1 without compute shaders, its grids of the fragment backend,
    and nothing the renderer did left a GL error."""
    assert gl41["version"] == 410 and not gl41["compute"]
    assert gl41["square_backend"] == gl41["hex_backend"] == "fragment"
    assert gl41["error"] == "GL_NO_ERROR"


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_frame_is_the_gl43_renderers(gl41, ctx, kind):
    """The same scene drawn by the GL 4.3 renderer of a compute grid here: the same water, then the same
    picture, terrain, water and foam alike."""
    with _grid(ctx, kind) as grid, render.Renderer(ctx, grid) as renderer:
        assert grid.backend == "compute"
        water_cases.assert_same_bits(gl41[f"{kind}_water"], grid.water, err_msg=f"{kind}: the water")
        expected = _draw(ctx, renderer)
    terrain, water, _ = classify(gl41[f"{kind}_pixels"])
    assert terrain.mean() > 0.1 and water.mean() > 0.03, f"{kind}: terrain and water should be drawn"
    _assert_same_picture(gl41[f"{kind}_pixels"], expected, kind)


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_velocity_texture_is_the_flows_over_the_depths(gl41, kind):
    """The velocity the frame was drawn with, from the grid's flow textures, against its flows read back."""
    hexagonal = kind == "hex"
    flows = [gl41[f"{kind}_flow_{axis}"] for axis in "xyz"[:3 if hexagonal else 2]]
    geometry = (hydro.params.Geometry.hexagonal if hexagonal else hydro.params.Geometry.square)(1.0)
    expected, wet = _expected_velocity(gl41[f"{kind}_water"], flows, geometry.face_width,
                                       render.RenderStyle().dry_depth, hexagonal)
    got = gl41[f"{kind}_velocity"]
    assert np.abs(expected[..., 0]).max() > 0.1 and np.abs(expected[..., 1]).max() > 0.1, "the mound should run"
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6 * scale)
    assert np.all(got[~wet] == 0.0)


def test_gl41_deposits_are_refused_by_name(gl41):
    """Fresh deposits come from erosion, which the fragment backend does not have: track_deposits() says
    so and tracks nothing; a hex grid's velocity pass needs a fourth texture unit, and says so."""
    for kind in KINDS:
        name, message = gl41["refused"][f"{kind}_deposits"]
        assert name == "ValueError" and message.startswith("track_deposits: "), message
        assert "erosion" in message and "compute shaders" in message and "fragment backend" in message
        assert gl41[f"{kind}_tracking"] is False
    name, message = gl41["refused"]["hex_three_units"]
    assert name == "ValueError" and message.startswith("texture_units: ") and "four" in message, message


# ------------------------------------------------------------------------- this process (GL 4.3+)

@pytest.mark.parametrize("kind", list(KINDS))
def test_fragment_grid_draws_the_compute_grids_picture(ctx, kind):
    """A fragment grid on this context next to a compute grid of the same scene: the velocity pass
    rendered from textures gives the compute pass's texture, and the frame is the same."""
    with _grid(ctx, kind) as compute, render.Renderer(ctx, compute) as by_compute, \
            _grid(ctx, kind, fragment=True) as fragment, render.Renderer(ctx, fragment) as by_fragment:
        assert fragment.backend == "fragment"
        got, expected = _draw(ctx, by_fragment), _draw(ctx, by_compute)
        velocity, compute_velocity = _velocity(by_fragment), _velocity(by_compute)
    assert np.abs(compute_velocity).max() > 0.1
    if water_cases.BITWISE:
        water_cases.assert_same_bits(velocity, compute_velocity, err_msg=f"{kind}: the velocity")
    else:
        np.testing.assert_allclose(velocity, compute_velocity, rtol=1e-3, atol=1e-3 * np.abs(compute_velocity).max())
    _assert_same_picture(got, expected, kind)


def test_velocity_pass_ignores_the_games_gl_state_and_puts_it_back(ctx):
    """A game that bound its framebuffer by hand and left blending, culling, a scissor box and a colour
    mask on: the velocity pass renders every texel as if none were set, and update_velocity() and draw()
    leave GL's state as the game had it."""
    i, u = ctypes.c_int, ctypes.c_uint
    gl = hydro._native.gl_functions(ctx, {"glBindFramebuffer": (None, [u, u]), "glViewport": (None, [i] * 4),
                                      "glScissor": (None, [i] * 4), "glEnable": (None, [u]), "glDisable": (None, [u]),
                                      "glIsEnabled": (ctypes.c_ubyte, [u]), "glBlendFunc": (None, [u, u]),
                                      "glColorMask": (None, [ctypes.c_ubyte] * 4), "glActiveTexture": (None, [u]),
                                      "glGetIntegerv": (None, [u, ctypes.POINTER(i)])})

    def ints(name, n):
        out = (i * 4)()
        gl["glGetIntegerv"](name, out)
        return tuple(out[:n])

    GL_BLEND, GL_CULL_FACE, GL_DEPTH_TEST, GL_SCISSOR_TEST = 0x0BE2, 0x0B44, 0x0B71, 0x0C11
    flags = (GL_SCISSOR_TEST, GL_BLEND, GL_CULL_FACE, GL_DEPTH_TEST)

    def game_state():
        return (ints(0x8CA6, 1), ints(0x0BA2, 4), ints(0x0C10, 4), ints(0x0C23, 4), ints(0x84E0, 1),
                [gl["glIsEnabled"](f) for f in flags])

    previous = ctx.fbo
    with _grid(ctx, "hex", fragment=True) as grid, render.Renderer(ctx, grid) as renderer:
        renderer.update_velocity()
        clean = _velocity(renderer)
        game = ctx.simple_framebuffer((64, 48))
        stale = np.full(clean.shape, 5.0, np.float32).tobytes()
        renderer.velocity_texture.write(stale)
        gl["glBindFramebuffer"](0x8D40, game.glo)           # GL_FRAMEBUFFER, behind moderngl's back
        gl["glViewport"](8, 0, 56, 48)
        gl["glScissor"](10, 2, 4, 4)
        for flag in (GL_SCISSOR_TEST, GL_BLEND, GL_CULL_FACE):
            gl["glEnable"](flag)
        gl["glDisable"](GL_DEPTH_TEST)
        gl["glBlendFunc"](1, 1)                             # additive: would add to what the texture held
        gl["glColorMask"](1, 0, 1, 0)
        gl["glActiveTexture"](0x84C0 + 2)
        before = game_state()
        renderer.update_velocity()
        after_update, by_update = game_state(), _velocity(renderer)
        renderer.velocity_texture.write(stale)
        gl["glActiveTexture"](0x84C0 + 2)                   # reads and writes use moderngl's own unit
        renderer.draw(np.identity(4))
        after_draw, by_draw = game_state(), _velocity(renderer)
        gl["glColorMask"](1, 1, 1, 1)
        for flag in (GL_SCISSOR_TEST, GL_BLEND, GL_CULL_FACE):
            gl["glDisable"](flag)
        gl["glBlendFunc"](0x0302, 0x0303)                   # the fixture's SRC_ALPHA, ONE_MINUS_SRC_ALPHA
        gl["glActiveTexture"](0x84C0)
        (previous or ctx.detect_framebuffer(0)).use()
        game.release()
    assert np.abs(clean).max() > 0.1
    water_cases.assert_same_bits(by_update, clean, err_msg="update_velocity() under the game's state")
    water_cases.assert_same_bits(by_draw, clean, err_msg="draw()'s velocity under the game's state")
    assert before[0] == (game.glo,) and before[2] == (10, 2, 4, 4)
    assert after_update == before, "update_velocity() changed the game's GL state"
    assert after_draw == before, "draw() changed the game's GL state"


def test_refuses_deposits_and_three_units_on_a_hex_grid(ctx):
    """The fragment grids refuse what they do not have, here too: deposits (erosion) by name, before
    anything is made; a hex grid's velocity pass reads four textures."""
    with _grid(ctx, "square", fragment=True) as grid, render.Renderer(ctx, grid) as renderer:
        with pytest.raises(ValueError, match="^track_deposits: fresh deposits come from erosion, which needs "
                                             "compute shaders"):
            renderer.track_deposits()
        assert not renderer.tracking_deposits and renderer.deposit_reference is None
        with render.Renderer(ctx, grid, texture_units=(1, 2, 3)) as three:     # a square grid reads three
            three.update_velocity()
    with _grid(ctx, "hex", fragment=True) as grid:
        with pytest.raises(ValueError, match="^texture_units: a hex grid of the fragment backend needs four"):
            render.Renderer(ctx, grid, texture_units=(1, 2, 3))


def test_release_frees_the_velocity_pass(ctx, gl_objects):
    """The velocity pass's framebuffer and vertex array go with the renderer; the grid's textures stay."""
    grid = _grid(ctx, "square", fragment=True)
    held = {id(obj) for _, obj in gl_objects()}
    renderer = render.Renderer(ctx, grid)
    for _ in range(2):
        _draw(ctx, renderer)
    renderer.release()
    left = [name for name, obj in gl_objects() if id(obj) not in held]
    assert [name for name in left if name not in ("renderbuffer", "depth_renderbuffer")] == []
    grid.step(0.1)
    grid.release()
