"""Manning's bed friction and fixed substeps: steady flow down a slope reaches Manning's normal depth at
discharges ten times apart, a thin sheet runs slower than a river by h^(2/3), with inertia uniform flow is
steady whichever way it runs, a lake stays at rest, the kernels agree with the reference with Manning on;
fixed substeps give the same water at any frame rate."""
import math

import numpy as np
import pytest

import hydro
from hydro.reference import water as ref
from water_cases import GRIDS, KERNELS, assert_same_bits, gpu_flows, random_state, set_boundary_both, twins

SLOPE, N = 0.01, 0.03               # bed slope, Manning's n (a river)


def _channel(ctx, q_per_width, kernel=None, nx=60, ny=3, seconds=600.0, kind="square", inertia=False):
    """A straight channel ny cells wide falling at SLOPE along x, walled at its sides, fed q_per_width
    (m^2/s) at its upper end and running at its lower end into a sea at the normal depth of the cell
    beyond it, from half that depth to a steady state: its depth, and velocity (m/s), in the middle
    third, and the normal depth. The hex lattice's channel (row y sits y / 2 along x, rows sqrt(3) / 2
    apart) is read along its two middle rows: walls along the flow slow the rows beside them (docs/design.md)."""
    h_n = (N * q_per_width / math.sqrt(SLOPE)) ** 0.6
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    hexagonal = kind == "hex"
    terrain = 5.0 - SLOPE * (x + 0.5 * y if hexagonal else x)
    g = GRIDS[kind](ctx, terrain, water=np.full((ny, nx), 0.5 * h_n), friction=0.0, manning=N, kernel=kernel,
                    inertia=inertia)
    g.set_boundary("left", "inflow", q_per_width * ny * (math.sqrt(3) / 2 if hexagonal else 1.0))
    g.set_boundary("right", "level", float(terrain[:, -1].mean()) - SLOPE + h_n)
    for _ in range(60):
        g.step(seconds / 60)
    middle, rows = slice(nx // 3, 2 * nx // 3), slice(ny // 2 - 1, ny // 2 + 1) if hexagonal else slice(None)
    depth = float(g.water[rows, middle].mean())
    flow = float(g.flow_x[rows, middle].mean())             # volume rate across a face, width 1
    g.release()
    return depth, flow / depth, h_n


@pytest.mark.parametrize("kernel", KERNELS)
def test_steady_flow_reaches_mannings_normal_depth_at_two_discharges(ctx, kernel):
    """h = (n q / sqrt(S0))^(3/5): ten times the discharge is 10^0.6 = 3.98 times deeper, not ten."""
    depths = []
    for q in (0.05, 0.5):
        depth, _, h_n = _channel(ctx, q, kernel)
        assert depth == pytest.approx(h_n, rel=0.05), (q, depth, h_n)
        depths.append(depth)
    assert depths[1] / depths[0] == pytest.approx(10 ** 0.6, rel=0.05)


@pytest.mark.parametrize("kind", list(GRIDS))
def test_with_inertia_steady_flow_reaches_mannings_normal_depth(ctx, kind):
    """The same with inertia, on both lattices (the hex channel 32 rows wide): within 5 % at discharges
    ten times apart (llvmpipe: hex 1.3 % and 2.3 % deep)."""
    for q in (0.05, 0.5):
        depth, _, h_n = _channel(ctx, q, ny=32 if kind == "hex" else 3, kind=kind, inertia=True)
        assert depth == pytest.approx(h_n, rel=0.05), (q, depth, h_n)


def test_a_thin_sheet_runs_slower_than_a_river_by_h_to_the_two_thirds(ctx):
    """Manning's velocity h^(2/3) sqrt(S0) / n: a 1 cm sheet of rain runs at 0.046 of a 1 m river's
    speed (the linear friction alone gives both the same speed)."""
    speeds = {}
    for h in (0.01, 1.0):
        q = h ** (5 / 3) * math.sqrt(SLOPE) / N
        depth, speed, _ = _channel(ctx, q)
        speeds[h] = speed
        assert speed == pytest.approx(depth ** (2 / 3) * math.sqrt(SLOPE) / N, rel=0.05)
    assert speeds[0.01] / speeds[1.0] == pytest.approx(0.01 ** (2 / 3), rel=0.05)


def _uniform_flow_change(ctx, kind, angle, inertia, h=0.5, n=24):
    """Water h deep on a plane falling at SLOPE toward `angle` (degrees from world x), its faces carrying
    the flow of Manning's velocity h^(2/3) sqrt(S0) / n that way (each face its component across it): how
    much a substep changes the flows away from the grid's sides, relative to the largest."""
    y, x = np.mgrid[0:n, 0:n].astype(np.float64)
    wx, wy = (x + 0.5 * y, y * math.sqrt(3) / 2) if kind == "hex" else (x, y)
    down = np.array([math.cos(math.radians(angle)), math.sin(math.radians(angle))])
    g = GRIDS[kind](ctx, 10.0 - SLOPE * (down[0] * wx + down[1] * wy), water=np.full((n, n), h), friction=0.0,
                    manning=N, inertia=inertia)
    speed = h ** (2 / 3) * math.sqrt(SLOPE) / N
    axes = [(1.0, 0.0), (0.0, 1.0)] if kind == "square" else [(1.0, 0.0), (0.5, math.sqrt(3) / 2),
                                                              (-0.5, math.sqrt(3) / 2)]
    flows = [g.geometry.face_width * h * speed * float(down @ axis) for axis in axes]
    g.flow_x, g.flow_y = (np.full(q.shape, f) for q, f in zip((g.flow_x, g.flow_y), flows))
    if kind == "hex":
        g.flow_z = np.full(g.flow_z.shape, flows[2])
    before = [q.copy() for q in gpu_flows(g)]
    g.step(0.05, substeps=1)
    inner = np.s_[6:-6, 6:-6]
    change = max(float(np.abs(a[inner] - b[inner]).max()) for a, b in zip(gpu_flows(g), before))
    g.release()
    return change / max(abs(f) for f in flows)


@pytest.mark.parametrize("kind", list(GRIDS))
def test_with_inertia_mannings_uniform_flow_is_steady_in_every_direction(ctx, kind):
    """With inertia Manning's friction acts on the water's speed (carried_flow), so uniform flow at
    Manning's velocity down a plane is steady whichever way the plane falls across the lattice, to float
    rounding; on each face's own flow (the classic pipes, Bates et al. 2010) it is steady along the
    square grid's axes only: a river across them runs up to 19 % fast (a substep changed these flows by
    3e-4 to 7e-4 of the largest, measured on llvmpipe)."""
    for angle in (0.0, 30.0, 45.0, 100.0):
        assert _uniform_flow_change(ctx, kind, angle, inertia=True) < 2e-6, angle
    assert _uniform_flow_change(ctx, kind, 45.0, inertia=False) > 1e-4


@pytest.mark.parametrize("kind", list(GRIDS))
def test_a_lake_stays_at_rest_with_manning(ctx, kind):
    terrain = np.zeros((20, 24))
    terrain[8:12, 10:14] = 1.5                          # an island
    water = np.maximum(1.0 - terrain, 0.0)
    g = GRIDS[kind](ctx, terrain, water=water, friction=0.0, manning=0.05)
    for _ in range(20):
        g.step(0.5)
    assert np.abs(g.surface[water > 0] - 1.0).max() < 1e-6
    assert max(float(np.abs(q).max()) for q in gpu_flows(g)) < 1e-6
    g.release()


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("pipe_area", ["depth", 0.4])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_kernels_with_manning_match_the_reference(ctx, rng, kind, pipe_area, kernel):
    terrain, water = random_state(rng, (17, 23))
    g, s = twins(ctx, kind, terrain, water, friction=0.05, manning=0.04, pipe_area=pipe_area, kernel=kernel)
    set_boundary_both(g, s, "left", "inflow", 0.6)
    set_boundary_both(g, s, "right", "level", 0.7)
    set_boundary_both(g, s, "top", "outflow", 0.2)
    for _ in range(4):
        g.step(0.2, substeps=4)
        ref.step(s, 0.2, substeps=4)
    np.testing.assert_allclose(g.water, s.water, rtol=0, atol=2e-4 * s.water.max())
    for a, b in zip(gpu_flows(g), s.flows()):
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-4 * np.abs(b).max())
    plain = ref.State.new(terrain, water, hexagonal=kind == "hex",
                          params=hydro.WaterParams(friction=0.05, pipe_area=pipe_area))
    plain.table = s.table
    ref.step(plain, 0.8, substeps=16)
    assert np.abs(plain.flow_x - s.flow_x).max() > 0.05 * np.abs(s.flow_x).max()     # Manning acted
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_fixed_substeps_give_the_same_water_at_any_frame_rate(ctx, rng, kind):
    """A breach filmed at 30 and at 120 frames a second, and at a frame rate that wanders: with a fixed
    substep the same substeps run in the same order, so the water is the same to the bit."""
    terrain = np.zeros((24, 40))
    terrain[:, 18:20] = 3.0
    terrain[10:14, 18:20] = 0.0                          # the breach
    water = np.zeros((24, 40))
    water[:, :18] = 2.0
    results = []
    for frames in ([1 / 30] * 60, [1 / 120] * 240, list(rng.uniform(1 / 200, 1 / 20, 400))):
        g = GRIDS[kind](ctx, terrain, water=water, friction=0.02, fixed_substep=1 / 120)
        elapsed, done = 0.0, 0
        for dt in frames:
            if elapsed + dt > 2.0 + 1e-9:
                dt = 2.0 - elapsed
            if dt <= 0:
                break
            done += g.step(dt)
            elapsed += dt
        assert done == 240 and g.iteration == 240
        assert g.sim_time == pytest.approx(2.0, abs=1e-9)
        results.append((g.water, gpu_flows(g), g.ledger()))
        g.release()
    (w0, f0, l0), *others = results
    for w, f, led in others:
        assert_same_bits(w, w0)
        for a, b in zip(f, f0):
            assert_same_bits(a, b)
        assert led == l0
    assert np.abs(w0[:, 20:]).max() > 0.1                # the water went through the breach


def test_fixed_substeps_carry_the_remainder(ctx):
    g = hydro.WaterGrid(ctx, np.zeros((8, 8)), water=np.ones((8, 8)), fixed_substep=0.1)
    assert g.step(0.25) == 2 and g.sim_time == pytest.approx(0.2)         # 0.05 carried
    assert g.step(0.04) == 0 and g.sim_time == pytest.approx(0.2)         # 0.09 carried
    assert g.step(0.02) == 1 and g.sim_time == pytest.approx(0.3)         # 0.01 carried
    with pytest.raises(ValueError, match="^substeps: this grid steps in fixed substeps of 0.1 s"):
        g.step(0.1, substeps=2)
    assert g.sim_time == pytest.approx(0.3) and g.iteration == 3
    g.release()


@pytest.mark.parametrize("kwargs, exc, name", [
    ({"manning": -0.01}, ValueError, "manning"),
    ({"manning": math.nan}, ValueError, "manning"),
    ({"manning": "rough"}, TypeError, "manning"),
    ({"manning": 50.0}, ValueError, "manning"),
    ({"fixed_substep": 0.0}, ValueError, "fixed_substep"),
    ({"fixed_substep": -0.01}, ValueError, "fixed_substep"),
    ({"fixed_substep": math.inf}, ValueError, "fixed_substep"),
    ({"fixed_substep": "1/60"}, TypeError, "fixed_substep"),
    ({"fixed_substep": 5.0, "pipe_area": 2.0}, ValueError, "fixed_substep"),      # unstable for that pipe
])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_bad_friction_and_substep_arguments_are_named(ctx, kind, kwargs, exc, name):
    with pytest.raises(exc, match=f"^{name}:"):
        GRIDS[kind](ctx, np.zeros((6, 7)), **kwargs)
