"""hydro.smoke_render.SmokeRenderer draws a SmokeGrid's gas as lit smoke and flame over a dark
background, inside the rectangle it is given, and leaves the grid and the caller's framebuffer state
as they were."""
import moderngl
import numpy as np
import pytest

from hydro.smoke import SmokeGrid
from hydro.smoke_render import SmokeRenderer, SmokeStyle

SHAPE = (30, 40)
SIZE = (160, 120)                  # pixels: 4 per cell


def _srgb(linear):
    linear = np.asarray(linear, float)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055) * 255


@pytest.fixture
def scene(ctx):
    """Smoke on the left, hot gas on the right, an obstacle at the top centre."""
    g = SmokeGrid(ctx, SHAPE, ambient_temperature=1.0)
    yy, xx = np.mgrid[0:SHAPE[0], 0:SHAPE[1]]
    g.density = 3.0 * (((xx - 10) ** 2 + (yy - 15) ** 2) < 36)
    g.temperature = 1.0 + 1.2 * (((xx - 30) ** 2 + (yy - 15) ** 2) < 16)
    mask = np.zeros(SHAPE, bool)
    mask[24:28, 18:22] = True
    g.obstacles = mask
    fbo = ctx.simple_framebuffer(SIZE)
    yield g, fbo
    fbo.release()
    g.release()


def _pixels(fbo):
    """The framebuffer's pixels, row 0 at the bottom (as GL and the grid have it)."""
    return np.frombuffer(fbo.read(components=3), np.uint8).reshape(SIZE[1], SIZE[0], 3).astype(float)


def _at(img, x, y):
    """The pixel at the centre of cell (x, y): 4 pixels a cell."""
    return img[int(4 * y + 2), int(4 * x + 2)]


def test_smoke_flame_and_obstacles_look_as_styled(ctx, scene):
    g, fbo = scene
    r = SmokeRenderer(ctx, g)
    fbo.clear(0.0, 0.0, 0.0, 1.0)
    r.draw(fbo)
    img = _pixels(fbo)
    background, obstacle = _at(img, 3, 3), _at(img, 20, 26)
    assert background.max() < 60 and background[2] >= background[0]  # a dim, cool background
    lit, shaded = _at(img, 7, 18), _at(img, 13, 12)                  # the side towards the light, the far side
    assert lit.mean() > background.mean() + 80 and lit.mean() > shaded.mean() + 10
    flame = _at(img, 30, 15)
    assert flame[0] > 150 and flame[0] > flame[2] + 60                # glowing: red over blue
    np.testing.assert_allclose(obstacle, _srgb(SmokeStyle().obstacle_color), atol=3)
    # opacity grows with density: dark smoke over a white background hides it less where it is thin
    r.style = SmokeStyle(background_top=(1.0, 1.0, 1.0), background_bottom=(1.0, 1.0, 1.0), smoke_color=(0.02,) * 3)
    shades = []
    for density in (3.0, 0.3):
        g.density = density * (g.density > 0)
        r.draw(fbo)
        shades.append(_at(_pixels(fbo), 10, 15).mean())
    assert shades[1] > shades[0] + 40 and _at(_pixels(fbo), 3, 3).mean() > 200, shades
    r.release()


def test_draws_inside_its_viewport_and_leaves_the_grid_alone(ctx, scene):
    g, fbo = scene
    before = (g.density.copy(), g.temperature.copy(), g.density_texture.filter)
    r = SmokeRenderer(ctx, g, style=SmokeStyle(background_top=(0.5, 0.5, 0.5), background_bottom=(0.5, 0.5, 0.5)))
    fbo.viewport = (0, 0, *SIZE)
    fbo.clear(1.0, 0.0, 0.0, 1.0)
    r.draw(fbo, viewport=(40, 30, 80, 60))
    img = _pixels(fbo)
    assert np.all(img[:30, :, 1] == 0) and np.all(img[:, :40, 1] == 0) and np.all(img[90:, :, 1] == 0)
    assert img[30:90, 40:120, 1].min() > 0                            # the quad covers its rectangle
    assert fbo.viewport == (0, 0, *SIZE)
    assert g.density_texture.filter == before[2]                     # drawn through its own sampler
    np.testing.assert_array_equal(g.density, before[0])
    np.testing.assert_array_equal(g.temperature, before[1])
    r.release()


@pytest.mark.parametrize("make, exc, name", [
    (lambda g: SmokeRenderer(g.ctx, g, style=SmokeStyle(opacity=0.0)), ValueError, "opacity"),
    (lambda g: SmokeRenderer(g.ctx, g, style=SmokeStyle(smoke_color=(1.0, -1.0, 0.0))), ValueError, "smoke_color"),
    (lambda g: SmokeRenderer(g.ctx, g, style=SmokeStyle(light_direction=(0.0, 0.0))), ValueError, "light_direction"),
    (lambda g: SmokeRenderer(g.ctx, g, texture_units=(1, 1)), ValueError, "texture_units"),
    (lambda g: SmokeRenderer(g.ctx, object()), TypeError, "grid"),
    (lambda g: SmokeRenderer(g.ctx, g).draw(viewport=(0, 0, 0, 10)), ValueError, "viewport"),
    (lambda g: SmokeRenderer(g.ctx, g).draw(framebuffer="screen"), TypeError, "framebuffer"),
])
def test_bad_input_is_refused_by_name(ctx, scene, make, exc, name, gl_objects):
    g, _ = scene
    with pytest.raises(exc, match=name):
        make(g)
    for kind, obj in gl_objects():                 # a draw refused leaves its renderer to collect
        obj.release()


def test_release_frees_what_it_made(ctx, scene, gl_objects):
    g, fbo = scene
    r = SmokeRenderer(ctx, g)
    r.draw(fbo)
    assert gl_objects()
    r.release()
    r.release()
    assert gl_objects() == []
    with pytest.raises(RuntimeError, match="release"):
        r.draw(fbo)
    assert isinstance(fbo, moderngl.Framebuffer)


def test_a_renderer_of_a_released_grid_refuses_to_draw(ctx):
    g = SmokeGrid(ctx, (8, 8))
    r = SmokeRenderer(ctx, g)
    fbo = ctx.simple_framebuffer((16, 16))
    g.release()
    with pytest.raises(RuntimeError, match="release"):
        r.draw(fbo)
    r.release()
    fbo.release()
