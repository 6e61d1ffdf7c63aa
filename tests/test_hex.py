"""What is particular to the triangular lattice: its wave speed in a carved basin, its isotropy against
the square grid, its boundary faces, and the helpers a hex-map game needs."""
import math

import numpy as np
import pytest

import hydro
from hydro import boundary as bnd
from hydro.hex import grid_to_world, nearest_vertex, sample_heightmap, world_to_grid


def _basin_mode(inside, gravity, depth, spacing):
    """The basin's slowest sloshing mode from the lattice alone (DESIGN section 4): the graph Laplacian of
    the wet vertices, each joined to its wet neighbours (x+-1, y), (x, y+-1), (x+1, y-1), (x-1, y+1) by a
    pipe of K/S = g h w / (l S) = g h (s/sqrt(3)) / (s (sqrt(3)/2) s^2) = 2 g h / (3 s^2).
    Returns the mode (on the grid, zero off the basin) and its angular frequency without time stepping."""
    ny, nx = inside.shape
    index = -np.ones(inside.shape, int)
    index[inside] = np.arange(inside.sum())
    lap = np.zeros((inside.sum(), inside.sum()))
    for y, x in zip(*np.nonzero(inside)):
        for dx, dy in ((1, 0), (0, 1), (-1, 1)):            # each pipe once
            if 0 <= x + dx < nx and 0 <= y + dy < ny and inside[y + dy, x + dx]:
                i, j = index[y, x], index[y + dy, x + dx]
                lap[i, i] += 1; lap[j, j] += 1; lap[i, j] -= 1; lap[j, i] -= 1
    values, vectors = np.linalg.eigh(lap)
    assert values[0] == pytest.approx(0.0, abs=1e-9) and values[2] > 2 * values[1]   # a lone slowest mode
    mode = np.zeros(inside.shape)
    mode[inside] = vectors[:, 1] / np.abs(vectors[:, 1]).max()
    return mode, math.sqrt(2 * gravity * depth / (3 * spacing ** 2) * values[1])


def test_seiche_in_a_basin_carved_by_terrain_has_the_lattices_period(ctx):
    """A small seiche in a basin walled by dry terrain keeps the period of the lattice's own slowest mode
    under symplectic Euler, omega_d = (2/h) asin(h omega / 2), to 5e-4 (measured: 2e-5; a face width 4% off
    moves it 2%). That period is within 3% of Merian's 2L/sqrt(g h)."""
    length, width, depth, amp, gravity, h = 24.0, 5.0, 1.0, 1e-3, 9.81, 0.05
    ny = int(width / (math.sqrt(3) / 2)) + 5
    nx = int(length + ny / 2) + 6
    gy, gx = np.mgrid[0:ny, 0:nx]
    wx, wy = grid_to_world(gx, gy)
    x0, y0 = 3.0, 2.0
    inside = (wx >= x0) & (wx < x0 + length) & (wy >= y0) & (wy < y0 + width)
    mode, omega = _basin_mode(inside, gravity, depth, 1.0)
    period = 2 * math.pi / (2 / h * math.asin(h * omega / 2))
    assert period == pytest.approx(2 * length / math.sqrt(gravity * depth), rel=0.03)
    g = hydro.HexWaterGrid(ctx, np.where(inside, 0.0, 5.0), water=np.where(inside, depth + amp * mode, 0.0),
                           friction=0.0, gravity=gravity)
    a = []
    for _ in range(450):
        a.append(float(((g.water - depth) * mode)[inside].sum()))
        g.step(2 * h, substeps=2)
    t, a = np.arange(len(a)) * 2 * h, np.array(a)
    crossings = [t[i] - a[i] * (t[i + 1] - t[i]) / (a[i + 1] - a[i]) for i in range(len(a) - 1) if a[i] > 0 >= a[i + 1]]
    assert len(crossings) >= 3
    assert np.diff(crossings).mean() == pytest.approx(period, rel=5e-4)
    assert np.all(g.water[~inside] == 0.0)            # the walls stay dry
    g.release()


def _front_spread(ctx, kind, n=64, seconds=7.0, width=0.8):
    """Relative spread (std/mean) over 24 directions of the radius of a ring wave from a sharp drop,
    on grids of equal cell area."""
    if kind == "hex":
        s = math.sqrt(2 / math.sqrt(3))
        ny = int(n / (math.sqrt(3) / 2))
        nx = int(n + ny / 2) + 2
        gy, gx = np.mgrid[0:ny, 0:nx]
        wx, wy = grid_to_world(gx, gy, s)
        cx, cy = wx[ny // 2, nx // 2], wy[ny // 2, nx // 2]
        cls = hydro.HexWaterGrid
    else:
        s, ny, nx = 1.0, n, n
        gy, gx = np.mgrid[0:ny, 0:nx]
        wx, wy = gx.astype(float), gy.astype(float)
        cx, cy = n / 2, n / 2
        cls = hydro.WaterGrid
    r = np.hypot(wx - cx, wy - cy)
    water = 1.0 + 0.01 * np.exp(-(r / width) ** 2)
    g = cls(ctx, np.zeros_like(water), water=water, friction=0.0, cell_size=s)
    g.step(seconds, substeps=int(seconds / 0.05))
    eta = g.water - 1.0
    g.release()
    angle = np.arctan2(wy - cy, wx - cx)
    radii = []
    for theta in np.linspace(0, 2 * np.pi, 24, endpoint=False):
        sel = (np.abs(np.angle(np.exp(1j * (angle - theta)))) < 0.12) & (r > 12) & (r < 30)
        energy = np.maximum(eta[sel], 0.0) ** 2
        radii.append((r[sel] * energy).sum() / energy.sum())
    radii = np.array(radii)
    return radii.std() / radii.mean()


def test_a_drop_spreads_rounder_on_the_hex_lattice(ctx):
    square, hexagonal = _front_spread(ctx, "square"), _front_spread(ctx, "hex")
    assert hexagonal < 0.45 * square, (square, hexagonal)


def test_boundary_layout_covers_every_outside_face_once():
    nx, ny = 7, 5
    lay = bnd.layout(nx, ny, True)
    (fx, fy), (tx, ty) = lay.endpoints()
    inside = lambda x, y: (x >= 0) & (x < nx) & (y >= 0) & (y < ny)
    assert np.all(inside(fx, fy) ^ inside(tx, ty))       # exactly one end inside
    keys = set(zip(lay.array.tolist(), lay.i.tolist(), lay.j.tolist()))
    assert len(keys) == lay.size
    expected = 0                                           # brute force over all three arrays
    for a, (h, w) in enumerate([(ny, nx + 1), (ny + 1, nx), (ny + 1, nx + 1)]):
        for j in range(h):
            for i in range(w):
                f = {0: (i - 1, j), 1: (i, j - 1), 2: (i, j - 1)}[a]
                t = {0: (i, j), 1: (i, j), 2: (i - 1, j)}[a]
                if inside(*f) != inside(*t):
                    expected += 1
                    assert (a, i, j) in keys
    assert expected == lay.size


@pytest.mark.parametrize("side", bnd.SIDES)
def test_inflow_on_each_side_enters_exactly(ctx, side):
    g = hydro.HexWaterGrid(ctx, np.zeros((6, 8)))
    g.set_boundary(side, "inflow", 3.0)
    g.step(0.5)
    assert g.volume() == pytest.approx(1.5, rel=1e-6)
    g.release()


def test_world_and_grid_coordinates():
    x, y = np.array([0, 3, 2.5]), np.array([0, 2, -1.25])
    wx, wy = grid_to_world(x, y, 2.0)
    np.testing.assert_allclose(wx, [0, 8, 3.75])
    np.testing.assert_allclose(wy, [0, 2 * math.sqrt(3), -1.25 * math.sqrt(3)])
    bx, by = world_to_grid(wx, wy, 2.0)
    np.testing.assert_allclose(bx, x, atol=1e-12)
    np.testing.assert_allclose(by, y, atol=1e-12)
    rng = np.random.default_rng(5)
    px, py = rng.uniform(0, 20, 500), rng.uniform(0, 20, 500)
    vx, vy = nearest_vertex(*world_to_grid(px, py))
    d_best = np.hypot(*(np.array(grid_to_world(vx, vy)) - [px, py]))
    for ox, oy in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)]:
        d = np.hypot(*(np.array(grid_to_world(vx + ox, vy + oy)) - [px, py]))
        assert np.all(d_best <= d + 1e-12)


def test_sample_heightmap_reproduces_a_plane_and_clamps_outside():
    j, i = np.mgrid[0:40, 0:50]
    plane = 0.3 * (i + 0.5) * 2.0 - 0.1 * (j + 0.5) * 2.0          # heights at square cell centres, cell 2
    lat = sample_heightmap(plane, 2.0, (12, 15), 1.5, origin=(4.0, 6.0))
    gy, gx = np.mgrid[0:12, 0:15]
    wx, wy = grid_to_world(gx, gy, 1.5)
    np.testing.assert_allclose(lat, 0.3 * (wx + 4.0) - 0.1 * (wy + 6.0), atol=1e-9)
    far = sample_heightmap(plane, 2.0, (3, 3), 100.0, origin=(1e4, 1e4))
    assert np.allclose(far, plane[-1, -1])
    with pytest.raises(ValueError, match="^heights:"):
        sample_heightmap(np.ones(5), 1.0, (3, 3), 1.0)
    with pytest.raises(ValueError, match="^shape:"):
        sample_heightmap(plane, 1.0, (1, 3), 1.0)
    with pytest.raises(TypeError, match="^origin:"):
        sample_heightmap(plane, 1.0, (3, 3), 1.0, origin=5.0)


def test_flow_z_shape_and_direction(ctx):
    terrain = np.zeros((5, 6))
    water = np.ones((5, 6))
    water[2, 3] = 2.0                                       # a mound at vertex (3, 2)
    g = hydro.HexWaterGrid(ctx, terrain, water=water, friction=0.0)
    g.step(0.05, substeps=1)
    qz = g.flow_z
    assert qz.shape == (6, 7)
    assert qz[3, 3] > 0        # z face [3, 3] runs from (3, 2) to (2, 3): out of the mound
    assert qz[2, 4] < 0        # z face [2, 4] runs from (4, 1) to (3, 2): into the mound, so negative
    assert qz[0, 0] == 0 and qz[5, 6] == 0
    g.release()
