"""SmokeGrid's public surface: shapes and units of the getters, setters, textures, lifetime, and bad
input rejected with a ValueError/TypeError naming the argument, before any GPU work, state unchanged."""
import math

import numpy as np
import pytest

from hydro.smoke import SmokeGrid

SHAPE = (12, 18)


@pytest.fixture
def grid(ctx, rng):
    g = SmokeGrid(ctx, SHAPE, buoyancy=(0.1, 1.0))
    g.splat(9, 6, 4, velocity=(1.0, 2.0), density=0.8, temperature=1.5)
    g.step(0.05)
    yield g
    g.release()


def _snapshot(g):
    return [np.array(x) for x in (*g.face_velocity, g.density, g.temperature, g.fuel, g.obstacles)] + [g.boundaries,
                                                                                                   g.ledger()]


def _same(a, b):
    for x, y in zip(a, b):
        if isinstance(x, dict):
            assert x == y
        elif x.dtype == np.float32:             # the same bits, the sign of zero included
            np.testing.assert_array_equal(x.view(np.uint32), y.view(np.uint32))
        else:
            np.testing.assert_array_equal(x, y)


def test_getters_setters_and_textures(grid, rng):
    assert grid.velocity.shape == SHAPE + (2,)
    assert grid.density.shape == SHAPE and grid.temperature.shape == SHAPE
    d = rng.uniform(0, 1, SHAPE)
    grid.density = d
    np.testing.assert_allclose(grid.density, d, rtol=1e-6)
    v = rng.normal(size=SHAPE + (2,))
    grid.velocity = v
    got = grid.velocity
    # interior cells: mean of faces that were means of neighbouring cells
    expect_x = 0.25 * (v[:, :-2, 0] + 2 * v[:, 1:-1, 0] + v[:, 2:, 0])
    np.testing.assert_allclose(got[:, 1:-1, 0], expect_x, rtol=1e-5, atol=1e-6)
    assert grid.density_texture.size == (SHAPE[1], SHAPE[0]) and grid.density_texture.components == 4
    tex = grid.velocity_texture
    assert tex.size == (SHAPE[1], SHAPE[0]) and tex.components == 2
    np.testing.assert_allclose(np.frombuffer(tex.read(), np.float32).reshape(SHAPE + (2,)), got, atol=1e-6)
    grid.step(0.05)
    assert grid.sim_time == pytest.approx(0.1) and grid.iteration == 2
    assert 0 <= grid.pressure_residual <= 1e-4 and math.isfinite(grid.divergence("rms"))


def test_context_manager_and_release(ctx):
    with SmokeGrid(ctx, SHAPE) as g:
        g.step(0.1)
    g.release()                                       # idempotent
    for use in (lambda: g.step(0.1), lambda: g.pressure_cycles, lambda: g.pressure_residual,
                lambda: g.diffusion_error_bound, lambda: g.kinetic_energy()):
        with pytest.raises(RuntimeError):
            use()


@pytest.mark.parametrize("options", [{}, {"viscosity": 0.1, "vorticity": 2.0, "buoyancy": (0.2, 1.0)},
                                     {"fire": True}, {"pressure": "jacobi"}, {"advection": "semi-lagrangian"},
                                     {"density_diffusion": 0.5}],
                         ids=["default", "viscous", "fire", "jacobi", "semi-lagrangian", "density-diffusion"])
def test_release_frees_every_gpu_object(ctx, options, gl_objects):
    g = SmokeGrid(ctx, (40, 48), **options)
    g.splat(10, 10, 4, velocity=(1.0, 2.0), density=1.0)
    g.obstacles = np.pad(np.ones((4, 4), bool), ((18, 18), (22, 22)))
    g.set_boundary("top", "open")
    for _ in range(3):
        g.step(0.05)
    g.velocity_texture, g.density_texture, g.divergence(), g.velocity
    assert gl_objects()
    g.release()
    assert gl_objects() == []


def test_splat_takes_any_finite_temperature(ctx):
    with SmokeGrid(ctx, (8, 8), ambient_temperature=10.0) as g:
        g.splat(4, 4, 2, density=0.0, temperature=-3.0)             # cold air is a valid splat
        assert g.temperature.min() == pytest.approx(7.0)


@pytest.mark.parametrize("owned", [False, True])
def test_failed_construction_releases_what_it_made(ctx, monkeypatch, owned):
    """A failure after textures exist (here: the pressure solver) releases every texture made so far,
    and the private context when the grid made it."""
    import hydro.smoke as smoke_module
    from hydro import _gl
    made, contexts = [], []
    real_texture, real_context = smoke_module.float_texture, _gl.create_context

    def texture(*args, **kwargs):
        made.append(real_texture(*args, **kwargs))
        return made[-1]

    def context(*args, **kwargs):
        contexts.append(real_context(*args, **kwargs))
        return contexts[-1]

    def broken(*args, **kwargs):
        raise MemoryError("out of GPU memory (simulated)")

    monkeypatch.setattr(smoke_module, "float_texture", texture)
    monkeypatch.setattr(smoke_module, "Pressure", broken)
    monkeypatch.setattr(_gl, "create_context", context)
    with pytest.raises(MemoryError):
        SmokeGrid(None if owned else ctx, (8, 8))
    assert len(made) == 15                            # every texture of the grid, before the solver
    for tex in made:
        assert type(tex.mglo).__name__ == "InvalidObject", "a texture leaked"
    if owned:
        assert len(contexts) == 1 and type(contexts[0].mglo).__name__ == "InvalidObject", "the context leaked"


def test_private_context():
    with SmokeGrid(None, (8, 8)) as g:
        g.splat(4, 4, 2, velocity=(1, 0))
        g.step(0.1)
        assert np.isfinite(g.velocity).all()


@pytest.mark.parametrize("kwargs, exc, name", [
    (dict(shape=(3, 10)), ValueError, "shape[0]"),
    (dict(shape=(10,)), TypeError, "shape"),
    (dict(shape=(10.5, 10)), TypeError, "shape[0]"),
    (dict(viscosity=-0.1), ValueError, "viscosity"),
    (dict(advection="upwind"), ValueError, "advection"),
    (dict(vorticity=float("nan")), ValueError, "vorticity"),
    (dict(buoyancy=(1.0,)), TypeError, "buoyancy"),
    (dict(cell_size=0.0), ValueError, "cell_size"),
    (dict(pressure="sor"), ValueError, "pressure"),
    (dict(pressure_iterations=0), ValueError, "pressure_iterations"),
    (dict(pressure_tolerance=2.0), ValueError, "pressure_tolerance"),
    (dict(fire="yes"), TypeError, "fire"),
    (dict(pressure_warm_start=1), TypeError, "pressure_warm_start"),
    (dict(ambient_temperature=1e39), ValueError, "ambient_temperature"),
    (dict(buoyancy=(0.0, 1e39)), ValueError, "buoyancy[1]"),
    (dict(buoyancy="ab"), TypeError, "buoyancy"),
    (dict(diffusion_iterations=0), ValueError, "diffusion_iterations"),
    (dict(conserve=1), TypeError, "conserve"),
    (dict(density_diffusion=-1.0), ValueError, "density_diffusion"),
    (dict(fixed_step=0.0), ValueError, "fixed_step"),
    (dict(colour=1), TypeError, "colour"),
])
def test_constructor_rejects(ctx, kwargs, exc, name):
    args = dict(shape=SHAPE)
    args.update(kwargs)
    shape = args.pop("shape")
    with pytest.raises(exc, match=name.replace("[", r"\[").replace("]", r"\]")):
        SmokeGrid(ctx, shape, **args)


BAD_CALLS = [
    (lambda g: g.splat(float("nan"), 3, 2), ValueError, "x"),
    (lambda g: g.splat(3, 3, 2, density=float("nan")), ValueError, "density"),
    (lambda g: g.splat(3, 3, 0), ValueError, "radius"),
    (lambda g: g.splat(3, 3, 2, velocity=(1.0, float("inf"))), ValueError, "velocity"),
    (lambda g: g.splat(3, 3, 2, velocity=1.0), TypeError, "velocity"),
    (lambda g: g.splat(3, 3, 2, density=-2.0), ValueError, "density"),
    (lambda g: g.splat(3, 3, 2, fuel=-1.0), ValueError, "fuel"),
    (lambda g: g.splat(3, 3, 2, density=1e39), ValueError, "density"),
    (lambda g: g.splat(3, 3, 2, temperature=-1e39), ValueError, "temperature"),
    (lambda g: g.splat(3, 3, 2, velocity=(1e39, 0.0)), ValueError, r"velocity\[0\]"),
    (lambda g: g.splat(1e39, 3, 2), ValueError, "x"),
    (lambda g: g.set_boundary("top", "no-slip", velocity=(1e39, 0.0)), ValueError, "velocity"),
    (lambda g: g.set_boundary("top", "no-slip", velocity="ab"), TypeError, "velocity"),
    (lambda g: setattr(g, "density", np.ones((SHAPE[1], SHAPE[0]))), ValueError, "density"),
    (lambda g: setattr(g, "density", -np.ones(SHAPE)), ValueError, "density"),
    (lambda g: setattr(g, "temperature", np.full(SHAPE, np.nan)), ValueError, "temperature"),
    (lambda g: setattr(g, "velocity", np.ones(SHAPE)), ValueError, "velocity"),
    (lambda g: setattr(g, "face_velocity", (np.ones(SHAPE), np.ones(SHAPE))), ValueError, "face_velocity"),
    (lambda g: setattr(g, "obstacles", np.ones(SHAPE)), TypeError, "obstacles"),
    (lambda g: setattr(g, "obstacles", np.zeros((5, 5), bool)), ValueError, "obstacles"),
    (lambda g: setattr(g, "obstacles", np.ones(SHAPE, bool)), ValueError, "obstacles"),
    (lambda g: g.set_boundary("north", "open"), ValueError, "side"),
    (lambda g: g.set_boundary("top", "wall"), ValueError, "kind"),
    (lambda g: g.set_boundary("top", "no-slip", velocity=(1.0, 0.5)), ValueError, "velocity"),
    (lambda g: g.set_boundary("left", "open", velocity=(0.0, 1.0)), ValueError, "velocity"),
    (lambda g: g.step(-0.1), ValueError, "dt"),
    (lambda g: g.step(float("nan")), ValueError, "dt"),
    (lambda g: g.step(1e39), ValueError, "dt"),
    (lambda g: g.step(0.1, substeps=0), ValueError, "substeps"),
    (lambda g: g.divergence("l1"), ValueError, "norm"),
]


@pytest.mark.parametrize("call, exc, name", BAD_CALLS)
def test_bad_input_rejected_and_state_unchanged(grid, call, exc, name):
    before = _snapshot(grid)
    t, it = grid.sim_time, grid.iteration
    with pytest.raises(exc, match=name):
        call(grid)
    _same(_snapshot(grid), before)
    assert (grid.sim_time, grid.iteration) == (t, it)


@pytest.mark.parametrize("call, exc, name", BAD_CALLS)
def test_bad_input_does_no_gpu_work(grid, gpu_work, call, exc, name):
    """A bad call raises before any GPU work: with the step's residual check still queued, it neither
    waits for that check nor runs the cycles it might ask for (obstacles, set_boundary and divergence
    finished the pending solve before they looked at their arguments), nor dispatches, reads or
    writes anything."""
    pr = grid._pressure
    assert pr.pending is not None                  # the fixture's step left its check queued
    pending, cycles, checks = pr.pending, pr.cycles, pr.checks
    with pytest.raises(exc, match=name):
        call(grid)
    assert gpu_work[0] == 0
    assert (pr.pending, pr.cycles, pr.checks) == (pending, cycles, checks)


def test_attributes_that_cannot_be_set_are_refused_with_what_is_meant(grid):
    """A misspelt, fixed or read-only attribute is refused with what is meant; nothing is set."""
    before = _snapshot(grid)
    for name, message in [
        ("vorticty", "SmokeGrid has no attribute 'vorticty' (did you mean 'vorticity'?)"),
        ("vorticity", "SmokeGrid.vorticity cannot be set: it is fixed when the grid is made "
                      "(grid.params.vorticity is 0.0)"),
        ("densty", "(did you mean 'density'?)"),
        ("pressure_residual", "SmokeGrid.pressure_residual is read-only"),
        ("splat", "SmokeGrid.splat is a method"),
    ]:
        with pytest.raises(AttributeError) as info:
            setattr(grid, name, 1.0)
        assert message in str(info.value) and "obstacles, sim_time, temperature, velocity" in str(info.value)
        assert name not in vars(grid)
    _same(_snapshot(grid), before)
    grid.sim_time = 3.0
    grid.step(0.05)
    assert grid.sim_time == pytest.approx(3.05) and grid.iteration == 2
