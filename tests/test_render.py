"""hydro.render: the renderer draws terrain and water from the grid's textures, derives velocities from
the face flows, leaves the caller's framebuffer bound, and validates its inputs."""
import moderngl
import numpy as np
import pytest

import hydro
from hydro import render

SKY = (0.2, 0.2, 0.2, 1.0)


def _scene(ctx, nx=48, ny=32):
    """A slope falling from left to right into a pond on the right third."""
    x = np.arange(nx)[None, :] * np.ones((ny, 1))
    terrain = (6.0 * (1.0 - x / (nx - 1)) + 0.3 * np.sin(np.arange(ny)[:, None] / 3.0)).astype(np.float32)
    water = np.where(x > 2 * nx / 3, np.maximum(1.8 - terrain, 0.0), 0.0).astype(np.float32)
    return hydro.WaterGrid(ctx, terrain, water=water)


def _camera(nx, ny, aspect):
    target = np.array([nx / 2, ny / 2, 1.0])
    eye = render.orbit_eye(target, 1.3 * max(nx, ny), -90.0, 55.0)
    return render.perspective(45.0, aspect, 0.5, 500.0) @ render.look_at(eye, target)


def _draw(ctx, renderer, size=(160, 120), matrix=None):
    fbo = ctx.simple_framebuffer(size)
    fbo.clear(*SKY, depth=1.0)
    renderer.draw(_camera(renderer.nx, renderer.ny, size[0] / size[1]) if matrix is None else matrix, fbo)
    pixels = np.frombuffer(fbo.read(components=3), np.uint8).reshape(size[1], size[0], 3).astype(int)
    fbo.release()
    return pixels


def classify(pixels, sky=SKY):
    """Boolean masks (terrain, water, background) of an RGB image from the demo's palette."""
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    background = np.all(np.abs(pixels - np.round(np.array(sky[:3]) * 255)) <= 1, axis=-1)
    water = ~background & (b > r + 25) & (b >= g - 10)
    terrain = ~background & ~water & ((g >= b) | (r >= b))
    return terrain, water, background


def test_draws_terrain_and_water(ctx):
    with _scene(ctx) as grid, render.Renderer(ctx, grid) as renderer:
        pixels = _draw(ctx, renderer)
    terrain, water, background = classify(pixels)
    assert terrain.mean() > 0.10, "no terrain drawn"
    assert water.mean() > 0.05, "no water drawn"
    assert background.mean() > 0.02, "the world should not fill the whole view"
    # The pond is on the right of the picture (camera looks north from the south).
    cols = np.nonzero(water)[1]
    assert np.median(cols) > pixels.shape[1] / 2


def _luminance(pixels):
    return pixels @ np.array([0.2126, 0.7152, 0.0722])


def _saturation(pixels):
    high, low = pixels.max(axis=-1), pixels.min(axis=-1)
    return (high - low) / np.maximum(high, 1)


def test_a_thin_film_draws_as_wet_ground_and_a_lake_as_water(ctx):
    """Rain leaves millimetres to centimetres of water over the land: it must read as wet ground (darker,
    no greyer, never whitened by foam, even running fast) while a pond keeps its look as water."""
    nx, ny = 32, 24
    x = np.arange(nx)[None, :] * np.ones((ny, 1))
    terrain = (4.0 * (1.0 - x / (nx - 1)) + 0.3 * np.sin(np.arange(ny)[:, None] / 3.0)).astype(np.float32)
    pond = np.where(x > 2 * nx / 3, np.maximum(1.2 - terrain, 0.0), 0.0).astype(np.float32)

    def draw(film, speed):
        """The scene with `film` world units (1 m cells) of water over the land, sheeting downhill at
        `speed` over the upper slope (running into the pond it would break, and foam there is right)."""
        water = np.where(pond > 0.0, pond, film).astype(np.float32)
        with hydro.WaterGrid(ctx, terrain, water=water) as grid, render.Renderer(ctx, grid) as renderer:
            flow = np.zeros(grid.flow_x.shape, np.float32)
            flow[:, 1:nx // 2] = film * grid.geometry.face_width * speed
            grid.flow_x = flow
            return _draw(ctx, renderer).astype(float)

    dry = draw(0.0, 0.0)
    dry_terrain, dry_water, _ = classify(dry)
    assert dry_terrain.mean() > 0.2 and dry_water.mean() > 0.04
    # (film, speed: twice the streaks' full speed, least saturation kept: at 2 cm the water's own
    # colour starts to show through, so a little of the ground's hue goes)
    for film, speed, saturation_kept in ((0.005, 0.0, 1.0), (0.005, 6.0, 1.0), (0.02, 6.0, 0.9)):
        name = f"{film * 1000:g} mm at {speed:g} m/s"
        wet = draw(film, speed)
        ground = dry_terrain & ~classify(wet)[2]
        dry_l, wet_l = _luminance(dry[ground]), _luminance(wet[ground])
        assert wet_l.mean() < 0.85 * dry_l.mean(), f"{name}: wet ground should be darker than dry"
        assert _saturation(wet[ground]).mean() >= saturation_kept * _saturation(dry[ground]).mean(), \
            f"{name}: wet ground should be no greyer than dry"
        assert (wet_l - dry_l).max() < 24, f"{name}: the film whitens the ground (foam or glare)"
        lake = classify(wet)[1] & dry_water
        assert lake.sum() > 0.9 * dry_water.sum(), f"{name}: the pond should still be drawn as water"
        assert np.abs(wet[lake] - dry[lake]).mean() < 6, f"{name}: the pond should look as it did"
        water, land = wet[lake].mean(axis=0), wet[ground].mean(axis=0)          # RGB means
        assert water[2] > water[0] + 25 and water[2] > land[2] + 20, f"{name}: the pond should be bluish, unlike land"


def test_drawing_keeps_nothing_and_release_frees_everything(ctx, gl_objects):
    """A frame's draw leaves no object behind (a game draws for hours), and release() frees the
    renderer's own objects, not the grid's."""
    fbo = ctx.simple_framebuffer((32, 24))
    grid = _scene(ctx)
    renderer = render.Renderer(ctx, grid)
    renderer.update_velocity()
    held = {id(obj) for _, obj in gl_objects()}
    for _ in range(3):
        renderer.draw(_camera(grid.nx, grid.ny, 4 / 3), fbo)
    assert {id(obj) for _, obj in gl_objects()} == held, "a draw made an object it kept"
    renderer.release()
    grid.step(0.1)                                      # the grid is untouched
    ctx.detect_framebuffer(0).use()                     # never leave a released framebuffer bound
    fbo.release()
    grid.release()
    assert [name for name, _ in gl_objects() if name not in ("renderbuffer", "depth_renderbuffer")] == []


def test_a_framebuffer_of_another_context_is_refused(ctx):
    """GL names are per context: another context's framebuffer would have the draw go into this
    context's framebuffer of the same name."""
    other = hydro.create_context()
    foreign = other.simple_framebuffer((8, 8))
    with ctx:
        with _scene(ctx) as grid, render.Renderer(ctx, grid) as renderer:
            with pytest.raises(ValueError, match="^framebuffer: it belongs to another moderngl context"):
                renderer.draw(_camera(grid.nx, grid.ny, 1.0), foreign)
    foreign.release()
    other.release()


def test_flat_column_major_matrix_is_the_same_picture(ctx):
    with _scene(ctx) as grid, render.Renderer(ctx, grid) as renderer:
        m = _camera(grid.nx, grid.ny, 160 / 120)
        a = _draw(ctx, renderer, matrix=m)
        b = _draw(ctx, renderer, matrix=m.T.reshape(16).tolist())
    assert np.array_equal(a, b)


def test_restores_framebuffer_and_viewport(ctx):
    previous = ctx.fbo
    with _scene(ctx) as grid, render.Renderer(ctx, grid) as renderer:
        other = ctx.simple_framebuffer((8, 8))
        other.use()
        viewport = ctx.viewport
        _draw(ctx, renderer)
        assert ctx.fbo is other
        assert ctx.viewport == viewport
        # Drawing into the bound framebuffer (no framebuffer argument) draws there.
        target = ctx.simple_framebuffer((64, 48))
        target.use()
        target.clear(*SKY, depth=1.0)
        renderer.draw(_camera(grid.nx, grid.ny, 64 / 48))
        assert ctx.fbo is target
        drawn = np.frombuffer(target.read(components=3), np.uint8).reshape(48, 64, 3)
        assert (~classify(drawn.astype(int))[2]).mean() > 0.3
        (previous or ctx.detect_framebuffer(0)).use()      # never leave a released framebuffer bound
        for fbo in (other, target):
            fbo.release()



def test_draws_into_what_the_game_bound_behind_moderngls_back_and_puts_its_state_back(ctx):
    """A pyglet game binds its framebuffer, viewport, scissor, blending and texture unit with raw GL, so
    moderngl's record is stale (after a window resize, its screen viewport too): draw() with no
    framebuffer draws into what GL has bound, inside GL's viewport, and leaves that state as it was."""
    import ctypes
    i, u = ctypes.c_int, ctypes.c_uint
    gl = hydro._native.gl_functions(ctx, {"glBindFramebuffer": (None, [u, u]), "glViewport": (None, [i, i, i, i]),
                                      "glScissor": (None, [i, i, i, i]), "glEnable": (None, [u]),
                                      "glDisable": (None, [u]), "glIsEnabled": (ctypes.c_ubyte, [u]),
                                      "glActiveTexture": (None, [u]),
                                      "glGetIntegerv": (None, [u, ctypes.POINTER(i)])})

    def ints(name, n):
        out = (i * 4)()
        gl["glGetIntegerv"](name, out)
        return tuple(out[:n])

    GL_FRAMEBUFFER, GL_DRAW_FRAMEBUFFER_BINDING = 0x8D40, 0x8CA6
    GL_BLEND, GL_CULL_FACE, GL_DEPTH_TEST, GL_SCISSOR_TEST = 0x0BE2, 0x0B44, 0x0B71, 0x0C11
    previous = ctx.fbo
    with _scene(ctx) as grid, render.Renderer(ctx, grid) as renderer:
        stale, game = ctx.simple_framebuffer((32, 24)), ctx.simple_framebuffer((200, 120))
        for fbo in (stale, game):
            fbo.clear(*SKY, depth=1.0)
        stale.use()                                         # moderngl's record: stale
        gl["glBindFramebuffer"](GL_FRAMEBUFFER, game.glo)   # what GL has: the game's, set up by hand
        gl["glViewport"](40, 0, 160, 120)
        gl["glScissor"](40, 0, 150, 120)
        for flag in (GL_SCISSOR_TEST, GL_BLEND, GL_CULL_FACE):
            gl["glEnable"](flag)
        gl["glDisable"](GL_DEPTH_TEST)
        gl["glActiveTexture"](0x84C0 + 3)
        renderer.draw(_camera(grid.nx, grid.ny, 160 / 120))
        assert ints(GL_DRAW_FRAMEBUFFER_BINDING, 1)[0] == game.glo
        assert ints(0x0BA2, 4) == (40, 0, 160, 120)         # GL_VIEWPORT
        assert ints(0x0C10, 4) == (40, 0, 150, 120)         # GL_SCISSOR_BOX
        assert [gl["glIsEnabled"](f) for f in (GL_SCISSOR_TEST, GL_BLEND, GL_CULL_FACE, GL_DEPTH_TEST)] == [1, 1, 1, 0]
        assert ints(0x84E0, 1)[0] == 0x84C0 + 3             # GL_ACTIVE_TEXTURE
        gl["glDisable"](GL_SCISSOR_TEST)
        gl["glDisable"](GL_CULL_FACE)
        gl["glDisable"](GL_BLEND)
        drawn = ~classify(np.frombuffer(game.read(components=3), np.uint8).reshape(120, 200, 3).astype(int))[2]
        untouched = ~classify(np.frombuffer(stale.read(components=3), np.uint8).reshape(24, 32, 3).astype(int))[2]
        (previous or ctx.detect_framebuffer(0)).use()
        for fbo in (stale, game):
            fbo.release()
    assert not untouched.any()
    assert drawn[:, 40:190].mean() > 0.3                    # the world, inside the viewport and scissor
    assert not drawn[:, :40].any() and not drawn[:, 190:].any()

def test_blends_the_water_its_own_way_and_puts_the_games_blending_back(ctx):
    """A game that left an additive or max blend set (through moderngl or raw GL) gets the same
    picture as with moderngl's default, and its blend function and equation back after draw()."""
    import ctypes
    i, u = ctypes.c_int, ctypes.c_uint
    gl = hydro._native.gl_functions(ctx, {"glBlendFuncSeparate": (None, [u] * 4),
                                      "glBlendEquationSeparate": (None, [u] * 2),
                                      "glGetIntegerv": (None, [u, ctypes.POINTER(i)])})

    def get(name):
        out = i()
        gl["glGetIntegerv"](name, ctypes.byref(out))
        return out.value

    GL_ONE, GL_ZERO, GL_SRC_COLOR, GL_MAX, GL_FUNC_SUBTRACT = 1, 0, 0x0300, 0x8008, 0x800A
    with _scene(ctx) as grid, render.Renderer(ctx, grid) as renderer:
        plain = _draw(ctx, renderer)
        gl["glBlendFuncSeparate"](GL_ONE, GL_SRC_COLOR, GL_ZERO, GL_ONE)
        gl["glBlendEquationSeparate"](GL_MAX, GL_FUNC_SUBTRACT)
        odd = _draw(ctx, renderer)
        blend = [get(name) for name in (0x80C9, 0x80C8, 0x80CB, 0x80CA, 0x8009, 0x883D)]
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA      # the fixture's defaults back
        ctx.blend_equation = moderngl.FUNC_ADD
    assert classify(plain)[1].mean() > 0.05                 # water drawn, over terrain
    assert np.array_equal(odd, plain)
    assert blend == [GL_ONE, GL_SRC_COLOR, GL_ZERO, GL_ONE, GL_MAX, GL_FUNC_SUBTRACT]


def test_velocity_texture_matches_face_flows(ctx):
    with _scene(ctx) as grid, render.Renderer(ctx, grid) as renderer:
        grid.add_water(10.0, 16.0, 4.0, 40.0)          # a mound on the slope that runs downhill
        for _ in range(10):
            grid.step(1 / 30)
        renderer.update_velocity()
        got = np.frombuffer(renderer.velocity_texture.read(), np.float32).reshape(grid.ny, grid.nx, 2)
        h, qx, qy = grid.water.astype(np.float64), grid.flow_x, grid.flow_y
    wet = h > renderer.style.dry_depth * renderer.cell_size
    w = grid.geometry.face_width
    with np.errstate(divide="ignore", invalid="ignore"):
        vx = np.where(wet, 0.5 * (qx[:, :-1] + qx[:, 1:]) / (h * w), 0.0)
        vy = np.where(wet, 0.5 * (qy[:-1, :] + qy[1:, :]) / (h * w), 0.0)
    assert np.abs(vx).max() > 0.1, "the mound should be flowing"
    np.testing.assert_allclose(got[..., 0], vx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[..., 1], vy, rtol=1e-4, atol=1e-5)
    assert np.all(got[~wet] == 0.0)
    assert vx[wet].mean() > 0, "water runs downhill, toward +x"


def test_invalid_inputs_raise_before_drawing(ctx):
    with _scene(ctx) as grid, render.Renderer(ctx, grid) as renderer:
        with pytest.raises(ValueError, match="view_projection"):
            renderer.draw(np.eye(3))
        with pytest.raises(ValueError, match="view_projection"):
            renderer.draw(np.full((4, 4), np.nan))
        with pytest.raises(TypeError, match="^view_projection: expected a \\(4, 4\\) array"):
            renderer.draw("camera")
        with pytest.raises(TypeError, match="framebuffer"):
            renderer.draw(np.eye(4), framebuffer="screen")
        with pytest.raises(ValueError, match="texture_units"):
            render.Renderer(ctx, grid, texture_units=(1, 1, 2))
        with render.Renderer(ctx, grid, texture_units=(1, 2, 3)) as three:
            with pytest.raises(ValueError, match="fourth"):
                three.track_deposits()
        with pytest.raises(ValueError, match="^region: no deposits are tracked"):
            renderer.track_deposits(region=(0, 0, 4, 4))
        with pytest.raises(ValueError, match="^reference: expected finite heights of shape \\(32, 48\\)"):
            renderer.track_deposits(np.zeros((48, 32)))
        assert not renderer.tracking_deposits and renderer.deposit_reference is None
        with pytest.raises(ValueError, match="silt_color"):
            render.RenderStyle(silt_color=(1.0, 0.5))
        with pytest.raises(TypeError, match="^grid: expected a hydro WaterGrid or HexWaterGrid, got ndarray"):
            render.Renderer(ctx, np.zeros((4, 4)))
        with pytest.raises(AttributeError, match="no attribute 'stlye' \\(did you mean 'style'\\?\\)"):
            renderer.stlye = render.RenderStyle()
        with pytest.raises(AttributeError, match="^Renderer.nx is read-only"):
            renderer.nx = 3
        with pytest.raises(TypeError, match="^style: expected a RenderStyle"):
            renderer.style = {"fog_density": 0.0}
        renderer.style = render.RenderStyle(fog_density=0.5)
        assert renderer.style.fog_density == 0.5 and renderer.nx == grid.nx
        with pytest.raises(ValueError, match="sun_direction"):
            render.RenderStyle(sun_direction=(0, 0, 0))
        with pytest.raises(ValueError, match="film_depth"):
            render.RenderStyle(film_depth=0.0)
    with pytest.raises(RuntimeError, match="release"):
        renderer.draw(np.eye(4))


@pytest.mark.parametrize("hexagonal", [False, True], ids=["square", "hex"])
def test_a_coarser_mesh_draws_the_same_world(ctx, hexagonal):
    """mesh_step: a vertex every few cells, the grid's last row and column still drawn (the mesh's
    vertices a side ceil((n - 1) / step) + 1); the picture stays that of every cell's vertex but for
    the detail between vertices; 1 by default on grids up to MESH_VERTICES cells a side."""
    with _scene(ctx) as square:
        grid = square if not hexagonal else hydro.HexWaterGrid(ctx, square.terrain, water=square.water)
        with render.Renderer(ctx, grid) as fine, render.Renderer(ctx, grid, mesh_step=3) as coarse:
            assert (fine.mesh_step, fine.mesh) == (1, (48, 32))
            assert (coarse.mesh_step, coarse.mesh) == (3, (17, 12))
            a, b = _draw(ctx, fine), _draw(ctx, coarse)
        for bad in (0, 1.5, True, "2"):
            with pytest.raises(ValueError, match="^mesh_step: expected an int >= 1"):
                render.Renderer(ctx, grid, mesh_step=bad)
        if hexagonal:
            grid.release()
    same = np.abs(a - b).max(axis=-1) <= 24
    assert same.mean() > 0.85, same.mean()
    for masks in zip(classify(a), classify(b)):
        assert abs(masks[0].mean() - masks[1].mean()) < 0.03
    assert render.MESH_VERTICES == 2048


def test_release_is_idempotent(ctx):
    grid = _scene(ctx)
    renderer = render.Renderer(ctx, grid)
    renderer.release()
    renderer.release()
    grid.release()


def test_orthographic_camera_is_supported(ctx):
    with _scene(ctx) as grid, render.Renderer(ctx, grid) as renderer:
        # A top-down orthographic view: the eye is a direction (w = 0).
        scale = np.diag([2.0 / grid.nx, 2.0 / grid.ny, -0.05, 1.0])
        scale[:2, 3] = -1.0
        pixels = _draw(ctx, renderer, matrix=scale)
    terrain, water, _ = classify(pixels)
    assert terrain.mean() > 0.3 and water.mean() > 0.1


def test_camera_helpers():
    view = render.look_at((10.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    np.testing.assert_allclose(view @ np.array([0.0, 0.0, 0.0, 1.0]), [0.0, 0.0, -10.0, 1.0], atol=1e-12)
    proj = render.perspective(90.0, 1.0, 1.0, 100.0)
    near = proj @ np.array([0.0, 0.0, -1.0, 1.0])
    far = proj @ np.array([0.0, 0.0, -100.0, 1.0])
    assert near[2] / near[3] == pytest.approx(-1.0) and far[2] / far[3] == pytest.approx(1.0)
    eye = render._eye_from(render._gl_matrix(proj @ view))
    np.testing.assert_allclose(eye, [10.0, 0.0, 0.0, 1.0], atol=1e-4)


@pytest.mark.skipif(not hasattr(hydro, "HexWaterGrid"), reason="hydro.HexWaterGrid has not landed yet")
def test_draws_hex_grid(ctx):
    nx, ny = 40, 30
    terrain = np.tile(np.linspace(6.0, 0.0, nx, dtype=np.float32), (ny, 1))
    water = np.where(terrain < 1.5, 1.5 - terrain, 0.0).astype(np.float32)
    with hydro.HexWaterGrid(ctx, terrain, water=water) as grid, render.Renderer(ctx, grid) as renderer:
        assert renderer.hexagonal
        for _ in range(5):
            grid.step(1 / 30)
        pixels = _draw(ctx, renderer)
    terrain_px, water_px, _ = classify(pixels)
    assert terrain_px.mean() > 0.1 and water_px.mean() > 0.03


def test_hex_velocity_recovers_a_uniform_flow(ctx):
    """On the triangular lattice the velocity pass must invert the three face projections: faces carrying
    h * w * (v . e_k) everywhere give back v."""
    from hydro import HexWaterGrid
    v = np.array([0.3, -0.7])
    depth, ny, nx = 2.0, 9, 11
    axes = np.array([[1.0, 0.0], [0.5, np.sqrt(3) / 2], [-0.5, np.sqrt(3) / 2]])
    with HexWaterGrid(ctx, np.zeros((ny, nx)), water=np.full((ny, nx), depth), cell_size=1.5) as grid, \
            render.Renderer(ctx, grid) as renderer:
        w = grid.geometry.face_width
        grid.flow_x, grid.flow_y, grid.flow_z = (np.full(shape, depth * w * (v @ e))
                                                 for shape, e in zip((grid.flow_x.shape, grid.flow_y.shape, grid.flow_z.shape), axes))
        renderer.update_velocity()
        got = np.frombuffer(renderer.velocity_texture.read(), np.float32).reshape(ny, nx, 2)
    np.testing.assert_allclose(got[..., 0], v[0], rtol=1e-5)
    np.testing.assert_allclose(got[..., 1], v[1], rtol=1e-5)


def _chroma_distance(pixels, color):
    """Mean distance of the pixels' chromaticities (rgb / sum) from `color`'s: 0 means the same hue."""
    rgb = pixels.reshape(-1, 3).astype(float) + 1.0
    target = np.asarray(color, float)
    return float(np.linalg.norm(rgb / rgb.sum(-1, keepdims=True) - target / target.sum(), axis=-1).mean())


@pytest.mark.parametrize("kind", ["square", "hex"])
def test_fresh_deposits_are_drawn_as_silt_and_nothing_changes_without_them(ctx, kind):
    """A basin in a grassy slope fills with muddy water; with erosion on the sediment settles and raises
    its bed. Seen from above, a renderer that tracks deposits draws the basin's raised bed in the silt
    colour and the muddy water toward it, and the ground elsewhere as it was; a renderer that does not
    track them draws that bed as plain ground, and tracking with nothing deposited changes no pixel."""
    nx, ny = 32, 24
    hexagonal = kind == "hex"
    cls = hydro.HexWaterGrid if hexagonal else hydro.WaterGrid
    y, x = np.mgrid[0:ny, 0:nx]
    basin = (abs(x - 12) <= 4) & (abs(y - 12) <= 4)
    terrain = (1.5 + 0.04 * x - 0.6 * basin).astype(np.float32)
    height = ny * (np.sqrt(3) / 2 if hexagonal else 1.0)
    top_down = np.diag([2.0 / (nx + (ny / 2 if hexagonal else 0)), 2.0 / height, -0.05, 1.0])
    top_down[:2, 3] = -1.0
    size = (200, 150)

    def pixels_of(image, cells):
        """The pixels over the centres of `cells` (a mask), from the top-down view."""
        gx, gy = x[cells].astype(float), y[cells].astype(float)
        wx, wy = hydro.hex.grid_to_world(gx, gy) if hexagonal else (gx + 0.5, gy + 0.5)
        ndc = top_down[:2, :2] @ np.stack([wx, wy]) + top_down[:2, 3:4]
        cols, rows = ((ndc + 1.0) / 2.0 * np.array(size)[:, None]).astype(int)
        return image[rows, cols]

    inner = (abs(x - 12) <= 2) & (abs(y - 12) <= 2)
    far = (x >= 22) & (x <= 29) & (y >= 4) & (y <= 19)
    silt = render.RenderStyle().silt_color
    with cls(ctx, terrain) as grid, render.Renderer(ctx, grid) as tracked, render.Renderer(ctx, grid) as plain:
        before = _draw(ctx, plain, size, top_down)
        tracked.track_deposits()
        assert tracked.tracking_deposits and not plain.tracking_deposits
        assert np.array_equal(_draw(ctx, tracked, size, top_down), before), "tracking with no deposit changed pixels"
        pond = np.where(basin, 0.5, 0.0).astype(np.float32)
        grid.water = pond
        grid.erosion = hydro.Erosion(capacity=0.0, dissolve=0.0, deposit=2.0, talus=80.0, slump=0.0)
        grid.sediment = 0.4 * pond
        muddy, clear = _draw(ctx, tracked, size, top_down), _draw(ctx, plain, size, top_down)
        assert _chroma_distance(pixels_of(muddy, inner), silt) < 0.7 * _chroma_distance(pixels_of(clear, inner), silt)
        bed = grid.terrain
        grid.step(4.0)                                   # the sediment settles in the still water
        raised = grid.terrain - bed
        assert raised[inner].min() > 0.15 and grid.sediment.max() < 0.01
        grid.water = np.zeros_like(pond)                 # the basin drained: its bed in view
        after, untinted = _draw(ctx, tracked, size, top_down), _draw(ctx, plain, size, top_down)
        reference = tracked.deposit_reference
        tracked.forget_deposits()
        assert not tracked.tracking_deposits and np.array_equal(_draw(ctx, tracked, size, top_down), untinted)
    d_before = _chroma_distance(pixels_of(before, inner), silt)
    assert _chroma_distance(pixels_of(after, inner), silt) < 0.5 * d_before, "the deposit is not drawn as silt"
    assert _chroma_distance(pixels_of(untinted, inner), silt) > 0.8 * d_before, "untracked, the bed looks silty"
    assert np.abs(pixels_of(after, far) - pixels_of(before, far)).max() <= 2, "ground with no deposit changed"
    np.testing.assert_array_equal(reference, terrain)
