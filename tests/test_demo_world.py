"""The demo's terrain noise (demo_game/world.py): Perlin's gradient noise and its fractal sum, checked
by the properties that define them, since no compiled `noise` package is there to compare with."""
import numpy as np
import pytest

from demo_game import world
from demo_game.scripts import find_crossing

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


@pytest.mark.parametrize("n", [32, 64, 128])
def test_every_seed_holds_a_lake_behind_a_ridge_beside_a_dry_valley(n):
    s = n / 128
    for seed in range(10 if n < 128 else 3):
        w = world.build(n, seed)
        t, h = w.terrain, w.water
        assert t.dtype == np.float32 and t.shape == (n, n) and np.all(np.isfinite(t)) and h.min() >= 0
        lake_x, lake_y = (int(round(c)) for c in w.landmarks["lake"])
        valley_x, valley_y = (int(round(c)) for c in w.landmarks["valley"])
        surface = t[lake_y, lake_x] + h[lake_y, lake_x]
        assert h[lake_y, lake_x] > 1.0 * s, (seed, "the lake is full")
        assert h[valley_y, valley_x] == 0.0 and t[valley_y, valley_x] < surface - 1.0 * s, (seed, "a dry valley below it")
        # the lake is held: the ground below its surface reachable from it is exactly the lake
        lake = world.flood(h > 0, [(lake_y, lake_x)])
        assert np.array_equal(world.flood(t < surface, [(lake_y, lake_x)]), lake), (seed, "the lake leaks")
        start, stop, found_surface = find_crossing(t, h, w.landmarks["valley"], 0.5 * s)
        assert found_surface == pytest.approx(surface) and start[1] == stop[1]
        assert (stop[0] - start[0]) * (valley_x - lake_x) > 0, (seed, "the crossing heads for the valley")
        x0, x1 = sorted((int(start[0]), int(stop[0])))
        assert t[int(start[1]), x0:x1 + 1].max() > surface + 1.0 * s, (seed, "a ridge holds the lake back")
        assert (h[0] > 0).mean() > 0.5, (seed, "the sea runs along the bottom edge")
        (bottom, _, _, _), (top, _, _, span) = w.boundaries
        assert bottom == "bottom" and top == "top" and 0 <= span[0] < span[1] <= n
        mouth = [(n - 1, x) for x in range(*span)]       # the river runs down into the lake (a coarse grid
                                                         # samples its narrow bends with small steps up)
        bed = t[n - 1, span[0]:span[1]].min()
        assert (world.flood(t < bed + 0.6 * s, mouth) & lake).any(), (seed, "the river reaches the lake")


def test_the_seed_places_and_shapes_the_lake_ridge_and_valley():
    n, seeds = 64, range(8)
    worlds = [world.build(n, seed) for seed in seeds]
    lakes = [np.array(w.landmarks["lake"]) for w in worlds]
    assert min(np.hypot(*(a - b)) for i, a in enumerate(lakes) for b in lakes[:i]) > 0.5
    assert {bool(x < n / 2) for x, _ in lakes} == {True, False}, "lakes west and east of their ridges"
    masks = [w.water[n // 3:] > 0 for w in worlds]            # the lake (the sea lies below n / 3)
    assert all(np.count_nonzero(a != b) > 20 for i, a in enumerate(masks) for b in masks[:i])
    crossings = [find_crossing(w.terrain, w.water, w.landmarks["valley"], 0.25) for w in worlds]
    assert len({(start, stop) for start, stop, _ in crossings}) == len(seeds)
    assert len({round(w.landmarks["valley"][0], 3) for w in worlds}) == len(seeds)
    assert np.array_equal(world.build(n, 3).terrain, worlds[3].terrain), "a seed gives one world"


def test_find_crossing_says_what_it_could_not_find():
    terrain = np.full((32, 32), 7.0, np.float32)
    water = np.zeros_like(terrain)
    terrain[:3], water[:3] = 0.0, 1.0                        # only the sea
    with pytest.raises(ValueError, match="no lake"):
        find_crossing(terrain, water, (28, 16), 0.25)
    terrain[14:18, 6:10], water[14:18, 6:10] = 5.0, 1.0      # a pond on a plateau: no low ground beyond it
    with pytest.raises(ValueError, match="no ridge"):
        find_crossing(terrain, water, (28, 16), 0.25)
    terrain[:, 12:14] = 9.0                                  # a ridge, and beyond it a valley
    terrain[:, 20:24] = 2.0
    start, stop, surface = find_crossing(terrain, water, (28, 16), 0.25)
    assert start == (9.0, start[1]) and stop == (20.0, start[1]) and surface == 6.0
    with pytest.raises(ValueError, match="seed"):
        world.build(32, -1)
