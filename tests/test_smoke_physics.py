"""SmokeGrid physics with stated tolerances: exact projection, multigrid convergence, Taylor-Green
energy (SL vs MacCormack), the Ghia et al. 1982 lid-driven cavity, buoyancy, vorticity confinement,
obstacles, fire, and frame-rate independence."""
import numpy as np
import pytest

from hydro.reference import smoke as ref
from hydro.smoke import SmokeGrid

# Ghia, Ghia & Shin, J. Comput. Phys. 48 (1982) 387-411, Re = 100: Table I (u on the vertical centre
# line, y) and Table II (v on the horizontal centre line, x).
GHIA_U = np.array([[1.0, 1.0], [0.9766, 0.84123], [0.9688, 0.78871], [0.9609, 0.73722], [0.9531, 0.68717],
                   [0.8516, 0.23151], [0.7344, 0.00332], [0.6172, -0.13641], [0.5, -0.20581],
                   [0.4531, -0.21090], [0.2813, -0.15662], [0.1719, -0.10150], [0.1016, -0.06434],
                   [0.0703, -0.04775], [0.0625, -0.04192], [0.0547, -0.03717], [0.0, 0.0]])
GHIA_V = np.array([[1.0, 0.0], [0.9688, -0.05906], [0.9609, -0.07391], [0.9531, -0.08864], [0.9453, -0.10313],
                   [0.9063, -0.16914], [0.8594, -0.22445], [0.8047, -0.24533], [0.5, 0.05454],
                   [0.2344, 0.17527], [0.2266, 0.17507], [0.1563, 0.16077], [0.0938, 0.12317],
                   [0.0781, 0.10890], [0.0703, 0.10091], [0.0625, 0.09233], [0.0, 0.0]])


def _random_faces(g, rng):
    ny, nx = g.shape
    g.face_velocity = (rng.normal(size=(ny, nx + 1)), rng.normal(size=(ny + 1, nx)))


def _rms_div(g):
    return g.divergence("rms")


def _block_obstacle(g, n, open_side):
    """A solid block in the lower left of the grid, and side `open_side` open."""
    mask = np.zeros(g.shape, bool)
    mask[n // 3:n // 2, n // 4:n // 2] = True
    g.obstacles = mask
    g.set_boundary(open_side, "open")


def _cycle_history(g, cycles=4):
    """The relative residual after each of `cycles` V-cycles on the divergence of the grid's velocity."""
    pr = g._pressure
    g._divergence((g._vx.read, g._vy.read), pr.rhs[0], pr.q[0])
    history = []
    for _ in range(cycles):
        pr.v_cycle()
        pr.residual(pr.q[0], pr.rhs[0], pr.norms)
        history.append(pr.read_norms(pr.norms)["relative"])
    return history


@pytest.mark.parametrize("shape, open_sides, obstacle", [((40, 56), (), False), ((37, 50), ("left", "top"), True)])
def test_projection_leaves_divergence_at_solver_tolerance(ctx, rng, shape, open_sides, obstacle):
    g = SmokeGrid(ctx, shape, pressure_tolerance=1e-4)
    if obstacle:
        mask = np.zeros(shape, bool)
        mask[10:20, 15:30] = True
        g.obstacles = mask
    for side in open_sides:
        g.set_boundary(side, "open")
    _random_faces(g, rng)
    before = _rms_div(g)
    g.project()
    after = _rms_div(g)
    assert g.pressure_residual <= 1e-4
    # MAC grid: D G == L, so the divergence left is the residual (up to fp32 rounding of the update)
    assert after / before <= 1.5e-4
    assert g.pressure_cycles <= 8
    g.release()
    # the popular demos' 20 Jacobi sweeps on the same field leave far more
    j = SmokeGrid(ctx, shape, pressure="jacobi", pressure_iterations=20)
    if obstacle:
        j.obstacles = mask
    for side in open_sides:
        j.set_boundary(side, "open")
    _random_faces(j, np.random.default_rng(1234))
    j.project()
    assert j.pressure_residual > 0.05
    j.release()


@pytest.mark.parametrize("n", [32, 64])
def test_multigrid_residual_falls_per_cycle(ctx, rng, n):
    """V-cycles: the first cuts the residual by > 20x, every later one by > 3x (an open side next to odd
    coarse sizes and an obstacle is the hard case: 5-24x here; a closed box gives ~30x per cycle), and
    four reach 5e-5, at both sizes: the rate does not depend on the size."""
    g = SmokeGrid(ctx, (n, n + 6))
    _block_obstacle(g, n, "right")
    _random_faces(g, rng)
    history = _cycle_history(g)
    pr = g._pressure
    assert history[0] < 0.05
    for a, b in zip(history, history[1:]):
        assert b < max(a / 3.0, 3e-6), history
    assert history[-1] < 5e-5, history
    # fixed-iteration options: residual decreases with iterations but stays far above multigrid's
    for method in ("jacobi", "gauss-seidel"):
        res = []
        for k in (10, 40):
            g._divergence((g._vx.read, g._vy.read), pr.rhs[0], pr.q[0])
            pr.solve(method, k, None)
            res.append(pr.read_norms(pr.norms)["relative"])
        assert res[1] < res[0] and res[1] > 10 * history[1]
    g.release()


def _taylor_green(ctx, n, advection, T=5.0):
    h = np.pi / n
    g = SmokeGrid(ctx, (n, n), cell_size=h, advection=advection)     # closed free-slip box [0, pi]^2
    j, i = np.mgrid[0:n, 0:n + 1]
    vx = np.sin(i * h) * np.cos((j + 0.5) * h)
    j, i = np.mgrid[0:n + 1, 0:n]
    vy = -np.cos((i + 0.5) * h) * np.sin(j * h)
    g.face_velocity = (vx, vy)
    g.project()
    ke0 = g.kinetic_energy()
    steps = int(round(T / (0.5 * h)))                  # CFL 0.5 at the peak speed 1
    for _ in range(steps):
        g.step(T / steps)
    ratio = g.kinetic_energy() / ke0
    g.release()
    return ratio


def test_taylor_green_energy(ctx):
    """Inviscid Taylor-Green is steady; every loss is numerical. 32^2, T = 5, CFL 0.5. Measured on this
    MAC grid: SL 0.69, MacCormack 0.89 (the collocated demos' numbers: 0.49 / 0.79, research notes)."""
    sl = _taylor_green(ctx, 32, "semi-lagrangian")
    mc = _taylor_green(ctx, 32, "maccormack")
    assert sl >= 0.62
    assert mc >= 0.85
    assert mc >= sl + 0.12
    assert mc <= 1.0 + 1e-3


def test_lid_driven_cavity_matches_ghia_1982(ctx):
    """Re = 100 unit cavity, 32^2, MacCormack, dt 0.05 to t = 10 (steady to 1e-3). Tolerance: 0.02 of the
    lid speed at Ghia's points on both centre lines (measured 0.012 / 0.009)."""
    n = 32
    g = SmokeGrid(ctx, (n, n), cell_size=1.0 / n, viscosity=1.0 / 100)
    for side in ("left", "right", "bottom"):
        g.set_boundary(side, "no-slip")
    g.set_boundary("top", "no-slip", velocity=(1.0, 0.0))
    for _ in range(200):
        g.step(0.05)
    vx, vy = (f.astype(np.float64) for f in g.face_velocity)
    yc = np.concatenate([[0.0], (np.arange(n) + 0.5) / n, [1.0]])
    u = np.concatenate([[0.0], vx[:, n // 2], [1.0]])           # faces at x = 0.5; lid and floor ends
    v = np.concatenate([[0.0], vy[n // 2, :], [0.0]])           # faces at y = 0.5
    err_u = np.abs(np.interp(GHIA_U[:, 0], yc, u) - GHIA_U[:, 1]).max()
    err_v = np.abs(np.interp(GHIA_V[:, 0], yc, v) - GHIA_V[:, 1]).max()
    assert err_u <= 0.02 and err_v <= 0.02, (err_u, err_v)
    assert g.divergence() <= 1e-2                                # 1/s, the lid shears at 32 / s
    g.release()


def _centroid_y(field):
    w = np.clip(field, 0, None)
    return float((w.sum(axis=1) * np.arange(field.shape[0])).sum() / w.sum())


def test_hot_blob_rises_and_dense_cold_blob_sinks(ctx):
    for temperature, density, direction in ((2.0, 0.0, 1), (-1.0, 2.0, -1)):
        g = SmokeGrid(ctx, (48, 32), buoyancy=(3.0, 2.0))
        g.splat(16, 24, 5, density=density + 0.05, temperature=temperature)
        start = _centroid_y(g.density)
        for _ in range(20):
            g.step(0.1)
        moved = _centroid_y(g.density) - start
        assert direction * moved > 2.0, moved             # cells in 2 s
        g.release()


def _enstrophy(g):
    vx, vy = (f.astype(np.float64) for f in g.face_velocity)
    w = ref.curl(vx, vy, g.obstacles, g._bc, g.params.cell_size)
    return float((w ** 2).sum())


def test_vorticity_confinement_keeps_enstrophy(ctx):
    results = []
    for eps in (0.0, 4.0):
        g = SmokeGrid(ctx, (40, 40), vorticity=eps, advection="semi-lagrangian")
        g.face_velocity = (np.random.default_rng(5).normal(size=(40, 41)), np.random.default_rng(6).normal(size=(41, 40)))
        g.project()
        e0 = _enstrophy(g)
        for _ in range(15):
            g.step(0.2)
        results.append(_enstrophy(g) / e0)
        g.release()
    assert results[1] > 1.3 * results[0], results


def test_nothing_inside_obstacles(ctx):
    g = SmokeGrid(ctx, (40, 48), buoyancy=(0.5, 2.0), vorticity=2.0, viscosity=0.05)
    mask = np.zeros((40, 48), bool)
    mask[18:26, 20:30] = True
    g.obstacles = mask
    for k in range(12):
        g.splat(24, 14 + k, 8, velocity=(3.0, 6.0), density=1.0, temperature=1.0)   # overlaps the solid
        g.step(0.1)
    assert np.all(g.density[mask] == 0) and np.all(g.temperature[mask] == 0)
    assert np.all(g.velocity[mask] == 0)
    vx, vy = g.face_velocity
    tx, ty = ref.face_types(mask, g._bc)
    assert np.all(vx[tx == ref.FACE_FIXED] == 0) and np.all(vy[ty == ref.FACE_FIXED] == 0)
    assert g.density[~mask].sum() > 1.0
    g.release()


@pytest.mark.parametrize("advection", ["semi-lagrangian", "maccormack"])
def test_stirred_splats_keep_the_density_total(ctx, advection):
    """A splat that stirs as it adds smoke, round a circle in a box walled all round, 30 frames, no
    dissipation: after every step the density total is what the splats added (their brushes, by the
    reference twin) within 1e-5, and so is the ledger's "splats" entry. Without the conservation fix
    the schemes' own totals stayed within -8.1 % and -2.6 % in this scene (llvmpipe; the float64
    reference: -8.1 % and -2.3 %), and carried by the velocity before its projection (a splat's
    impulse is divergent) they went to 1.21 and 1.28."""
    n, frames = 64, 30
    g = SmokeGrid(ctx, (n, n), cell_size=1 / n, advection=advection, density_dissipation=0.0)
    assert all(kind == "free-slip" for kind, _ in g.boundaries.values())
    empty = (np.zeros((n, n + 1)), np.zeros((n + 1, n)), np.zeros((n, n, 3)), np.zeros((n, n), bool), ref.Bc())
    added, totals = 0.0, []
    for k in range(frames):
        angle = 0.2 * k
        x, y, radius = n / 2 + 0.2 * n * np.cos(angle), n / 2 + 0.2 * n * np.sin(angle), n / 10
        velocity = (-1.5 * np.sin(angle), 1.5 * np.cos(angle))       # world units/s: 1.6 cells a frame
        g.splat(x, y, radius, velocity=velocity, density=1 / frames)
        # what the splat added: its brush over the (all fluid) cells, by the reference twin
        added += ref.splat(*empty, x, y, radius, velocity, (1 / frames, 0.0, 0.0))[2][..., 0].sum()
        g.step(1 / 60)
        totals.append(g.density.astype(np.float64).sum() / added)
    assert np.all(np.abs(np.array(totals) - 1.0) <= 1e-5), totals
    assert g.ledger()["density"]["splats"] == pytest.approx(added / n ** 2, rel=1e-6)
    g.release()


def test_a_splat_pushing_every_frame_keeps_maccormack_bounded(ctx):
    """A strong splat at the same place every frame (200 units/s a frame, a jet of 5-6 cells a
    frame) in a closed box: MacCormack's peak speed stays within 1.5x semi-Lagrangian's in the same
    scene (1.23x, llvmpipe). With the splat's impulse carried by the velocity before any projection
    (the step's order before the impulse was held apart), MacCormack's peak grew to 2738 against
    semi-Lagrangian's 486 in these 60 frames, and to 4050 in the float64 reference's 160."""
    n, peaks = 64, {}
    for advection in ("maccormack", "semi-lagrangian"):
        g = SmokeGrid(ctx, (n, n), advection=advection)
        top = 0.0
        for _ in range(60):
            g.splat(n / 2, n / 4, 3, velocity=(0.0, 200.0), density=1.0)
            g.step(1 / 60)
            top = max(top, float(np.abs(g.velocity).max()))
        peaks[advection] = top
        g.release()
    assert peaks["semi-lagrangian"] > 100.0                  # the jet is there
    assert peaks["maccormack"] <= 1.5 * peaks["semi-lagrangian"], peaks


def test_fire_burns_fuel_into_heat_and_smoke(ctx):
    g = SmokeGrid(ctx, (40, 32), fire=True, burn_rate=2.0, burn_heat=3.0, smoke_yield=0.5, cooling=1.0,
                  buoyancy=(0.0, 5.0))
    g.splat(16, 8, 5, density=0.0, fuel=1.0)
    fuel0 = g.fuel.sum()
    g.step(0.05)
    assert g.temperature.max() > 0.1 and g.density.sum() > 0
    for _ in range(30):
        g.step(0.05)
    assert g.fuel.sum() < 0.05 * fuel0                     # exp(-2 * 1.55) = 0.045 of it left
    assert _centroid_y(g.density) > 10.0                   # smoke rose from y = 8
    g.release()


def test_frame_rate_independence(ctx):
    """The same buoyant plume stepped at 30 Hz and at 120 Hz for 1.5 s: density fields agree within 15 %
    (relative L2) and their centroids within 0.5 cell."""
    fields = []
    for hz in (30, 120):
        g = SmokeGrid(ctx, (48, 32), buoyancy=(0.0, 3.0), vorticity=1.0)
        g.splat(16, 10, 5, velocity=(2.0, 0.0), density=1.0, temperature=1.0)
        for _ in range(int(1.5 * hz)):
            g.step(1.0 / hz)
        fields.append(g.density.astype(np.float64))
        g.release()
    a, b = fields
    assert np.linalg.norm(a - b) / np.linalg.norm(b) < 0.15
    assert abs(_centroid_y(a) - _centroid_y(b)) < 0.5


@pytest.mark.parametrize("hz", [30, 120])
def test_cooling_follows_the_analytic_law(ctx, hz):
    """One hot cell in still gas, no fuel: d(theta)/dt = -c theta^4, theta = (T - T_amb) / burn_heat, so
    theta(t) = theta0 / (1 + 3 c theta0^3 t)^(1/3). Stepped at 30 Hz and at 120 Hz for 1 s both match
    it to 1e-5 (relative; fp32), and every other cell stays at ambient."""
    t_amb, heat, c, theta0 = 20.0, 2.0, 1.5, 1.5
    g = SmokeGrid(ctx, (8, 10), fire=True, burn_heat=heat, cooling=c, ambient_temperature=t_amb)
    temperature = np.full(g.shape, t_amb)
    temperature[3, 4] = t_amb + heat * theta0
    g.temperature = temperature
    for _ in range(hz):
        g.step(1.0 / hz)
    expected = theta0 / (1.0 + 3.0 * c * theta0 ** 3 * 1.0) ** (1.0 / 3.0)
    got = (float(g.temperature[3, 4]) - t_amb) / heat
    assert got == pytest.approx(expected, rel=1e-5), (got, expected)
    others = np.delete(g.temperature.ravel(), 3 * 10 + 4)
    np.testing.assert_allclose(others, t_amb, rtol=1e-7)
    g.release()


@pytest.mark.parametrize("advection", ["maccormack", "semi-lagrangian"])
def test_uniform_gas_flowing_past_an_obstacle_stays_uniform(ctx, advection):
    """Uniform density 1 and temperature 300 K (= ambient) carried at 4 cells/s past a block, open left and
    right, for 1 s: both stay uniform to fp32 precision (1e-5 relative) in every fluid cell, and solid
    cells hold no density and the ambient temperature. Sampling the solids' stored values instead
    (the old bilinear) took the gas beside the block to 287 K and density 0.956."""
    shape = (20, 32)
    g = SmokeGrid(ctx, shape, advection=advection, ambient_temperature=300.0)
    mask = np.zeros(shape, bool)
    mask[7:13, 12:17] = True
    g.obstacles = mask
    g.set_boundary("left", "open")
    g.set_boundary("right", "open")
    g.density = np.ones(shape)
    ny, nx = shape
    g.face_velocity = (np.full((ny, nx + 1), 4.0), np.zeros((ny + 1, nx)))
    g.project()
    for _ in range(10):
        g.step(0.1)
    assert np.abs(g.velocity[~mask]).max() > 1.0                     # the gas did flow round the block
    np.testing.assert_allclose(g.density[~mask], 1.0, rtol=1e-5)
    np.testing.assert_allclose(g.temperature[~mask], 300.0, rtol=1e-5)
    assert np.all(g.density[mask] == 0) and np.all(g.temperature[mask] == 300.0)
    g.release()


def test_fresh_grid_at_ambient_stays_at_rest(ctx):
    """A new grid starts at ambient_temperature: with ambient 300, buoyancy beta 0.01, open sides and an
    obstacle, 1 s of stepping adds no wind (a grid that started at 0 K reached 5.5 units/s)."""
    g = SmokeGrid(ctx, (16, 24), buoyancy=(0.0, 0.01), ambient_temperature=300.0)
    np.testing.assert_array_equal(g.temperature, 300.0)
    mask = np.zeros(g.shape, bool)
    mask[5:9, 10:14] = True
    g.obstacles = mask
    g.set_boundary("left", "open")
    g.set_boundary("right", "open")
    for _ in range(10):
        g.step(0.1)
    assert np.abs(g.velocity).max() < 1e-6
    np.testing.assert_allclose(g.temperature, 300.0, rtol=1e-7)
    g.release()


def _exact_viscous_solve(vx, vy, solid, bc, a):
    """(I - a L) v = v* solved directly in float64: the affine operator's matrix column by column."""
    sx, sy = vx.shape, vy.shape
    nxf = vx.size

    def apply(z):
        ax, ay = ref.helmholtz(z[:nxf].reshape(sx), z[nxf:].reshape(sy), solid, bc, a)
        return np.concatenate([ax.ravel(), ay.ravel()])

    n = nxf + vy.size
    const = apply(np.zeros(n))
    m = np.stack([apply(e) - const for e in np.eye(n)], axis=1)
    z = np.linalg.solve(m, np.concatenate([vx.ravel(), vy.ravel()]) - const)
    return z[:nxf].reshape(sx), z[nxf:].reshape(sy)


def test_high_viscosity_solve_reaches_its_tolerance(ctx, rng):
    """a = nu dt / h^2 = 51 (where 200 red-black sweeps left 2.4 % of |v|): the viscosity solve reaches
    its stated bound (DIFFUSION_TOLERANCE = 1e-5 of |v*|) against a direct float64 solve, with a
    sliding lid, an obstacle and an open side; a capped solve reports a bound that covers its error."""
    from hydro.smoke import DIFFUSION_TOLERANCE
    shape, dt = (12, 16), 0.1
    for cap, tol in ((500, 2 * DIFFUSION_TOLERANCE), (10, None)):
        g = SmokeGrid(ctx, shape, viscosity=510.0, diffusion_iterations=cap)
        mask = np.zeros(shape, bool)
        mask[4:7, 6:9] = True
        g.obstacles = mask
        g.set_boundary("top", "no-slip", velocity=(1.0, 0.0))
        g.set_boundary("right", "open")
        _random_faces(g, rng)
        vx, vy = (f.astype(np.float64) for f in g.face_velocity)
        ex, ey = _exact_viscous_solve(vx, vy, mask, g._bc, 51.0)
        g._diffuse_all(dt)
        gx, gy = (f.astype(np.float64) for f in g.face_velocity)
        err = np.sqrt(((gx - ex) ** 2).sum() + ((gy - ey) ** 2).sum()) / np.sqrt((vx ** 2).sum() + (vy ** 2).sum())
        if tol is not None:
            assert g.diffusion_error_bound <= DIFFUSION_TOLERANCE and err <= tol, (err, g.diffusion_error_bound)
            assert g.diffusion_iterations_run < 200
        else:
            assert g.diffusion_iterations_run == 10 and g.diffusion_error_bound > 1e-3
            assert err <= g.diffusion_error_bound, (err, g.diffusion_error_bound)
        g.release()


@pytest.mark.parametrize("shape, side", [((129, 129), "top"), ((100, 100), "top"), ((75, 129), "right")])
def test_multigrid_with_an_odd_edge_at_the_open_side(ctx, shape, side):
    """Grids whose levels end in a row (column) past an odd edge at the open side: those cells span
    fewer fine cells than the rest (hydro.reference.smoke.coarsen). A solve to 1e-5 takes at most 4
    cycles (3-4). Before the coarse levels were scaled to such cells, 129^2 with an open top cut the
    residual 1.1-1.4x a cycle and the solve stopped after 2 cycles at 2.4e-2, taking the stall for
    round-off."""
    g = SmokeGrid(ctx, shape, pressure_tolerance=1e-5)
    g.set_boundary(side, "open")
    rng = np.random.default_rng(5)
    ny, nx = shape
    g.face_velocity = (rng.normal(size=(ny, nx + 1)), rng.normal(size=(ny + 1, nx)) + 1.0)
    before = _rms_div(g)
    g.project()
    assert g.pressure_residual <= 1e-5 and g.pressure_cycles <= 4, (g.pressure_cycles, g.pressure_residual)
    assert _rms_div(g) / before <= 3e-5
    g.release()


def test_multigrid_with_an_open_side_keeps_its_rate_on_a_large_grid(ctx, rng):
    """Smoke rising out of an open top (random velocities on an upward flow of 1 cell/s, so the
    divergence has a net source and the pressure a large-scale part) on a 256^2 grid with an obstacle:
    three V-cycles leave < 6e-5 (3.1e-5), and every later cycle cuts the residual by more than 2.6x
    until fp32 round-off (~1e-5). The open side is where the coarse levels are hardest to get right:
    with its weight coarsened by 2/3 on every level instead of each level's rediscretisation
    (hydro.reference.smoke.coarsen) three cycles left 1.3e-4, ~4.8x a cycle; with 8 red-black
    sweeps on the nearly singular coarsest level instead of the exact solve (and V(2,2) Gauss-Seidel)
    5.1e-4, 2.0-3.3x a cycle."""
    n = 256
    g = SmokeGrid(ctx, (n, n))
    _block_obstacle(g, n, "top")
    g.face_velocity = (rng.normal(size=(n, n + 1)), rng.normal(size=(n + 1, n)) + 1.0)
    history = _cycle_history(g, 5)
    assert history[2] < 6e-5, history
    assert history[1] < history[0] / 5 and history[2] < history[1] / 5, history
    for a, b in zip(history[2:], history[3:]):
        assert b < max(a / 2.6, 1.5e-5), history
    g.release()
