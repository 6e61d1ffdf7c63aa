"""The demo's terrain noise (demo_game/world.py): Perlin's gradient noise and its fractal sum, checked
by the properties that define them, since no compiled `noise` package is there to compare with."""
import numpy as np
import pytest

from demo_game import world

RNG = np.random.default_rng(2024)
POINTS = RNG.uniform(-300.0, 300.0, (2, 20000))        # negative coordinates too: the tables wrap


def _gradient(seed, x, y, h=1e-6):
    return ((world.perlin(x + h, y, seed) - world.perlin(x - h, y, seed)) / (2 * h),
            (world.perlin(x, y + h, seed) - world.perlin(x, y - h, seed)) / (2 * h))


@pytest.mark.parametrize("seed", [0, 7, 123456789])
def test_perlin_is_zero_with_a_unit_gradient_at_every_lattice_point(seed):
    ix, iy = np.meshgrid(np.arange(-20, 20), np.arange(-20, 20))
    assert np.all(world.perlin(ix, iy, seed) == 0.0)
    gx, gy = _gradient(seed, ix.astype(float), iy.astype(float))
    assert np.hypot(gx, gy) == pytest.approx(1.0, abs=1e-6)
    angles = np.arctan2(gy, gx).ravel()                     # the gradients point every way
    assert np.histogram(angles, bins=8, range=(-np.pi, np.pi))[0].min() > 100


def test_perlin_is_bounded_smooth_and_periodic():
    x, y = POINTS
    values = world.perlin(x, y, 5)
    assert np.abs(values).max() <= np.sqrt(0.5)            # the bound of 2D Perlin noise with unit gradients
    assert np.abs(values).max() > 0.6 and 0.15 < values.std() < 0.3
    # across the cells' borders (x an integer, y not) the slope from the left meets the slope from the right
    border_x, h = np.round(x), 1e-6
    left = (world.perlin(border_x, y, 5) - world.perlin(border_x - h, y, 5)) / h
    right = (world.perlin(border_x + h, y, 5) - world.perlin(border_x, y, 5)) / h
    assert np.abs(left - right).max() < 1e-4
    assert np.abs(world.perlin(x + 256.0, y - 512.0, 5) - values).max() < 1e-9
    assert np.array_equal(world.perlin(x, y, 5), values)
    assert np.abs(world.perlin(x, y, 6) - values).mean() > 0.1


def test_fbm_octaves_halve_in_amplitude_and_double_in_frequency():
    shape, octaves = (256, 256), 4
    sums = [world.fbm(shape, seed=3, features=4.0, octaves=k) for k in range(1, octaves + 1)]
    layers = [sums[0]] + [b - a for a, b in zip(sums, sums[1:])]
    spread = [layer.std() for layer in layers]
    crossings = [np.count_nonzero(np.diff(np.sign(layer), axis=1)) / layer.shape[0] for layer in layers]
    for k in range(1, octaves):
        assert spread[k] / spread[k - 1] == pytest.approx(0.5, rel=0.25), spread
        assert crossings[k] / crossings[k - 1] == pytest.approx(2.0, rel=0.3), crossings
    # about `features` hills across: a Perlin row crosses zero about once per lattice cell
    assert 4.0 * 0.5 < crossings[0] < 4.0 * 2.0


def test_terrain_noise_is_normalised_and_seeded():
    a = world.perlin_noise((40, 50), seed=1)
    b = world.perlin_noise((40, 50), seed=2)
    assert a.min() == pytest.approx(-1.0) and a.max() == pytest.approx(1.0)
    assert np.abs(a - b).mean() > 0.1
    assert np.array_equal(a, world.perlin_noise((40, 50), seed=1))
    c = world.numpy_noise((40, 50), seed=1)
    assert c.min() == pytest.approx(-1.0) and c.max() == pytest.approx(1.0)
    assert np.array_equal(world.build(32, 5, noise="numpy").terrain, world.build(32, 5, noise="numpy").terrain)
