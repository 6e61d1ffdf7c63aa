"""Every SmokeGrid pass on the GPU against its NumPy float64 twin (hydro.reference.smoke), on random
non-zero inputs, a non-square grid, an obstacle, and every boundary kind active at once."""
import numpy as np
import pytest

from hydro import _gl
from hydro import smoke_levels as levels
from hydro import smoke_ops as ops
from hydro import smoke_pressure
from hydro.reference import smoke as ref
from hydro.smoke import SmokeGrid

SHAPE = (21, 30)                 # (ny, nx), odd x even on purpose


def _close(gpu, expected, rtol=2e-5):
    expected = np.asarray(expected, np.float64)
    scale = max(float(np.abs(expected).max()), 1e-3)
    np.testing.assert_allclose(np.asarray(gpu, np.float64), expected, rtol=0, atol=rtol * scale)


def _read(tex, shape, comps=1):
    return SmokeGrid._read_tex(tex, shape, comps).astype(np.float64)


def _write(tex, arr):
    tex.write(np.ascontiguousarray(arr, np.float32).tobytes())


GRID_OPTIONS = dict(cell_size=0.5, viscosity=0.3, vorticity=3.0, buoyancy=(0.4, 1.5), ambient_temperature=0.2)


def _grid(ctx, shape, **options):
    """A grid with two obstacles (one on the bottom wall) and every boundary kind."""
    g = SmokeGrid(ctx, shape, **dict(GRID_OPTIONS, **options))
    solid = np.zeros(shape, bool)
    solid[6:10, 11:15] = True
    solid[0:3, 25:27] = True                       # touches the bottom wall
    g.obstacles = solid
    g.set_boundary("left", "open")
    g.set_boundary("right", "no-slip", velocity=(0.0, 0.7))
    g.set_boundary("top", "no-slip", velocity=(1.3, 0.0))
    return g, solid


def _random_fields(g, rng):
    """Random velocity and scalars on grid g; returns them as the GPU holds them, in float64."""
    ny, nx = g.shape
    g.face_velocity = (rng.normal(size=(ny, nx + 1)), rng.normal(size=(ny + 1, nx)))
    g.density = rng.uniform(0.1, 1.0, g.shape)
    g.temperature = rng.normal(size=g.shape)
    g.fuel = rng.uniform(0.0, 1.0, g.shape)
    vx, vy = (f.astype(np.float64) for f in g.face_velocity)
    return vx, vy, g._scalars()[..., :3].astype(np.float64)


@pytest.fixture
def case(ctx, rng):
    g, solid = _grid(ctx, SHAPE)
    vx, vy, s = _random_fields(g, rng)
    yield g, vx, vy, s, solid, g._bc
    g.release()


def test_geometry_zeroes_walls_and_solids(case):
    g, vx, vy, s, solid, bc = case
    tx, ty = ref.face_types(solid, bc)
    assert np.all(vx[tx == ref.FACE_FIXED] == 0) and np.all(vy[ty == ref.FACE_FIXED] == 0)
    np.testing.assert_array_equal(s[solid], np.broadcast_to(ref.solid_scalars(np.float32(0.2)), s[solid].shape))
    assert np.any(tx == ref.FACE_OPEN) and np.all(vx[:, 0][~solid[:, 0]] != 0)


def test_splat(case):
    g, vx, vy, s, solid, bc = case
    g.splat(12.3, 8.6, 5.5, velocity=(2.0, -1.5), density=0.7, temperature=3.0, fuel=0.4)
    ex, ey, es = ref.splat(vx, vy, s, solid, bc, 12.3, 8.6, 5.5, (2.0, -1.5), (0.7, 3.0, 0.4))
    gx, gy = g.face_velocity
    _close(gx, ex)
    _close(gy, ey)
    _close(g._scalars()[..., :3], es)
    assert not np.allclose(es, s)


def test_combust(case, ctx):
    g, vx, vy, s, solid, bc = case
    fire = SmokeGrid(ctx, SHAPE, fire=True, burn_rate=1.7, burn_heat=2.5, smoke_yield=0.6, cooling=0.8,
                     ambient_temperature=0.2)
    fire.density, fire.temperature, fire.fuel = s[..., 0], s[..., 1], s[..., 2]
    fire._combust(0.3)
    _close(fire._scalars()[..., :3], ref.combust(s, 0.3, 1.7, 2.5, 0.6, 0.8, 0.2))
    fire.release()


def test_curl_and_forces(case):
    """forces.comp computes the vorticity itself (in shared memory, per tile): the velocity after the
    forces against the reference's curl and confinement, on a grid of several tiles with every kind
    of wall, obstacles and random velocities, so tile edges, ghost values and clamped neighbours all
    take part."""
    g, vx, vy, s, solid, bc = case
    h = g.params.cell_size
    w = ref.curl(vx, vy, solid, bc, h)
    g._forces(0.2)
    ex, ey = ref.forces(vx, vy, s, w, solid, bc, 0.2, 3.0, h, 0.4, 1.5, 0.2)
    _close(_read(g._vx.write, (SHAPE[0], SHAPE[1] + 1)), ex)
    _close(_read(g._vy.write, (SHAPE[0] + 1, SHAPE[1])), ey)
    assert not np.allclose(ey, vy)


def test_advect_and_maccormack(case, rng):
    """Both advection passes of each scheme: the velocity's faces carried by the velocity itself, and
    the cell scalars carried by another velocity (in a step, the one the projection left)."""
    g, vx, vy, s, solid, bc = case
    ny, nx = SHAPE
    dt_h = 0.7 / g.params.cell_size
    decay = (0.9, 0.8, 1.0, 1.0)
    shapes = [(ny, nx + 1), (ny + 1, nx), (ny, nx)]
    tx, ty = ref.face_types(solid, bc)
    ux = np.where(tx == ref.FACE_FIXED, 0.0, rng.normal(size=shapes[0]))        # the scalars' carrier
    uy = np.where(ty == ref.FACE_FIXED, 0.0, rng.normal(size=shapes[1]))
    for tex, arr in zip(g._spare, (ux, uy)):
        _write(tex, arr)
    vel, carrier, scalars = (g._vx.read, g._vy.read), g._spare, (g._s.read,)
    g._advect(vel, vel, g._hat[:2], dt_h, (1.0,) * 4)
    g._advect(carrier, scalars, g._hat[2:], dt_h, (1.0,) * 4)
    hat = [_read(t, sh, c) for t, sh, c in zip(g._hat, shapes, (1, 1, 4))]
    hat[2] = hat[2][..., :3]
    own = ref.advect(vx, vy, vx, vy, s, solid, bc, dt_h, t_ambient=0.2)
    by_carrier = ref.advect(ux, uy, vx, vy, s, solid, bc, dt_h, t_ambient=0.2)
    for a, b in zip(hat, (*own[:2], by_carrier[2])):
        _close(a, b)
    # maccormack.comp traces the reverse step A^R(hat) itself, at each node: the reference's is a whole
    # advection of the GPU's hat, through the same velocity
    out = (g._vx.write, g._vy.write, g._s.write)
    g._maccormack(vel, vel, g._hat[:2], out[:2], dt_h, decay)
    g._maccormack(carrier, scalars, g._hat[2:], out[2:], dt_h, decay, totals=True)
    got = [_read(t, sh, c) for t, sh, c in zip(out, shapes, (1, 1, 4))]
    got[2] = got[2][..., :3]
    back = ref.advect(vx, vy, *hat, solid, bc, -dt_h, t_ambient=0.2)
    expected = ref.maccormack(vx, vy, s, hat, back, solid, bc, dt_h, decay[0], decay[1:], t_ambient=0.2)
    back = ref.advect(ux, uy, *hat, solid, bc, -dt_h, t_ambient=0.2)
    expected_s = ref.maccormack(vx, vy, s, hat, back, solid, bc, dt_h, decay[0], decay[1:], t_ambient=0.2,
                                vel=(ux, uy))[2]
    for a, b in zip(got, (*expected[:2], expected_s)):
        _close(a, b)
    # the limiter was active somewhere and the correction changed the field; the carriers differ
    assert not np.allclose(expected_s, hat[2] * np.asarray(decay[1:]))
    assert not np.allclose(expected_s, expected[2], atol=1e-3)


@pytest.mark.parametrize("advection", ["maccormack", "semi-lagrangian"])
def test_scalar_totals_and_conservation_fix(ctx, rng, advection):
    """The scalars' last advection pass sums them (sums.glsl, folded by the group that finishes last)
    and books the step's ledger entries, and conserve.comp then fixes their totals: against
    hydro.reference.smoke.conserve on random fields (heat of both signs), through an open side, with
    a density decay; twice in a row, so the group count and the slots start over right."""
    g, solid = _grid(ctx, SHAPE, advection=advection, density_dissipation=0.4)
    vx, vy, s = _random_fields(g, rng)
    bc, t_amb = g._bc, g.params.ambient_temperature
    dt = 0.3
    dt_h = dt / g.params.cell_size
    decays = g._decays(dt)
    booked = {}
    for _ in range(2):
        g._advect_scalars(dt)
        if advection == "semi-lagrangian":
            carried = ref.advect(vx, vy, vx, vy, s, solid, bc, dt_h, decays[0], decays[1:], t_ambient=t_amb)[2]
        else:
            hat = ref.advect(vx, vy, vx, vy, s, solid, bc, dt_h, t_ambient=t_amb)
            back = ref.advect(vx, vy, *hat, solid, bc, -dt_h, t_ambient=t_amb)
            carried = ref.maccormack(vx, vy, s, hat, back, solid, bc, dt_h, decays[0], decays[1:], t_ambient=t_amb)[2]
        fixed, entries = ref.conserve(carried, s, vx, vy, solid, bc, dt_h, decays[1:], t_amb)
        for key, value in entries.items():
            booked[key] = booked.get(key, 0.0) + value
        got = g._scalars()[..., :3].astype(np.float64)
        _close(got, fixed, 1e-4)
        # the totals the fix aimed at, to float32 rounding: the ones kept, whatever the GPU's carried
        # field was before the fix
        kept = ref.scalar_phi(s, t_amb)[~solid].sum(axis=0) - entries["outflow"] - entries["dissipation"]
        np.testing.assert_allclose(ref.scalar_phi(got, t_amb)[~solid].sum(axis=0), kept, rtol=2e-6, atol=1e-6 * np.abs(got).sum())
        g._ledger.commit()
        s = got
    area = g.params.cell_size ** 2
    report = g.ledger()
    for k, name in enumerate(("density", "heat", "fuel")):
        assert report[name]["outflow"] == pytest.approx(-booked["outflow"][k] * area, rel=1e-4, abs=1e-4)
        assert report[name]["dissipation"] == pytest.approx(-booked["dissipation"][k] * area, rel=1e-4, abs=1e-4)
        assert report[name]["drift"] == pytest.approx(booked["drift"][k] * area, rel=1e-2, abs=1e-3)
    assert booked["outflow"][0] != 0 and booked["dissipation"][0] > 0 and np.all(booked["dissipation"][1:] == 0)
    g.release()


def test_bilinear_fluid_never_reads_solids():
    """The masked sampler: solid nodes carry no weight and set no limiter bound, whatever they store."""
    a = np.zeros((4, 4, 3))
    a[..., 1] = 5.0
    solid = np.zeros((4, 4), bool)
    solid[1, 1] = True
    a[1, 1] = (-100.0, 1e6, 7.0)
    own = np.full((1, 3), -1.0)
    value, lo, hi = ref.bilinear_fluid(a, solid, np.array([0.7]), np.array([0.6]), own)
    np.testing.assert_allclose(value, [[0.0, 5.0, 0.0]], rtol=1e-15)
    np.testing.assert_array_equal(lo, [[0.0, 5.0, 0.0]])
    np.testing.assert_array_equal(hi, [[0.0, 5.0, 0.0]])
    solid[:2, :2] = True                                          # all four nodes solid: the own value
    value, lo, hi = ref.bilinear_fluid(a, solid, np.array([0.7]), np.array([0.6]), own)
    np.testing.assert_array_equal(value, own)
    np.testing.assert_array_equal(lo, own)


def test_diffuse(case):
    """Chebyshev iterations on the GPU against the float64 twin, iteration by iteration."""
    g, vx, vy, s, solid, bc = case
    ny, nx = SHAPE
    a = 0.8
    coeffs, _ = ops.chebyshev_coefficients(a, 1e-5, 4)
    rhs = (g._vx.read, g._vy.read)
    texs = [(g._vx.write, g._vy.write), g._hat[:2], g._spare]
    cur, prev = rhs, rhs
    ecur, eprev = (vx, vy), (vx, vy)
    for k, (c1, c2) in enumerate(coeffs):
        out = texs[k % 3]
        g._diffuse(rhs, cur, prev, out, a, c1, c2)
        ecur, eprev = ref.diffuse(*ecur, *eprev, vx, vy, solid, bc, a, c1, c2), ecur
        _close(_read(out[0], (ny, nx + 1)), ecur[0])
        _close(_read(out[1], (ny + 1, nx)), ecur[1])
        cur, prev = out, cur
    assert len(coeffs) == 4 and not np.allclose(ecur[0], vx)


def test_diffuse_density(ctx, rng):
    """diffuse_density.comp against the float64 twin, iteration by iteration, on random scalars with
    the obstacles and open sides of the other cases (no flux through any of them)."""
    g, solid = _grid(ctx, SHAPE, density_diffusion=0.5)
    _, _, s = _random_fields(g, rng)
    a = 0.9
    coeffs, _ = ops.chebyshev_coefficients(a, 1e-5, 4)
    rhs = g._s.write
    _write(rhs, np.concatenate([s, np.zeros(SHAPE + (1,))], axis=-1))
    texs = [g._hat[2], *g._s_spare]
    prog = g._programs["diffuse_density"]
    cur, prev, ecur, eprev = rhs, rhs, s, s
    for k, (c1, c2) in enumerate(coeffs):
        out = texs[k % 3]
        g._common(prog)
        _gl.set_uniforms(prog, u_a=a, u_c1=c1, u_c2=c2)
        for name, tex in (("B_SMOKE_S_HAT", rhs), ("B_SMOKE_S", cur), ("B_SMOKE_S_BACK", prev)):
            g._bind(name, tex)
        g._image("B_SMOKE_S_OUT", out)
        _gl.dispatch(ctx, prog, SHAPE[1], SHAPE[0])
        ecur, eprev = ref.diffuse_density(ecur, eprev, s, solid, a, c1, c2), ecur
        _close(_read(out, SHAPE, 4)[..., :3], ecur)
        cur, prev = out, cur
    fluid = ~solid
    assert not np.allclose(ecur[..., 0], s[..., 0]) and ecur[fluid, 0].sum() == pytest.approx(s[fluid, 0].sum(), rel=1e-12)
    g.release()


def test_projection_passes(case, rng):
    g, vx, vy, s, solid, bc = case
    pr = g._pressure
    ny, nx = SHAPE
    g._divergence((g._vx.read, g._vy.read), pr.rhs[0], pr.q[0])
    b = _read(pr.rhs[0], SHAPE)
    _close(b, ref.divergence(vx, vy, solid))
    assert np.all(_read(pr.q[0], SHAPE) == 0)
    lv = levels.levels(solid, bc)
    assert [c.shape[:2] for c in lv] == pr.shapes
    for tex, c in zip(pr.coef, lv):
        _close(_read(tex, c.shape[:2], 4), c)
    q = rng.normal(size=SHAPE) * (lv[0][..., 3] > 0)
    _write(pr.q[0], q)
    for parity in (0, 1):                         # red-black Gauss-Seidel, in place
        pr.smooth(0, parity)
        q = ref.smooth(q, b, lv[0], parity)
        _close(_read(pr.q[0], SHAPE), q)
    pr.jacobi(pr.q[0], pr.q_alt[0])
    _close(_read(pr.q_alt[0], SHAPE), ref.jacobi(q, b, lv[0]))
    g._subtract_gradient((g._vx.read, g._vy.read), pr.q[0], (g._vx.write, g._vy.write))
    ex, ey = ref.subtract_gradient(vx, vy, q, solid, bc)
    _close(_read(g._vx.write, (ny, nx + 1)), ex)
    _close(_read(g._vy.write, (ny + 1, nx)), ey)
    pr.residual(pr.q[0], pr.rhs[0], pr.norms)
    _norms_match(pr.read_norms(pr.norms), q, b, lv[0])


def _fluid_random(rng, c):
    return rng.normal(size=c.shape[:2]) * (c[..., 3] > 0)


def _norms_match(n, q, b, c):
    r = ref.residual(q, b, c)
    # the GPU forms each r = b - (sum W q_nb - diag q) in fp32: where q is converged its terms are far
    # larger than r, and r carries a few fp32 roundings of the largest of them
    slack = 4 * float(np.finfo(np.float32).eps) * float(np.abs(c[..., 3] * q).max())
    assert n["r"] == pytest.approx(np.linalg.norm(r), rel=1e-4, abs=slack)
    assert n["b"] == pytest.approx(np.linalg.norm(b), rel=1e-5)
    assert n["rmax"] == pytest.approx(np.abs(r).max(), rel=1e-4, abs=slack)
    assert n["bmax"] == pytest.approx(np.abs(b).max(), rel=1e-6)


# (ny, nx): odd and even sides, blocks cut by the edges, 1-3 tiled levels above coarse_cycle.comp
@pytest.mark.parametrize("shape", [(75, 131), (130, 67), (200, 257)])
def test_tiled_passes(ctx, rng, shape):
    """smooth_restrict / prolong_smooth on random non-zero q and b against the reference's red-black
    SOR smoothing (SWEEPS sweeps) with its restriction / prolongation, on every tiled level."""
    _check_tiled_passes(ctx, rng, shape)


# (block side, workgroup side): blocks of more and of fewer cells than invocations, a block wider than
# the CPU default, and the GPUs' two shapes (32 x 32 and 64 x 64 cells with 1024 invocations)
@pytest.mark.parametrize("tile, group", [(16, 16), (16, 32), (18, 32), (32, 32), (48, 16), (64, 32)])
def test_tiled_passes_in_other_tile_shapes(ctx, rng, monkeypatch, tile, group):
    _tile_tables(monkeypatch, (tile, group), (tile, group))
    g = _check_tiled_passes(ctx, rng, (200, 257))
    assert set(g._pressure.tile_shapes) == {(tile, group)}
    _check_v_cycle(ctx, rng, (75, 131))


# (grid, the tile shapes largest first, LEVEL_TILES, each tiled level's shape): two shapes in one grid with
# a first coarse level of exactly 32 x 32 (every cell of coarse_cycle.comp's shared arrays); a finest
# level of more blocks (342) than the folding group has invocations (256); the GPUs' three shapes, each
# level taking the largest that cuts it into LEVEL_TILES blocks (64 x 64 blocks, then 32 x 32, then
# 16 x 16 with 1024 invocations, more than one colour's cells of the block and its halo: one round a
# half-sweep)
@pytest.mark.parametrize("shape, shapes, split, chosen", [
    ((256, 256), ((16, 16), (32, 32)), 100, ((16, 16), (32, 32), (32, 32))),
    ((300, 280), ((16, 16), (16, 16)), 0, ((16, 16),) * 4),
    ((256, 256), ((64, 32), (32, 32), (16, 32)), 16, ((64, 32), (32, 32), (16, 32))),
    ((200, 150), ((64, 32), (32, 32), (16, 32)), 16, ((32, 32), (16, 32), (16, 32))),
])
def test_v_cycle_mixes_tile_shapes(ctx, rng, monkeypatch, shape, shapes, split, chosen):
    _tile_tables(monkeypatch, *shapes)
    monkeypatch.setattr(smoke_pressure, "LEVEL_TILES", split)
    g = _check_v_cycle(ctx, rng, shape)
    pr = g._pressure
    assert tuple(pr.tile_shapes) == chosen
    if split == 100:
        assert pr.shapes[pr.first_coarse] == (32, 32)
    if split == 0:
        assert -(-shape[0] // 16) * -(-shape[1] // 16) > 256


def test_tile_shapes_out_of_range_are_refused(ctx, monkeypatch):
    _tile_tables(monkeypatch, (12, 16), (12, 16))
    with pytest.raises(ValueError, match="tile shape"):
        SmokeGrid(ctx, (100, 100))


def _tile_tables(monkeypatch, *shapes):
    """The tile shapes (hydro.smoke_pressure.TILE_SHAPES, largest first) for one test, on CPU
    rasterisers and GPUs alike, so the test checks the same on either."""
    for device in ("cpu", "gpu"):
        monkeypatch.setitem(smoke_pressure.TILE_SHAPES, device, shapes)


def _cycle(q, b, lv):
    """The reference V-cycle with the GPU's smoothing (hydro.smoke_pressure.SWEEPS, OMEGA)."""
    return ref.v_cycle(q, b, lv, smoke_pressure.SWEEPS, smoke_pressure.OMEGA)


def _smoothed(q, b, c):
    """One smoothing of the GPU's V-cycle: SWEEPS red-black SOR sweeps with OMEGA."""
    for _ in range(smoke_pressure.SWEEPS):
        q = ref.smooth(ref.smooth(q, b, c, 0, smoke_pressure.OMEGA), b, c, 1, smoke_pressure.OMEGA)
    return q


def _check_tiled_passes(ctx, rng, shape):
    g, solid = _grid(ctx, shape)
    pr = g._pressure
    lv = levels.levels(solid, g._bc)
    assert pr.first_coarse >= 1
    for level in range(pr.first_coarse):
        c, cc = lv[level], lv[level + 1]
        q, b = _fluid_random(rng, c), _fluid_random(rng, c)
        _write(pr.rhs[level], b)
        _write(pr.q[level], q)
        pr.smooth_restrict(level)
        start = q if level == 0 else np.zeros_like(q)     # below the finest level a cycle starts at 0
        expected = _smoothed(start, b, c)
        _close(_read(pr.q_alt[level], c.shape[:2]), expected)
        _close(_read(pr.rhs[level + 1], cc.shape[:2]), ref.restrict(expected, b, c)[0])
        qc = _fluid_random(rng, cc)
        _write(pr.q[level + 1], qc)
        _write(pr.q_alt[level], q)
        pr.prolong_smooth(level, norms=level == 0)
        expected = _smoothed(ref.prolong(q, c, qc, cc), b, c)
        got = _read(pr.q[level], c.shape[:2])
        _close(got, expected)
        if level == 0:                             # the last group folded every group's record, of its own q
            _norms_match(pr.read_norms(pr.norms), got, b, c)
    g.release()
    return g


def test_v_cycle_after_the_operator_changes(ctx, rng):
    """New obstacles and an open side change every level's operator and the coarsest solve's matrix
    (uploaded by Pressure.set_operator): a cycle after them must match the reference with the new
    operators, not run with the old ones."""
    shape = (75, 131)
    g, solid = _grid(ctx, shape)
    pr = g._pressure
    b = _fluid_random(rng, levels.levels(solid, g._bc)[0])
    _write(pr.rhs[0], b)
    _write(pr.q[0], np.zeros(shape))
    pr.v_cycle(norms=True)                         # a cycle with the first operators
    solid = np.zeros(shape, bool)
    solid[30:50, 60:75] = True
    g.obstacles = solid
    g.set_boundary("top", "open")
    lv = levels.levels(solid, g._bc)
    q, b = _fluid_random(rng, lv[0]), _fluid_random(rng, lv[0])
    _write(pr.q[0], q)
    _write(pr.rhs[0], b)
    pr.v_cycle(norms=True)
    expected = _cycle(q, b, lv)
    got = _read(pr.q[0], shape)
    _close(got, expected)
    _norms_match(pr.read_norms(pr.norms), got, b, lv[0])
    g.release()


@pytest.mark.parametrize("shape", [SHAPE, (64, 5), (75, 131), (200, 257)])
def test_v_cycle(ctx, rng, shape):
    """Whole V-cycles (tiled passes and the one-workgroup coarse_cycle.comp, or the latter alone on
    a small grid) from a random non-zero q against hydro.reference.smoke.v_cycle, with the norms after each."""
    _check_v_cycle(ctx, rng, shape)


def _check_v_cycle(ctx, rng, shape):
    if min(shape) > 20:
        g, solid = _grid(ctx, shape)
    else:                                          # too narrow for the obstacles
        g, solid = SmokeGrid(ctx, shape), np.zeros(shape, bool)
        g.set_boundary("top", "open")
    pr = g._pressure
    lv = levels.levels(solid, g._bc)
    q, b = _fluid_random(rng, lv[0]), _fluid_random(rng, lv[0])
    _write(pr.q[0], q)
    _write(pr.rhs[0], b)
    expected = q
    for _ in range(2):                             # the second also checks the norms' group count was reset
        pr.v_cycle(norms=True)
        expected = _cycle(expected, b, lv)
        got = _read(pr.q[0], shape)
        # fp32 against fp64 over a cycle's 60-odd over-relaxed half-sweeps on a closed box, whose q on
        # random right-hand sides grows to ~100: a few 1e-5 of the largest value (a wrong weight,
        # parity or level is off by 1e-2 and more)
        _close(got, expected, rtol=6e-5)
        _norms_match(pr.read_norms(pr.norms), got, b, lv[0])      # the residual of the q the cycle wrote
    assert not np.allclose(expected, q)
    g.release()
    return g


def test_centre_velocity(case):
    """centre_velocity.comp (velocity_texture), the velocity getter (hydro.smoke_ops.centre_velocity)
    and hydro.reference.smoke's centre_velocity against the cell-by-cell mean written out here: cell
    [j, i] lies between vx faces [j, i] and [j, i + 1], and between vy faces [j, i] and [j + 1, i]."""
    g, vx, vy, s, solid, bc = case
    ny, nx = SHAPE
    expected = np.zeros((ny, nx, 2))
    for j in range(ny):
        for i in range(nx):
            expected[j, i] = 0.5 * (vx[j, i] + vx[j, i + 1]), 0.5 * (vy[j, i] + vy[j + 1, i])
    assert np.abs(expected).max() > 0.1
    _close(_read(g.velocity_texture, SHAPE, 2), expected)
    _close(g.velocity, expected)
    np.testing.assert_allclose(ref.centre_velocity(vx, vy), expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ops.centre_velocity(vx, vy), expected, rtol=0, atol=1e-15)


def test_max_speed(case):
    """max_speed.comp (SmokeGrid.max_speed) against hydro.reference.smoke.max_speed, to the bit (a max
    of float32 values), on the random faces and then with the largest on the top side, made open."""
    g, vx, vy, s, solid, bc = case
    assert g.max_speed() == ref.max_speed(vx, vy) > 0.0
    g.set_boundary("top", "open")
    vy = vy.copy()
    vy[-1, np.flatnonzero(~solid[-1])[0]] = -7.5   # the top row of vy faces: the last row past the cells
    g.face_velocity = (vx, vy)
    vx, vy = (f.astype(np.float64) for f in g.face_velocity)
    assert g.max_speed() == ref.max_speed(vx, vy) == 7.5


def test_max_lift(case):
    """max_speed.comp's largest |buoyancy| and fuel (what max_cfl's plan grows the speed by) against
    hydro.reference.smoke.max_lift, on the random scalars, heat and smoke pulling both ways."""
    g, vx, vy, s, solid, bc = case
    _, lift, fuel = g._read_record()
    ref_lift, ref_fuel = ref.max_lift(s, *GRID_OPTIONS["buoyancy"], GRID_OPTIONS["ambient_temperature"])
    assert lift == pytest.approx(ref_lift, rel=1e-6) and ref_lift > 0.0
    assert fuel == ref_fuel > 0.0


def test_whole_projection_matches_exact_reference(case):
    """GPU multigrid to its tolerance against a float64 solve to 1e-10: the projected fields agree."""
    g, vx, vy, s, solid, bc = case
    g.project()
    ex, ey, _ = ref.project(vx, vy, solid, bc)
    gx, gy = g.face_velocity
    _close(gx, ex, 2e-3)
    _close(gy, ey, 2e-3)
    assert g.pressure_residual <= g.params.pressure_tolerance


@pytest.mark.parametrize("options, steps", [
    ({}, 1),                                                              # MacCormack, viscosity
    (dict(advection="semi-lagrangian", fire=True, velocity_dissipation=0.5, density_dissipation=0.7,
          density_diffusion=0.4), 1),
    (dict(viscosity=0.0), 2),           # the second step runs ahead of the first one's check
], ids=["maccormack", "semi-lagrangian-fire", "inviscid"])
def test_step_matches_reference(ctx, rng, options, steps):
    """Whole steps on the GPU against hydro.reference.smoke.step (its passes in the same order, the
    projection solved to 1e-10), on random fields with obstacles and every boundary kind: the
    velocity the projection left agrees to 2e-3 of its largest value (test_whole_projection's
    bound), and so do the scalars it then carried, in rms (1e-4 to 2.5e-4 over ten seeds). A cell
    near an obstacle may differ more (up to 8e-3 seen): bilinear_fluid jumps where a back-traced point
    crosses into a cell with a solid corner, so the GPU solve's slightly different velocity can land
    on the other side. Carried by the velocity before the projection (the order before), the scalars
    differ from these by 7 % rms, 64 % at most."""
    g, solid = _grid(ctx, SHAPE, **options)
    vx, vy, s = _random_fields(g, rng)
    for _ in range(steps):
        g.step(0.2)
        vx, vy, s = ref.step(vx, vy, s, solid, g._bc, 0.2, g.params)
    gx, gy = g.face_velocity
    _close(gx, vx, 2e-3)
    _close(gy, vy, 2e-3)
    error = np.abs(g._scalars()[..., :3] - s) / np.abs(s).max(axis=(0, 1))       # per scalar
    assert np.sqrt((error ** 2).mean()) <= 5e-4 and error.max() <= 2e-2, (np.sqrt((error ** 2).mean()), error.max())
    assert g.pressure_residual <= g.params.pressure_tolerance
    g.release()


@pytest.mark.parametrize("options", [{}, dict(advection="semi-lagrangian")], ids=["maccormack", "semi-lagrangian"])
def test_splats_reach_the_velocity_after_its_advection(ctx, rng, options):
    """Splats between steps (two, one over an obstacle's edge and the open side): their velocity is
    held apart and added once the step has carried the velocity, their amounts go to the scalars at
    once (hydro.reference.smoke.step's `impulse`, splat_impulse); face_velocity shows it meanwhile.
    The second step takes no impulse again. Then a splat followed by setting the velocity: the
    impulse goes with the velocity it was part of."""
    g, solid = _grid(ctx, SHAPE, **options)
    vx, vy, s = _random_fields(g, rng)
    brushes = [((12.0, 8.5, 4.0), (2.5, -1.5)), ((1.5, 13.0, 3.0), (-1.0, 0.75))]
    impulse = [np.zeros_like(vx), np.zeros_like(vy)]
    for (x, y, r), vel in brushes:
        g.splat(x, y, r, velocity=vel, density=0.3, temperature=0.5)
        _, _, s = ref.splat(vx, vy, s, solid, g._bc, x, y, r, (0.0, 0.0), (0.3, 0.5, 0.0))
        impulse = [a + b for a, b in zip(impulse, ref.splat_impulse(solid, g._bc, x, y, r, vel))]
    gx, gy = g.face_velocity
    _close(gx, vx + impulse[0])
    _close(gy, vy + impulse[1])
    _close(g._scalars()[..., :3], s)
    g.step(0.2)
    vx, vy, s = ref.step(vx, vy, s, solid, g._bc, 0.2, g.params, impulse=impulse)
    assert not np.allclose(vx, ref.step(*[f.astype(np.float64) for f in (gx - impulse[0], gy - impulse[1])],
                                        s, solid, g._bc, 0.2, g.params)[0])
    for _ in range(2):
        gx, gy = g.face_velocity
        _close(gx, vx, 2e-3)
        _close(gy, vy, 2e-3)
        g.step(0.2)
        vx, vy, s = ref.step(vx, vy, s, solid, g._bc, 0.2, g.params)
    twin, _ = _grid(ctx, SHAPE, **options)
    twin.density, twin.temperature, twin.fuel = g.density, g.temperature, g.fuel
    g.splat(12.0, 8.5, 4.0, velocity=(3.0, 3.0), density=0.0)
    for grid in (g, twin):
        grid.face_velocity = (vx, vy)
    np.testing.assert_array_equal(g.face_velocity[0], vx.astype(np.float32))
    for grid in (g, twin):
        grid.step(0.2)
    for a, b in zip(g.face_velocity, twin.face_velocity):   # the solves' histories differ: to rounding
        _close(a, b, 1e-5)
    g.release()
    twin.release()


def test_a_splat_before_a_substep_run_again_is_added_once(ctx, rng, monkeypatch):
    """Inviscid, a step's substep runs ahead of the last projection's check (SmokeGrid.step); here
    the check is made to ask for more cycles, so the substep is dropped and run again from the
    velocity corrected: a splat's push made before it is added once, as by the reference."""
    g, solid = _grid(ctx, SHAPE, viscosity=0.0)
    vx, vy, s = _random_fields(g, rng)
    g.step(0.2)
    vx, vy, s = ref.step(vx, vy, s, solid, g._bc, 0.2, g.params)
    g.splat(12.0, 8.5, 4.0, velocity=(2.5, -1.5), density=0.0)         # a push alone
    impulse = ref.splat_impulse(solid, g._bc, 12.0, 8.5, 4.0, (2.5, -1.5))
    runs = []
    real_pre = g._pre_projection
    monkeypatch.setattr(g, "_pre_projection", lambda h, keep=False: (runs.append(keep), real_pre(h, keep))[1])
    monkeypatch.setattr(g._pressure, "short", lambda queued, n: True)
    g.step(0.2)
    assert runs == [True, False]                    # run ahead, then again
    vx, vy, s = ref.step(vx, vy, s, solid, g._bc, 0.2, g.params, impulse=impulse)
    gx, gy = g.face_velocity
    _close(gx, vx, 2e-3)
    _close(gy, vy, 2e-3)
    g.release()


def test_a_step_interrupted_after_its_push_does_not_push_again(ctx, rng, monkeypatch):
    """A step that stops (here: an error raised in the scalars' advection) after it added a splat's
    push to the velocity leaves nothing pending: the next step does not add it a second time."""
    g, solid = _grid(ctx, SHAPE)                    # viscous: the substep is not run ahead
    _random_fields(g, rng)
    g.splat(12.0, 8.5, 4.0, velocity=(2.5, -1.5), density=0.0)
    real = g._advect_scalars

    def fails(h):
        monkeypatch.setattr(g, "_advect_scalars", real)
        raise RuntimeError("interrupted")
    monkeypatch.setattr(g, "_advect_scalars", fails)
    with pytest.raises(RuntimeError, match="interrupted"):
        g.step(0.2)
    assert g._impulse_box is None                   # the push is in the velocity, not pending too
    g.release()


def test_project_and_new_obstacles_take_a_pending_splat(ctx, rng):
    """project() projects the velocity with a splat's push (what face_velocity shows); new obstacles
    keep a push pending, and the next step adds it after its advection to the faces still free."""
    g, solid = _grid(ctx, SHAPE)
    vx, vy, s = _random_fields(g, rng)
    g.splat(12.0, 8.5, 4.0, velocity=(2.5, -1.5), density=0.0)         # a push alone
    ix, iy = ref.splat_impulse(solid, g._bc, 12.0, 8.5, 4.0, (2.5, -1.5))
    g.project()
    ex, ey, _ = ref.project(vx + ix, vy + iy, solid, g._bc)
    gx, gy = g.face_velocity
    _close(gx, ex, 2e-3)
    _close(gy, ey, 2e-3)
    vx, vy = (f.astype(np.float64) for f in (gx, gy))
    g.splat(20.0, 14.0, 3.0, velocity=(-2.0, 1.0), density=0.0)
    impulse = ref.splat_impulse(solid, g._bc, 20.0, 14.0, 3.0, (-2.0, 1.0))
    solid = solid.copy()
    solid[12:15, 19:22] = True                      # under the brush: its faces there take no push
    g.obstacles = solid
    tx, ty = ref.face_types(solid, g._bc)
    vx, vy = np.where(tx == ref.FACE_FIXED, 0.0, vx), np.where(ty == ref.FACE_FIXED, 0.0, vy)
    s[solid] = ref.solid_scalars(g.params.ambient_temperature)
    g.step(0.2)
    vx, vy, s = ref.step(vx, vy, s, solid, g._bc, 0.2, g.params, impulse=impulse)
    gx, gy = g.face_velocity
    _close(gx, vx, 2e-3)
    _close(gy, vy, 2e-3)
    g.release()


@pytest.mark.parametrize("shape", [SHAPE, (75, 131)])
def test_warm_start(ctx, rng, shape):
    """A warm solve's first V-cycle starts from alpha q0 (hydro.reference.smoke.warm_start): the fp64
    sums |L q0|^2 and <b, L q0> that divergence.comp queues beside b = D v, and the whole cycle from
    the scaled q0, against the reference, through coarse_cycle.comp alone (SHAPE) and through the
    tiled passes; and the divergence pass keeps q for it, from the last solve's texture (q_last,
    Pressure.begin) into the new one, clearing only the solid cells (q0 holds values there, which the
    sums must not see)."""
    g, solid = _grid(ctx, shape)
    pr = g._pressure
    lv = levels.levels(solid, g._bc)
    c = lv[0]
    ny, nx = shape
    g.face_velocity = (rng.normal(size=(ny, nx + 1)), rng.normal(size=(ny + 1, nx)))
    vx, vy = (f.astype(np.float64) for f in g.face_velocity)
    b = ref.divergence(vx, vy, solid)
    # q0 with L q0 = (b + 0.3 b2) / 0.6, b2 another random field: alpha near 0.6
    exact = ref.solve(b, lv)[0] + 0.3 * ref.solve(_fluid_random(rng, c) * np.linalg.norm(b) / np.sqrt(b.size), lv)[0]
    q0 = np.where(solid, rng.normal(size=shape), exact / 0.6)
    _write(pr.q_last, q0)
    g._divergence((g._vx.read, g._vy.read), pr.rhs[0], pr.q[0], keep_q=True, warm_sums=True)
    q0 = np.where(solid, 0.0, q0)
    _close(_read(pr.rhs[0], shape), b)
    np.testing.assert_array_equal(_read(pr.q[0], shape), q0.astype(np.float32))
    b = _read(pr.rhs[0], shape).astype(np.float64)
    rec = np.frombuffer(pr.warm.read(smoke_pressure.NORMS_DTYPE.itemsize), smoke_pressure.NORMS_DTYPE)[0]
    lq = ref.apply_operator(q0, c) * (c[..., 3] > 0)
    assert float(rec["r2"]) == pytest.approx(float((lq * lq).sum()), rel=1e-5)
    assert float(rec["b2"]) == pytest.approx(float((b * lq).sum()), rel=1e-5)
    alpha = ref.warm_scale(q0, b, c)
    assert 0.4 < alpha < 0.8                       # neither 1 (q0 as it is) nor 0 (a cold start)
    pr.v_cycle(norms=True, warm=True)
    expected = _cycle(ref.warm_start(q0, b, c), b, lv)
    got = _read(pr.q[0], shape)
    _close(got, expected)
    _norms_match(pr.read_norms(pr.norms), got, b, c)
    # the pass again, from another q0: its last group reset the count, so the record is this one's
    q1 = np.where(solid, 0.0, 0.5 * _fluid_random(rng, c) + exact)
    _write(pr.q_last, q1)
    g._divergence((g._vx.read, g._vy.read), pr.rhs[0], pr.q[0], keep_q=True, warm_sums=True)
    rec = np.frombuffer(pr.warm.read(smoke_pressure.NORMS_DTYPE.itemsize), smoke_pressure.NORMS_DTYPE)[0]
    lq1 = ref.apply_operator(q1, c) * (c[..., 3] > 0)
    assert float(rec["r2"]) == pytest.approx(float((lq1 * lq1).sum()), rel=1e-5)
    _write(pr.q[0], got)
    # the next cycle of the solve starts from q as it is
    pr.v_cycle(norms=True)
    _close(_read(pr.q[0], shape), _cycle(expected, b, lv))
    # divergence.comp: q kept for a warm start (0 in solids), or cleared for a cold one
    _write(pr.q_last, rng.normal(size=shape))
    kept = _read(pr.q_last, shape)
    g._divergence((g._vx.read, g._vy.read), pr.rhs[0], pr.q[0], keep_q=True)
    np.testing.assert_array_equal(_read(pr.q[0], shape), np.where(solid, 0.0, kept))
    g._divergence((g._vx.read, g._vy.read), pr.rhs[0], pr.q[0])
    assert np.all(_read(pr.q[0], shape) == 0)
    g.release()


@pytest.mark.parametrize("ny", [64, 65, 100])
def test_coarse_levels_rediscretise_the_grid(ny):
    """Every level's operator on a box with an open top and nx = 64 is the fluid's geometry
    rediscretised: a face between two rows spanning e_a and e_b fine rows weighs 2^l / ((e_a + e_b) / 2)
    (1 between rows of 2^l), the open side of a top cell spanning e rows 2^l * 2 / (e + 1)
    (hydro.smoke_levels.coarsen); side faces, whose rows span the same, weigh e / 2^l."""
    nx = 64
    bc = ref.Bc(kind=(ref.FREE_SLIP,) * 3 + (ref.OPEN,))
    lv = levels.levels(np.zeros((ny, nx), bool), bc)
    for level, c in enumerate(lv):
        size = 2 ** level
        e = np.minimum(size, ny - size * np.arange(c.shape[0]))        # fine rows each row spans
        assert np.allclose(c[:-1, 1, 1], 2 * size / (e[:-1] + e[1:])), level
        assert np.allclose(c[-1, 1:-1, 2], size * 2 / (e[-1] + 1)), level
        assert np.allclose(c[:-1, 1:-1, 2], 0.0)
        assert np.allclose(c[:, 0, 0], e / size), level


def test_warm_scale_never_starts_worse_than_zero(rng):
    """The reference's alpha minimises |b - alpha L q0|: the start's residual is at most |b|, equal
    when q0 is unrelated to b, 0 when b = L q0 for some multiple of q0, and b = 0 gives q = 0."""
    solid = np.zeros((20, 24), bool)
    c = levels.levels(solid, ref.Bc(kind=(ref.OPEN,) + (ref.FREE_SLIP,) * 3))[0]
    q0, b = rng.normal(size=c.shape[:2]), rng.normal(size=c.shape[:2])
    for start in (q0, -q0, 1e3 * q0):
        assert np.linalg.norm(ref.residual(ref.warm_start(start, b, c), b, c)) <= np.linalg.norm(b)
    exact = ref.warm_start(q0, 2.5 * ref.apply_operator(q0, c), c)
    np.testing.assert_allclose(exact, 2.5 * q0, rtol=1e-12)
    assert np.all(ref.warm_start(q0, np.zeros_like(b), c) == 0)
    q, hist = ref.solve(b, levels.levels(solid, ref.Bc(kind=(ref.OPEN,) + (ref.FREE_SLIP,) * 3)), 1e-8, q0=q0)
    assert hist[-1] <= 1e-8


@pytest.mark.parametrize("shape, kinds, obstacle", [
    ((4, 4), ("free-slip", "free-slip", "free-slip", "open"), False),
    ((3, 4), ("open", "free-slip", "free-slip", "free-slip"), True),
    ((4, 2), ("free-slip",) * 4, False)])
def test_coarse_solve_is_exact(rng, shape, kinds, obstacle):
    """The coarsest level is solved exactly (the reference's coarse_solve, and hydro.smoke_levels'
    coarse_inverse, its matrix on the GPU): with an open side L q = b afterwards; in
    a closed box (L singular) for a b of zero sum over the fluid; solid cells stay 0."""
    solid = np.zeros(shape, bool)
    if obstacle:
        solid[1, 1] = True
    c = levels.levels(solid, ref.Bc(kind=tuple(ref.KINDS[k] for k in kinds)))[0]
    fluid = c[..., 3] > 0
    b = np.where(fluid, rng.normal(size=shape), 0.0)
    if not any(k == "open" for k in kinds):
        b = np.where(fluid, b - b[fluid].mean(), 0.0)
    q = np.where(fluid, rng.normal(size=shape), 0.0)
    out = ref.coarse_solve(q, b, c)
    assert np.abs(ref.residual(out, b, c)).max() < 1e-12 * max(1.0, np.abs(b).max())
    assert np.all(out[~fluid] == 0.0)
    # the matrix SmokeGrid uploads (coarse_cycle.comp) gives the same correction, of the smallest norm
    product = q + (levels.coarse_inverse(c) @ ref.residual(q, b, c).ravel()).reshape(shape)
    np.testing.assert_allclose(product, out, rtol=0, atol=1e-10 * max(1.0, np.abs(out).max()))


@pytest.mark.parametrize("kinds", [(ref.FREE_SLIP,) * 4, (ref.OPEN, ref.NO_SLIP, ref.FREE_SLIP, ref.OPEN)])
def test_product_geometry_matches_the_model(rng, kinds):
    """What SmokeGrid builds on the CPU against the reference's own statement of the model, on random
    obstacles: the face types (hydro.smoke_ops) and the finest level's pressure operator
    (hydro.smoke_levels.coefficients) applied to random q, against L q = D G q."""
    for _ in range(5):
        solid = rng.random((9, 13)) < 0.25
        bc = ops.Bc(kind=kinds)
        for got, expected in zip(ops.face_types(solid, bc), ref.face_types(solid, ref.Bc(kind=kinds))):
            np.testing.assert_array_equal(got, expected)
        q = np.where(solid, 0.0, rng.normal(size=solid.shape))
        c = levels.coefficients(solid, bc)
        np.testing.assert_allclose(ref.apply_operator(q, c), ref.laplacian(q, solid, bc), rtol=0, atol=1e-12)
        assert not np.any((c[..., 3] > 0) & solid)      # a fluid cell walled in all round has none either
