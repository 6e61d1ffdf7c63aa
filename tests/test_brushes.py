"""Brush geometry against expectations written out here, not against hydro.reference.brush_box (which the
grids upload their weights from): the smooth brush weighs a cell (1 - (d/R)^2)^2, d the world distance
between the cell's centre and the brush's centre in cells (lattice spacings on the hex lattice, where
vertex (x, y) sits at x*(1, 0) + y*(1/2, sqrt(3)/2)); add_water spreads exactly `volume` in proportion to
the weights, dig lowers the terrain by `depth` times the weight."""
import math

import numpy as np
import pytest

import hydro

SQRT3_2 = math.sqrt(3.0) / 2.0


def _square_distance(shape, cx, cy):
    ny, nx = shape
    return np.array([[math.hypot(x - cx, y - cy) for x in range(nx)] for y in range(ny)])


def _hex_distance(shape, cx, cy):
    """World distance in lattice spacings between vertex (x, y) and grid point (cx, cy) (DESIGN section 4)."""
    ny, nx = shape

    def world(x, y):
        return x + 0.5 * y, SQRT3_2 * y
    wx, wy = world(cx, cy)
    return np.array([[math.hypot(world(x, y)[0] - wx, world(x, y)[1] - wy) for x in range(nx)]
                     for y in range(ny)])


def _weights(d, radius):
    return np.where(d < radius, (1.0 - (d / radius) ** 2) ** 2, 0.0)


@pytest.mark.parametrize("centre, radius", [((6.3, 5.6), 3.2), ((0.4, 1.0), 3.0), ((7.0, 4.0), 1.5)],
                         ids=["inside", "clipped-by-the-edge", "on-a-centre"])
def test_add_water_on_the_square_grid_follows_the_smooth_brush(ctx, centre, radius):
    cell, volume, shape = 0.5, 7.0, (11, 14)
    g = hydro.WaterGrid(ctx, np.zeros(shape), cell_size=cell)
    g.add_water(*centre, radius, volume)
    w = _weights(_square_distance(shape, *centre), radius)
    expected = volume * w / (w.sum() * cell * cell)
    np.testing.assert_allclose(g.water, expected, rtol=1e-5, atol=1e-7 * expected.max())
    assert np.all((g.water > 0) == (w > 0))
    assert g.volume() == pytest.approx(volume, rel=1e-6)
    g.release()


def test_dig_on_the_square_grid_lowers_the_centre_by_depth(ctx):
    shape, depth, radius = (11, 14), 0.8, 3.2
    g = hydro.WaterGrid(ctx, np.ones(shape))
    g.dig(6, 5, radius, depth)
    terrain = g.terrain
    assert terrain[5, 6] == np.float32(1.0) - np.float32(depth)    # the weight at the centre is 1
    expected = 1.0 - depth * _weights(_square_distance(shape, 6, 5), radius)
    np.testing.assert_allclose(terrain, expected, rtol=0, atol=1e-6)
    # a cell one over: (1 - 1/R^2)^2 of the depth; across the diagonal at distance sqrt(8): (1 - 8/R^2)^2
    assert terrain[5, 7] == pytest.approx(1.0 - depth * (1 - 1 / radius ** 2) ** 2, abs=1e-6)
    assert terrain[7, 8] == pytest.approx(1.0 - depth * (1 - 8 / radius ** 2) ** 2, abs=1e-6)
    g.dig(6, 5, radius, -depth)                                     # a negative depth raises it back
    np.testing.assert_allclose(g.terrain, 1.0, atol=1e-6)
    g.release()


HEX_NEIGHBOURS = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)]


def test_a_hex_brush_just_over_one_spacing_touches_a_vertex_and_its_six_neighbours(ctx):
    shape, s, volume, radius = (9, 11), 2.0, 3.0, 1.2
    g = hydro.HexWaterGrid(ctx, np.zeros(shape), cell_size=s)
    g.add_water(5, 4, radius, volume)
    water = g.water
    touched = {(int(x), int(y)) for y, x in zip(*np.nonzero(water))}
    assert touched == {(5, 4)} | {(5 + dx, 4 + dy) for dx, dy in HEX_NEIGHBOURS}
    w = (1 - 1 / radius ** 2) ** 2                                  # every neighbour is one spacing away
    area = SQRT3_2 * s * s
    assert water[4, 5] == pytest.approx(volume / (area * (1 + 6 * w)), rel=1e-6)
    ring = np.array([water[4 + dy, 5 + dx] for dx, dy in HEX_NEIGHBOURS])
    np.testing.assert_allclose(ring, volume * w / (area * (1 + 6 * w)), rtol=1e-6)
    assert g.volume() == pytest.approx(volume, rel=1e-6)
    g.release()


def test_hex_dig_lowers_the_vertex_by_depth_and_its_neighbours_equally(ctx):
    shape, depth, radius = (9, 11), 0.7, 1.2
    g = hydro.HexWaterGrid(ctx, np.zeros(shape), cell_size=3.0)
    g.dig(5, 4, radius, depth)
    terrain = g.terrain
    assert terrain[4, 5] == np.float32(-depth)
    w = (1 - 1 / radius ** 2) ** 2
    ring = np.array([terrain[4 + dy, 5 + dx] for dx, dy in HEX_NEIGHBOURS])
    np.testing.assert_allclose(ring, -depth * w, rtol=1e-6)
    assert np.count_nonzero(terrain) == 7
    g.release()


@pytest.mark.parametrize("centre, radius", [((5.4, 3.7), 2.6), ((4.0, 4.0), 2.05)], ids=["between", "on-a-vertex"])
def test_hex_brush_radius_is_a_world_distance(ctx, centre, radius):
    """Off a vertex and on one: the weights follow world distance (on a vertex with R just over 2: the 19
    vertices within two spacings, in three rings of six equal weights at 1, sqrt(3) and 2)."""
    shape, s, volume = (9, 11), 1.5, 4.0
    g = hydro.HexWaterGrid(ctx, np.zeros(shape), cell_size=s)
    g.add_water(*centre, radius, volume)
    d = _hex_distance(shape, *centre)
    w = _weights(d, radius)
    expected = volume * w / (w.sum() * SQRT3_2 * s * s)
    np.testing.assert_allclose(g.water, expected, rtol=1e-5, atol=1e-7 * expected.max())
    if centre == (4.0, 4.0):
        assert np.count_nonzero(g.water) == 19
        for ring in (1.0, math.sqrt(3.0), 2.0):
            at = g.water[np.abs(d - ring) < 1e-9]
            assert at.size == 6 and np.ptp(at) <= 1e-6 * at.max()
    g.release()
