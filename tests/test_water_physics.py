"""Physics the water grids must get right: conservation with every kind of boundary, positivity by outflow
scaling, a lake at rest, the discrete seiche period, friction decay, the level two basins settle at, the
depth the stable-substep planner allows for (water, a sea, an inflow) and the pipe cap past it."""
import math

import numpy as np
import pytest

from hydro.params import max_stable_dt
from water_cases import GRIDS, KERNELS as KERNEL_NAMES, random_state, solve_level

KINDS = list(GRIDS)


def _new(ctx, kind, terrain, water, **kw):
    return GRIDS[kind](ctx, terrain, water=water, **kw)


KERNELS = pytest.mark.parametrize("kernel", KERNEL_NAMES)


@KERNELS
@pytest.mark.parametrize("kind", KINDS)
def test_volume_matches_ledger_with_every_boundary_and_brush(ctx, kernel, rng, kind):
    terrain, water = random_state(rng, (18, 22))
    g = _new(ctx, kind, terrain, water, friction=0.05, kernel=kernel)
    v0 = g.volume()
    g.set_boundary("left", "inflow", 2.0, span=(4, 10))
    g.set_boundary("right", "outflow", 1.5)
    g.set_boundary("bottom", "level", 0.7)
    g.set_boundary("top", "level", 0.1)
    for i in range(40):
        g.step(0.05)
        if i == 10:
            g.add_water(11.0, 9.0, 4.0, 5.0)
            g.dig(6.0, 12.0, 3.0, 0.5)
        if i == 20:
            g.set_boundary("right", "wall")             # the ledger keeps what crossed before
            g.set_boundary("left", "inflow", 1.0)
    led = g.ledger()
    assert led["inflow"] == pytest.approx(2.0 * 1.05 + 1.0 * 0.95, rel=1e-6)   # inflow is exact
    assert led["outflow"] < 0 and led["level"] != 0
    assert led["brushes"] == 5.0 and led["initial"] == pytest.approx(v0)
    assert g.volume() == pytest.approx(led["expected"], rel=2e-6)
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_water_set_directly_is_ledgered(ctx, rng, kind):
    terrain, water = random_state(rng, (8, 9))
    g = _new(ctx, kind, terrain, water)
    g.step(0.1)
    g.water = water * 2.0
    g.step(0.1)
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
    g.release()


def _outgoing(flows, shape):
    """Per cell, the total of its outgoing face flows (volume/s), boundary faces included: a positive
    flow leaves its face's first cell ((x-1, y) for flow_x, (x, y-1) for flow_y and flow_z), a negative
    one its second ((x, y) for flow_x and flow_y, (x-1, y) for flow_z)."""
    ny, nx = shape
    qx, qy = flows[0], flows[1]
    out = np.maximum(qx[:, 1:], 0) + np.maximum(-qx[:, :nx], 0) + np.maximum(qy[1:, :], 0) + np.maximum(-qy[:ny, :], 0)
    if len(flows) == 3:
        qz = flows[2]
        out = out + np.maximum(qz[1:, :nx], 0) + np.maximum(-qz[:ny, 1:], 0)
    return out


def _net_inflow(flows, shape):
    ny, nx = shape
    qx, qy = flows[0], flows[1]
    net = qx[:, :-1] - qx[:, 1:] + qy[:-1, :] - qy[1:, :]
    if len(flows) == 3:
        net = net + flows[2][0:ny, 1:nx + 1] - flows[2][1:ny + 1, 0:nx]
    return net


@KERNELS
@pytest.mark.parametrize("kind", KINDS)
def test_depth_never_negative_on_thin_films_over_steep_terrain(ctx, kernel, rng, kind):
    """Outflow scaling, not the clamp at 0 in move, keeps thin films from going negative: in each substep
    no cell sends out more than it holds, and its depth before the clamp, worked out here from the flows
    the substep used, is not below 0 (so the clamp creates no water)."""
    from water_cases import gpu_flows
    terrain = rng.uniform(0.0, 8.0, (20, 24))
    water = rng.uniform(0.0, 2e-3, (20, 24))
    water[::3, ::2] = 0.5                             # a few deep columns set the stable limit
    g = _new(ctx, kind, terrain, water, friction=0.0, kernel=kernel)
    g.set_boundary("bottom", "outflow", 3.0)
    area = g.geometry.cell_area
    scaled = 0
    for _ in range(40):
        h = g.water.astype(np.float64)
        dt = float(np.float32(0.97 * g.max_stable_dt()))
        g.step(dt, substeps=1)
        flows = [q.astype(np.float64) for q in gpu_flows(g)]
        sent = _outgoing(flows, g.shape) * dt
        held = h * area
        assert np.all(sent <= held * (1 + 1e-5) + 1e-9), np.max(sent - held)
        scaled += int(np.sum((held > 0) & (sent > 0.99 * held)))          # cells the scaling emptied
        before_clamp = h + dt / area * _net_inflow(flows, g.shape)
        assert before_clamp.min() >= -1e-6
        np.testing.assert_allclose(g.water, np.maximum(before_clamp, 0.0), atol=1e-6)
    assert scaled > 500, scaled                       # films really were drained to the limit
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
    g.release()


@KERNELS
@pytest.mark.parametrize("kind", KINDS)
def test_lake_at_rest_around_an_emerged_bump(ctx, kernel, kind):
    ny, nx = 12, 24
    x = np.arange(nx) + 0.5
    z1 = np.where(np.abs(x - 12) < 4, 0.8 - 0.05 * (x - 12) ** 2, 0.0)   # rises above the surface
    terrain = np.tile(z1, (ny, 1)).astype(np.float32).astype(np.float64)
    water = np.maximum(np.float32(0.5) - terrain, 0.0).astype(np.float32).astype(np.float64)
    g = _new(ctx, kind, terrain, water, friction=0.0, kernel=kernel)
    for _ in range(20):
        g.step(0.5)
    eta = g.surface
    wet = g.water > 0
    assert np.abs(eta[wet] - 0.5).max() < 2e-6
    assert np.abs(g.flow_x).max() < 1e-5 and np.abs(g.flow_y).max() < 1e-5
    assert np.all(g.water[~(water > 0)] == 0.0)       # the bump stays dry
    g.release()


def _seiche(ctx, kind, friction, steps_per_sample, samples, dt=0.05, n=32, depth=1.0, amp=1e-3):
    """A standing wave in a closed 1D channel (walls all round); returns times and mode amplitudes."""
    ny = 3
    x = np.arange(n)
    mode = np.cos(math.pi * (x + 0.5) / n)
    water = np.tile(depth + amp * mode, (ny, 1))
    g = GRIDS[kind](ctx, np.zeros((ny, n)), water=water, friction=friction)
    a = [float((g.water.mean(axis=0) - depth) @ mode / (mode @ mode))]
    for _ in range(samples):
        g.step(dt * steps_per_sample, substeps=steps_per_sample)
        a.append(float((g.water.mean(axis=0) - depth) @ mode / (mode @ mode)))
    g.release()
    return np.arange(samples + 1) * dt * steps_per_sample, np.array(a)


def test_seiche_period_matches_discrete_dispersion(ctx):
    dt, n, depth, g = 0.05, 32, 1.0, 9.81
    t, a = _seiche(ctx, "square", 0.0, 2, 500, dt=dt, n=n, depth=depth)
    c = math.sqrt(g * depth)
    omega = 2.0 / dt * math.asin(c * dt * math.sin(math.pi / (2 * n)))      # cell size 1
    crossings = [t[i] - a[i] * (t[i + 1] - t[i]) / (a[i + 1] - a[i])
                 for i in range(len(a) - 1) if a[i] > 0 >= a[i + 1]]
    periods = np.diff(crossings)
    assert len(periods) >= 2
    assert periods.mean() == pytest.approx(2 * math.pi / omega, rel=2e-3)
    assert 2 * math.pi / omega == pytest.approx(2 * n / c, rel=0.01)      # and Merian's 2L/sqrt(gh)


def _crest(t, a, i, half=40):
    """Time and height of the crest near sample i, from a parabola fitted to the samples within
    `half` of it: the samples near a crest differ by less than float32 resolves (a top flat to
    rounding, whose largest sample can fall samples away on another GPU)."""
    lo, hi = max(i - half, 0), min(i + half + 1, len(a))
    c2, c1, c0 = np.polyfit(t[lo:hi] - t[i], a[lo:hi], 2)
    at = -c1 / (2 * c2)
    return t[i] + at, c0 + c1 * at + c2 * at * at


def test_small_waves_decay_as_friction_predicts(ctx):
    f = 0.15
    t, a = _seiche(ctx, "square", f, 1, 1100)
    peaks = [i for i in range(1, len(a) - 1) if a[i] >= a[i - 1] and a[i] > a[i + 1] and a[i] > 0]
    assert len(peaks) >= 2
    (t0, a0), (t1, a1) = _crest(t, a, peaks[0]), _crest(t, a, peaks[-1])
    assert t1 - t0 > 15.0                                   # crests a period apart or more
    assert a1 / a0 == pytest.approx((1 - f) ** ((t1 - t0) / 2), rel=0.01)


@KERNELS
@pytest.mark.parametrize("kind", KINDS)
def test_basins_joined_by_digging_reach_the_equilibrium_level(ctx, kernel, kind):
    ny, nx = 10, 26
    terrain = np.zeros((ny, nx))
    terrain[:, 12:14] = 2.0                           # a ridge between two basins
    water = np.zeros((ny, nx))
    water[:, :12] = 1.0
    g = _new(ctx, kind, terrain, water, friction=0.3, kernel=kernel)
    g.step(2.0)
    assert np.all(g.water[:, 14:] == 0.0)             # the ridge holds
    g.dig(12.5, ny / 2, 4.0, 3.0)                     # brush centres are grid (axial) coordinates
    for _ in range(100):
        g.step(4.0)
    eta_star = solve_level(g.terrain.astype(np.float64), g.volume(), g.geometry.cell_area)
    wet = g.water > 1e-3
    assert wet[:, 20:].all(), "water did not reach the far basin"
    assert np.abs(g.surface[wet] - eta_star).max() < 2e-3
    g.release()


def test_stability_bound_is_the_exact_one():
    from hydro.params import Geometry, WaterParams, stable
    p = WaterParams(friction=0.5, gravity=10.0)
    geo = Geometry.square(1.0)
    coupling = p.gravity * 1.0 * geo.face_width / (geo.pipe_length * geo.cell_area)   # depth 1
    dt = max_stable_dt(coupling, geo, p)
    assert stable(dt, coupling, geo, p) and not stable(dt * 1.001, coupling, geo, p)
    r = p.friction_factor(dt)
    assert dt == pytest.approx(math.sqrt(2 * (1 + r) / (coupling * 8)), rel=1e-9)


@KERNELS
@pytest.mark.parametrize("kind", KINDS)
def test_drains_take_what_is_there_and_the_ledger_knows(ctx, kernel, rng, kind):
    terrain, water = random_state(rng, (16, 18))
    from hydro.reference.water import brush_weights
    g = _new(ctx, kind, terrain, water * 0.1, kernel=kernel)
    before, h = g.volume(), g.water.astype(np.float64)
    weights = brush_weights(g.shape, 8.0, 8.0, 3.0, kind == "hex")
    area = g.geometry.cell_area
    g.remove_water(8.0, 8.0, 3.0, 0.5)                    # dry cells under the brush give nothing
    taken = np.minimum(h, 0.5 * weights / (weights.sum() * area)).sum() * area
    assert 0 < taken < 0.5
    assert g.volume() == pytest.approx(before - taken, rel=1e-5)
    assert g.ledger()["drains"] == pytest.approx(-taken, rel=1e-5)
    g.remove_water(8.0, 8.0, 3.0, 1e6)                    # far more than is there: the brush area empties
    assert np.all(g.water[weights > 0] == 0)
    g.step(0.5)
    g.set_boundary("left", "inflow", 1.0)                 # folding the ledger keeps the drains
    g.step(0.5)
    led = g.ledger()
    assert led["drains"] < -0.5
    assert g.volume() == pytest.approx(led["expected"], rel=1e-6)
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_flows_round_trip_through_their_setters(ctx, rng, kind):
    terrain, water = random_state(rng, (7, 9))
    g = _new(ctx, kind, terrain, water)
    g.step(0.3)
    names = ["flow_x", "flow_y"] + (["flow_z"] if kind == "hex" else [])
    saved = {n: getattr(g, n) for n in names}
    h = g.water
    g.step(0.3)
    g.water = h
    for n in names:
        setattr(g, n, saved[n])
        np.testing.assert_array_equal(getattr(g, n), saved[n])
    with pytest.raises(ValueError, match="^flow_x:"):
        g.flow_x = np.zeros((2, 2))
    flows = g.flow_textures if g.backend == "fragment" else g.flow_buffers
    assert len(flows) == len(names)
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_one_long_step_into_a_deep_pit_stays_stable(ctx, kind):
    """A lake pours into a pit 50 deep during one step(30): the water there gets far deeper than the
    substeps were planned for, and the depth cap keeps it as calm as 600 short calls do (without the
    cap the one-call pit sloshes with a surface spread of ~1.4 against ~0.08)."""
    ny, nx = 24, 40
    terrain = np.zeros((ny, nx))
    terrain[7:17, 25:35] = -50.0
    water = np.zeros((ny, nx))
    water[:, :22] = 1.0
    pits = []
    for calls, dt in ((1, 30.0), (600, 0.05)):
        g = _new(ctx, kind, terrain, water, friction=0.1)
        for _ in range(calls):
            g.step(dt)
        pits.append(g.surface[7:17, 25:35])
        assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
        g.release()
    one, many = pits
    assert abs(one.mean() - many.mean()) < 0.05
    assert one.std() < 2 * many.std() + 0.05


@pytest.mark.parametrize("kind", KINDS)
def test_a_dry_grid_takes_a_huge_step_and_stays_finite(ctx, kind):
    g = _new(ctx, kind, np.zeros((8, 9)), None)
    g.step(1e30)
    assert np.all(np.isfinite(g.flow_x)) and np.all(np.isfinite(g.flow_y))
    g.add_water(4, 4, 2, 5.0)
    g.step(0.1)
    assert g.volume() == pytest.approx(5.0, rel=1e-6)
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_the_sea_fills_dry_land_to_its_level(ctx, kind):
    for side in ("left", "right", "bottom", "top"):
        g = _new(ctx, kind, np.zeros((10, 12)), None, friction=0.5)
        g.set_boundary(side, "level", 1.5)
        for _ in range(40):
            g.step(1.0)
        assert np.abs(g.surface - 1.5).max() < 0.02, side
        assert g.ledger()["level"] == pytest.approx(1.5 * 120 * g.geometry.cell_area, rel=0.02)
        assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
        g.release()


def test_a_far_dry_pit_does_not_slow_a_sea():
    """The level bound looks at the edge cells the sea touches, not at every hole in the map."""
    import hydro
    ctx = hydro.create_context()
    terrain = np.zeros((20, 20))
    flat = hydro.WaterGrid(ctx, terrain, water=np.ones((20, 20)))
    terrain[8:12, 8:12] = -100.0
    pitted = hydro.WaterGrid(ctx, terrain, water=np.ones((20, 20)))
    for g in (flat, pitted):
        g.set_boundary("left", "level", 1.0)
    assert pitted.max_stable_dt() == pytest.approx(flat.max_stable_dt(), rel=1e-6)
    ctx.release()


def _exact_stable_dt(coupling, mu, friction):
    """The largest dt with dt^2 * coupling * mu <= 2 (1 + (1 - friction)^dt) (DESIGN section 3), by
    bisection: the left side grows with dt, the right side shrinks."""
    lo, hi = 0.0, math.sqrt(4.0 / (coupling * mu))
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid * mid * coupling * mu <= 2.0 * (1.0 + (1.0 - friction) ** mid):
            lo = mid
        else:
            hi = mid
    return lo


# K/S = g A / (l S) per unit of pipe depth (A = h w), and mu, written out from DESIGN sections 3 and 4
PER_DEPTH = {"square": lambda s: 1.0 / (s * s), "hex": lambda s: 2.0 / (3.0 * s * s)}   # w / (l S)
MU = {"square": 8.0, "hex": 9.0}


def _planned_substeps(dt, limit):
    """What step(dt) picks: the fewest equal substeps AUTO_SAFETY inside the stable limit."""
    from hydro.params import AUTO_SAFETY
    ratio = dt / (AUTO_SAFETY * limit)
    assert abs(ratio - round(ratio)) > 1e-3, "a case on the edge between two counts"
    return max(1, math.ceil(ratio))


@pytest.mark.parametrize("kind", KINDS)
def test_a_sea_sets_the_stable_step_of_a_dry_grid(ctx, kind):
    """A level boundary's pipe is as deep as the outside surface over the lowest bed on the grid's edge:
    the bound holds for that depth before any water has come in (a pit inside the grid does not count)."""
    gravity, friction, level = 9.81, 0.02, 2.0
    terrain = np.zeros((10, 12))
    terrain[0, 7] = -0.5                              # the lowest edge bed
    terrain[5, 5] = -20.0                             # inside: no level face reaches it
    g = _new(ctx, kind, terrain, None, gravity=gravity, friction=friction)
    g.set_boundary("left", "level", level)
    coupling = gravity * (level - (-0.5)) * PER_DEPTH[kind](1.0)
    limit = _exact_stable_dt(coupling, MU[kind], friction)
    assert g.max_stable_dt() == pytest.approx(limit, rel=1e-6)
    assert g.step(1.0) == _planned_substeps(1.0, limit) > 1
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_a_strong_inflow_into_one_cell_plans_for_the_water_it_piles_up(ctx, kind):
    """A dry grid with an inflow: the bound holds for the depth the inflow can pile into one cell during
    the call, discharge * dt / S, so a river mouth one cell wide needs more substeps than the same
    discharge spread over a whole side."""
    gravity, friction, s, q, dt = 9.81, 0.02, 0.8, 6.0, 0.5
    counts = []
    for span, cells in (((4, 5), 1), (None, 10)):
        g = _new(ctx, kind, np.zeros((10, 12)), None, gravity=gravity, friction=friction, cell_size=s)
        area = g.geometry.cell_area
        assert area == pytest.approx(s * s if kind == "square" else math.sqrt(3) / 2 * s * s)
        g.set_boundary("left", "inflow", q, span=span)
        depth = q / cells * dt / area
        limit = _exact_stable_dt(gravity * depth * PER_DEPTH[kind](s), MU[kind], friction)
        counts.append(g.step(dt))
        assert counts[-1] == _planned_substeps(dt, limit)
        assert g.volume() == pytest.approx(q * dt, rel=1e-6)
        g.release()
    assert counts[0] > counts[1] > 1


@KERNELS
def test_cell_size_other_than_one(ctx, kernel):
    """Volumes, inflow and wave speed in world units when a cell is 0.37 wide."""
    cs, n, depth = 0.37, 32, 1.0
    g = _new(ctx, "square", np.zeros((3, n)), np.full((3, n), depth), cell_size=cs, friction=0.0, kernel=kernel)
    assert g.volume() == pytest.approx(depth * 3 * n * cs * cs, rel=1e-6)
    g.set_boundary("left", "inflow", 0.05)
    g.step(1.0)
    assert g.volume() - depth * 3 * n * cs * cs == pytest.approx(0.05, rel=1e-5)
    g.release()
    # seiche: Merian's period 2L / sqrt(g h) with L = n * cell_size
    x = np.arange(n)
    mode = np.cos(math.pi * (x + 0.5) / n)
    g = _new(ctx, "square", np.zeros((3, n)), np.tile(depth + 1e-3 * mode, (3, 1)), cell_size=cs, friction=0.0,
             kernel=kernel)
    dt = 0.05 * cs
    a = []
    for _ in range(500):
        a.append(float((g.water.mean(axis=0) - depth) @ mode))
        g.step(2 * dt, substeps=2)
    t = np.arange(len(a)) * 2 * dt
    crossings = [t[i] - a[i] * (t[i + 1] - t[i]) / (a[i + 1] - a[i]) for i in range(len(a) - 1) if a[i] > 0 >= a[i + 1]]
    assert np.diff(crossings).mean() == pytest.approx(2 * n * cs / math.sqrt(9.81 * depth), rel=0.01)
    g.release()


def test_mu_is_the_largest_eigenvalue_of_each_lattice():
    """The stability bound's mu: 8 for the square grid's 4-neighbour Laplacian, 9 for the triangular
    lattice's 6-neighbour one (periodic lattices, where the bound is reached)."""
    from hydro.params import Geometry
    n = 12
    for offsets, geometry in (([(1, 0), (0, 1)], Geometry.square(1.0)),
                              ([(1, 0), (0, 1), (1, -1)], Geometry.hexagonal(1.0))):
        lap = np.zeros((n * n, n * n))
        for y in range(n):
            for x in range(n):
                for dx, dy in offsets:
                    i, j = y * n + x, ((y + dy) % n) * n + (x + dx) % n
                    lap[i, i] += 1; lap[j, j] += 1; lap[i, j] -= 1; lap[j, i] -= 1
        assert np.linalg.eigvalsh(lap).max() == pytest.approx(geometry.mu, rel=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_a_substep_past_the_bound_moves_water_through_capped_pipes(ctx, rng, kind):
    """Substeps 4x longer than stable (reached only when water deepens mid-call): every pipe carries what
    one of depth 2 (1 + r) / (h^2 (g w / (l S)) mu) would (DESIGN's bound solved for the depth; here a
    sixteenth of the lake's), so flows are 16x smaller than uncapped; GPU and reference agree on a rough
    state after five such substeps, and nothing blows up."""
    from hydro.reference import water as ref
    from water_cases import twins
    gravity, s = 9.81, 1.0
    ny, nx = 12, 14
    depth = 3.0 + 0.05 * rng.random((ny, nx))        # flat bed: the surface is the depth
    g = _new(ctx, kind, np.zeros((ny, nx)), depth, friction=0.0, gravity=gravity, cell_size=s)
    eta = g.water.astype(np.float64)
    h = float(np.float32(4.0 * g.max_stable_dt()))
    g._run(h, 1)
    cap = 2.0 * (1.0 + 1.0) / (h * h * gravity * PER_DEPTH[kind](s) * MU[kind])      # friction 0: r = 1
    width = s if kind == "square" else s / math.sqrt(3.0)
    assert eta.min() > 15 * cap                       # every pipe is capped
    faces = [(g.flow_x[:, 1:nx], eta[:, :nx - 1], eta[:, 1:]), (g.flow_y[1:ny, :], eta[:ny - 1, :], eta[1:, :])]
    if kind == "hex":                                 # flow_z[y, x]: from (x, y-1) to (x-1, y)
        faces.append((g.flow_z[1:ny, 1:nx], eta[:ny - 1, 1:], eta[1:, :nx - 1]))
    for q, a, b in faces:                             # from rest: q = h g / l * min(h_face, cap) * w * (eta_a - eta_b)
        expected = h * gravity / s * np.minimum(np.maximum(a, b), cap) * width * (a - b)
        np.testing.assert_allclose(q, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    g.release()

    terrain, water = random_state(rng, (12, 14))
    g, state = twins(ctx, kind, terrain, 3.0 * water, friction=0.0)
    h = 4.0 * g.max_stable_dt()
    g._run(h, 5)
    ref.step(state, 5 * h, substeps=5)
    np.testing.assert_allclose(g.water, state.water, atol=1e-4 * state.water.max())
    assert np.all(np.isfinite(g.water)) and g.water.min() >= 0
    g.release()
