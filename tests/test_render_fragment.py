"""hydro.render on the fragment backend (GL 4.1, macOS): the renderer draws a grid whose water, terrain and
flows are textures, its velocity pass a render-to-texture pass (render/velocity.frag) on common/velocity.glsl's
arithmetic. On llvmpipe posing as a GL 4.1 core driver with no compute shaders, storage buffers or image stores
(a child process: Mesa reads the overrides when it loads), a frame of a square and a hex grid must be the frame
the GL 4.3 renderer draws of the same scene here, and the velocity texture the grid's flows over its depths;
fresh deposits (render/deposits.frag, the reference copied by render/deposit_reference.frag) are the compute
passes' texture, in every form track_deposits() takes. In this process the fragment grids run on the GL 4.3
context too, which checks the passes against the compute ones directly."""
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


def _deposits(renderer):
    return np.frombuffer(renderer.deposits_texture.read(), np.float32).reshape(*SHAPE, 2)


def _deposit_scene(ctx, grid, renderer):
    """Fresh deposits on _grid's scene through each form of track_deposits(): tracked from the terrain as
    it is, sediment carried over the slope and the pond, a block of ground raised, the reference taken
    again in a rectangle over part of it (clipped to the grid), then a reference given; a frame drawn
    with them, and forget_deposits(). The arrays each step leaves, and the grid's state they came from."""
    ny, nx = SHAPE
    y, x = np.mgrid[0:ny, 0:nx]
    out = {}
    renderer.track_deposits()
    terrain = grid.terrain
    grid.sediment = (0.02 * (1.0 + np.sin(x / 2.0) * np.cos(y / 3.0))).astype(np.float32)
    grid.terrain = terrain + np.where((x >= 2) & (x < 14) & (y >= 3) & (y < 11), 0.3, 0.0).astype(np.float32)
    out["tracked_reference"] = renderer.deposit_reference
    renderer.track_deposits(region=(8, -2, nx + 5, 6))
    out["region_reference"] = renderer.deposit_reference
    renderer.update_deposits()
    out["region_deposits"] = _deposits(renderer)
    renderer.track_deposits(terrain - 0.05 * (x % 3))
    out["given_reference"] = renderer.deposit_reference
    out["pixels"] = _draw(ctx, renderer)
    out["deposits"] = _deposits(renderer)
    out["terrain"], out["water"], out["sediment"] = grid.terrain, grid.water, grid.sediment
    renderer.forget_deposits()
    out["forgotten"] = not renderer.tracking_deposits and renderer.deposit_reference is None
    return out


def _refusal(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the kind of error is checked by the test
        return [type(exc).__name__, str(exc)]
    return None


def child(path):
    """Run in the GL 4.1 process: each lattice's frame, velocity texture, water, flows and deposits
    (_deposit_scene's) into `path` (.npz), what the renderer refuses and the context's figures printed
    as JSON."""
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
            scene = _deposit_scene(ctx, grid, renderer)
            out[f"{kind}_forgotten"] = scene.pop("forgotten")
            arrays.update({f"{kind}_deposit_{name}": value for name, value in scene.items()})
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


def _expected_deposits(terrain, reference, water, sediment, min_depth):
    """render/deposits.glsl's fresh_deposits in float64: the ground raised above the reference plus the
    sediment carried, and the sediment over the depth where the water is deeper than min_depth."""
    t, r, h, s = (a.astype(np.float64) for a in (terrain, reference, water, sediment))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([np.maximum(t - r, 0.0) + s, np.where(h > min_depth, s / h, 0.0)], axis=-1)


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_deposits_are_the_raised_ground_and_the_mud(gl41, kind):
    """On GL 4.1 track_deposits() copies the terrain as the reference (all of it, then a rectangle clipped
    to the grid), takes a given one, and the deposits pass gives the raised ground plus the sediment and
    the sediment over the depth: the float64 twin's values, to float32 rounding."""
    ny, nx = SHAPE
    got = {name[len(f"{kind}_deposit_"):]: gl41[name] for name in gl41 if name.startswith(f"{kind}_deposit_")}
    raised, before = got["terrain"], got["tracked_reference"]
    region = np.zeros(SHAPE, bool)
    region[0:6, 8:nx] = True
    np.testing.assert_array_equal(got["region_reference"], np.where(region, raised, before))
    assert np.any(raised[region] != before[region]), "the rectangle should cover raised ground"
    y, x = np.mgrid[0:ny, 0:nx]
    np.testing.assert_array_equal(got["given_reference"], (before - 0.05 * (x % 3)).astype(np.float32))
    min_depth = render.RenderStyle().film_depth
    for deposits, reference in ((got["region_deposits"], got["region_reference"]),
                                (got["deposits"], got["given_reference"])):
        expected = _expected_deposits(raised, reference, got["water"], got["sediment"], min_depth)
        np.testing.assert_allclose(deposits, expected, rtol=1e-6, atol=1e-7)
    assert got["deposits"][..., 0].max() > 0.3 and got["deposits"][..., 1].max() > 0.01, "deposits and mud to draw"
    assert gl41[f"{kind}_forgotten"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_gl41_deposits_are_the_gl43_renderers(gl41, ctx, kind):
    """The same deposit scene on a compute grid here: the same references, the same deposits texture and
    the same frame, the silt and the muddy water alike."""
    with _grid(ctx, kind) as grid, render.Renderer(ctx, grid) as renderer:
        expected = _deposit_scene(ctx, grid, renderer)
    for name in ("tracked_reference", "region_reference", "given_reference", "sediment", "terrain"):
        water_cases.assert_same_bits(gl41[f"{kind}_deposit_{name}"], expected[name], err_msg=f"{kind}: {name}")
    for name in ("region_deposits", "deposits"):
        if water_cases.BITWISE:
            water_cases.assert_same_bits(gl41[f"{kind}_deposit_{name}"], expected[name], err_msg=f"{kind}: {name}")
        else:
            np.testing.assert_allclose(gl41[f"{kind}_deposit_{name}"], expected[name], rtol=1e-5, atol=1e-7)
    assert np.any(gl41[f"{kind}_deposit_pixels"] != gl41[f"{kind}_pixels"]), f"{kind}: no silt drawn"
    _assert_same_picture(gl41[f"{kind}_deposit_pixels"], expected["pixels"], f"{kind} with deposits")


def test_gl41_hex_grid_needs_four_texture_units(gl41):
    """A hex grid's velocity pass needs a fourth texture unit, and says so."""
    name, message = gl41["refused"]["hex_three_units"]
    assert name == "ValueError" and message.startswith("texture_units: ") and "four" in message, message


# ------------------------------------------------------------------------- this process (GL 4.3+)

@pytest.mark.parametrize("kind", list(KINDS))
def test_fragment_grid_draws_the_compute_grids_picture(ctx, kind):
    """A fragment grid on this context next to a compute grid of the same scene: the velocity pass
    rendered from textures gives the compute pass's texture, and the frame is the same; so do the
    deposits passes (_deposit_scene), the reference copied to the bit."""
    with _grid(ctx, kind) as compute, render.Renderer(ctx, compute) as by_compute, \
            _grid(ctx, kind, fragment=True) as fragment, render.Renderer(ctx, fragment) as by_fragment:
        assert fragment.backend == "fragment"
        got, expected = _draw(ctx, by_fragment), _draw(ctx, by_compute)
        velocity, compute_velocity = _velocity(by_fragment), _velocity(by_compute)
        deposits, compute_deposits = (_deposit_scene(ctx, g, r) for g, r in ((fragment, by_fragment),
                                                                             (compute, by_compute)))
    assert np.abs(compute_velocity).max() > 0.1
    if water_cases.BITWISE:
        water_cases.assert_same_bits(velocity, compute_velocity, err_msg=f"{kind}: the velocity")
    else:
        np.testing.assert_allclose(velocity, compute_velocity, rtol=1e-3, atol=1e-3 * np.abs(compute_velocity).max())
    _assert_same_picture(got, expected, kind)
    for name in ("tracked_reference", "region_reference", "given_reference"):
        water_cases.assert_same_bits(deposits[name], compute_deposits[name], err_msg=f"{kind}: {name}")
    for name in ("region_deposits", "deposits"):
        np.testing.assert_allclose(deposits[name], compute_deposits[name], rtol=1e-6, atol=1e-7,
                                   err_msg=f"{kind}: {name}")
    _assert_same_picture(deposits["pixels"], compute_deposits["pixels"], f"{kind} with deposits")
    assert deposits["forgotten"]


def test_fragment_passes_ignore_the_games_gl_state_and_put_it_back(ctx):
    """A game that bound its framebuffer by hand and left blending, culling, a scissor box and a colour
    mask on: the velocity and deposits passes render every texel as if none were set (the reference copy
    every texel of its rectangle), and update_velocity(), track_deposits(), update_deposits() and draw()
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
        renderer.track_deposits()
        grid.sediment = np.full(SHAPE, 0.05, np.float32)
        renderer.update_deposits()
        clean_deposits, terrain = _deposits(renderer), grid.terrain
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
        renderer.deposits_texture.write(stale)
        renderer.track_deposits(np.zeros(SHAPE))            # written, as the stale texture: no pass
        gl["glActiveTexture"](0x84C0 + 2)                   # reads and writes use moderngl's own unit
        renderer.track_deposits(region=(0, 0, SHAPE[1], SHAPE[0]))
        renderer.update_deposits()
        after_deposits = game_state()
        by_deposits, by_region = _deposits(renderer), renderer.deposit_reference
        renderer.velocity_texture.write(stale)
        renderer.deposits_texture.write(stale)
        gl["glActiveTexture"](0x84C0 + 2)
        renderer.draw(np.identity(4))
        after_draw, by_draw, deposits_by_draw = game_state(), _velocity(renderer), _deposits(renderer)
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
    assert clean_deposits[..., 0].min() == np.float32(0.05) and clean_deposits[..., 1].max() > 0.0
    water_cases.assert_same_bits(by_region, terrain, err_msg="the reference taken under the game's state")
    water_cases.assert_same_bits(by_deposits, clean_deposits, err_msg="update_deposits() under the game's state")
    water_cases.assert_same_bits(deposits_by_draw, clean_deposits, err_msg="draw()'s deposits under the game's state")
    assert before[0] == (game.glo,) and before[2] == (10, 2, 4, 4)
    assert after_update == before, "update_velocity() changed the game's GL state"
    assert after_deposits == before, "track_deposits() or update_deposits() changed the game's GL state"
    assert after_draw == before, "draw() changed the game's GL state"


def test_three_texture_units_draw_a_square_grid_but_track_no_deposits(ctx):
    """A square grid's velocity pass reads three textures, a hex grid's four; the deposits pass reads
    four, and track_deposits() says so, before anything is made."""
    with _grid(ctx, "square", fragment=True) as grid:
        with render.Renderer(ctx, grid, texture_units=(1, 2, 3)) as three:
            three.update_velocity()
            with pytest.raises(ValueError, match="^track_deposits: the renderer was made with three texture_units"):
                three.track_deposits()
            assert not three.tracking_deposits and three.deposit_reference is None
    with _grid(ctx, "hex", fragment=True) as grid:
        with pytest.raises(ValueError, match="^texture_units: a hex grid of the fragment backend needs four"):
            render.Renderer(ctx, grid, texture_units=(1, 2, 3))


def test_release_frees_the_fragment_passes(ctx, gl_objects):
    """The velocity and deposits passes' textures, framebuffers and vertex arrays go with the renderer,
    the deposits' with forget_deposits() too; the grid's textures stay."""
    grid = _grid(ctx, "square", fragment=True)
    grid.erosion = hydro.Erosion()
    grid.step(0.05)                     # the grid's erosion passes made, before the count
    held = {id(obj) for _, obj in gl_objects()}
    renderer = render.Renderer(ctx, grid)
    tracking = {id(obj) for _, obj in gl_objects()}
    renderer.track_deposits()
    _draw(ctx, renderer)
    renderer.forget_deposits()
    left = [name for name, obj in gl_objects() if id(obj) not in tracking]
    assert [name for name in left if name not in ("renderbuffer", "depth_renderbuffer")] == []
    renderer.track_deposits()
    for _ in range(2):
        grid.step(0.05)
        _draw(ctx, renderer)
    renderer.release()
    left = [name for name, obj in gl_objects() if id(obj) not in held]
    assert [name for name in left if name not in ("renderbuffer", "depth_renderbuffer")] == []
    grid.step(0.1)
    grid.release()
