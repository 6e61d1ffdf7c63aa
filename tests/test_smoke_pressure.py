"""The multigrid solve's residual checks (hydro.smoke_pressure.Pressure._solve_to): it runs the cycle
count the last solve needed before its first readback, so the tolerance must hold whatever that
prediction was (checked here in float64 from the GPU's q and b, not by the GPU's own norms), and a
steady scene must pay one readback per projection. Readbacks are counted by wrapping moderngl's
Buffer.read and _native.FencedReadback.newest and .record, the calls every sync of the solver goes through."""
import math

import numpy as np
import pytest

from hydro import _gl, _native, smoke_pressure
from hydro.reference import smoke as ref
from hydro.smoke import SmokeGrid

TOLERANCE = 1e-4
SHAPE = (48, 70)          # one tiled level above coarse_cycle.comp's, so prolong_smooth.comp's norms are used


def _hard_field(ctx, rng, tolerance=TOLERANCE, **options):
    """A random velocity with an obstacle and an open side: 2 V-cycles to 1e-4, 3 to 1e-5, 4 to 1e-6."""
    g = SmokeGrid(ctx, SHAPE, pressure_tolerance=tolerance, **options)
    mask = np.zeros(SHAPE, bool)
    mask[15:25, 20:40] = True
    g.obstacles = mask
    g.set_boundary("right", "open")
    ny, nx = SHAPE
    faces = (rng.normal(size=(ny, nx + 1)), rng.normal(size=(ny + 1, nx)))
    return g, faces


def _float64_residual(g):
    """|b - L q|_2 / |b|_2 over fluid cells, in float64 from the solve's fp32 q and b."""
    pr = g._pressure
    ny, nx = g.shape
    q = np.frombuffer(pr.solution.read(), np.float32).reshape(ny, nx).astype(np.float64)
    b = np.frombuffer(pr.rhs[0].read(), np.float32).reshape(ny, nx).astype(np.float64)
    fluid = ~g._solid
    r = np.where(fluid, b - ref.laplacian(q, g._solid, g._bc), 0.0)
    return np.linalg.norm(r) / np.linalg.norm(np.where(fluid, b, 0.0))


def _project(g, faces, predicted, reads):
    g.face_velocity = faces
    g._pressure.predicted = predicted
    before = reads[0]
    g.project()
    return reads[0] - before


def test_tolerance_holds_whatever_cycle_count_was_predicted(ctx, rng, reads):
    tol = 1e-6
    g, faces = _hard_field(ctx, rng, tol)
    # predicted 1: a check after every cycle, so `needed` is the first cycle at the tolerance
    assert _project(g, faces, 1, reads) == g.pressure_cycles
    assert g.pressure_residual <= tol
    assert _float64_residual(g) <= tol * 1.01
    needed = g.pressure_cycles
    assert needed >= 4, "the field must need several cycles for the cases below to mean anything"
    assert g._pressure.predicted == needed
    # too few predicted: the batch's check finds the residual above the tolerance, and the solve
    # goes on cycle by cycle to the same cycle as before
    for predicted in range(2, needed):
        assert _project(g, faces, predicted, reads) == 1 + needed - predicted
        assert g.pressure_cycles == needed
        assert g.pressure_residual <= tol
        assert _float64_residual(g) <= tol * 1.01
        assert g._pressure.predicted == needed
    # too many: one readback, more cycles than needed, and the prediction comes down by one
    assert _project(g, faces, needed + 2, reads) == 1
    assert g.pressure_cycles == needed + 2
    assert _float64_residual(g) <= tol * 1.01
    assert g._pressure.predicted == needed + 1
    g.release()


def test_prediction_comes_down_only_when_one_cycle_fewer_did(ctx, rng, reads):
    """A batch also reads the residual its second-to-last cycle left (in the same record, no second
    readback). The same field solved again and again needs `needed` cycles: after a batch of
    `needed`, cycle needed - 1 left the residual above the tolerance, so the prediction stays (no
    blind try of one cycle fewer, which would cost a readback and a cycle); after a batch of
    needed + k, cycle needed + k - 1 met it, and the prediction comes down one cycle a solve."""
    tol = 1e-6
    g, faces = _hard_field(ctx, rng, tol)
    pr = g._pressure
    _project(g, faces, 1, reads)
    needed = g.pressure_cycles
    for _ in range(20):
        assert _project(g, faces, pr.predicted, reads) == 1
        assert g.pressure_cycles == needed and pr.predicted == needed
    pr.predicted = needed + 3
    for expected in (needed + 2, needed + 1, needed, needed):
        assert _project(g, faces, pr.predicted, reads) == 1
        assert pr.predicted == expected and g.pressure_residual <= tol
    assert _float64_residual(g) <= tol * 1.01
    g.release()


def test_prediction_comes_down_only_with_a_margin(ctx, rng, reads):
    """One cycle fewer is predicted only where the second-to-last cycle left at most DOWN_MARGIN times
    the tolerance: with the tolerance at 1.5x what `needed` cycles leave, a batch of needed + 1 keeps
    its prediction (without the margin it would come down, and a residual hovering at the tolerance
    would make every other solve short); at 2.5x it comes down."""
    g, faces = _hard_field(ctx, rng, 1e-5)      # well above the fp32 floor: each cycle cuts ~10x
    _project(g, faces, 1, reads)
    needed, left = g.pressure_cycles, g.pressure_residual
    g.release()
    assert smoke_pressure.DOWN_MARGIN == 0.5
    for factor, expected in ((1.5, needed + 1), (2.5, needed)):
        g, _ = _hard_field(ctx, rng, factor * left)
        assert _project(g, faces, needed + 1, reads) == 1
        assert g.pressure_cycles == needed + 1 and g._pressure.predicted == expected, factor
        g.release()


def test_prediction_comes_down_at_the_fp32_floor(ctx, rng, reads, monkeypatch):
    """At the fp32 floor a cycle cuts the residual by less than FLOOR_CUT: where one cycle fewer met
    the tolerance, even by less than the margin, the prediction comes down (else one solve that
    needed a cycle more, by noise, would keep every later one a cycle long). Above the floor the
    margin rule holds. The residual after each cycle is measured first, from q = 0."""
    residuals = []
    read = smoke_pressure.Pressure._read_check
    monkeypatch.setattr(smoke_pressure.Pressure, "_read_check",
                        lambda self, seq: (lambda n: (residuals.append(n["relative"]), n)[1])(read(self, seq)))
    g, faces = _hard_field(ctx, rng, 1e-12)
    _project(g, faces, 1, reads)
    g.release()
    monkeypatch.setattr(smoke_pressure.Pressure, "_read_check", read)
    cuts = [a / b for a, b in zip(residuals, residuals[1:])]
    floor = next(k for k, cut in enumerate(cuts) if cut < smoke_pressure.FLOOR_CUT) + 1   # cycles: k + 1
    steep = next(k for k, cut in enumerate(cuts) if cut > 4 * smoke_pressure.FLOOR_CUT) + 1
    for cycles, expected in ((floor, floor), (steep, steep + 1)):
        tol = residuals[cycles - 1] * 1.01                 # `cycles` meet it, not by the margin
        g, _ = _hard_field(ctx, rng, tol)
        assert _project(g, faces, cycles + 1, reads) == 1
        assert g.pressure_cycles == cycles + 1 and g._pressure.predicted == expected, (cycles, residuals)
        g.release()


def test_solve_stops_at_the_fp32_floor(ctx, rng, reads):
    """A tolerance below what fp32 can reach (1e-10): the solve goes on cycle by cycle until a cycle
    cuts the residual by less than STAGNATION (there, ~6e-8), well before the cycle cap, predicts one
    cycle fewer for the next solve (the last one only confirmed the floor)."""
    g, faces = _hard_field(ctx, rng, 1e-10)
    pr = g._pressure
    assert _project(g, faces, 1, reads) == g.pressure_cycles
    assert 4 <= g.pressure_cycles < 10 and 1e-10 < g.pressure_residual < 1e-6
    assert pr.predicted == g.pressure_cycles - 1
    g.release()


def test_prediction_obeys_the_cycle_cap(ctx, rng, reads):
    g, faces = _hard_field(ctx, rng, 1e-5, pressure_iterations=2)
    assert _project(g, faces, 5, reads) == 1
    assert g.pressure_cycles == 2 and g.pressure_residual > 1e-5      # stopped by the cap, as stated
    g.release()


@pytest.mark.parametrize("ring", [True, False])
def test_steady_scene_reads_back_once_per_projection(ctx, reads, monkeypatch, ring):
    """A stirred, buoyant smoke scene (bench/smoke.py's): after the first step every projection
    checks its residual once unless it needed more cycles than the last one, each step meets the
    tolerance, and the readbacks are far fewer than the cycles (a check per cycle before). The
    checks wait on a fenced copy, or read the buffer where GL cannot map one persistently."""
    if not ring:
        monkeypatch.setattr(_native.FencedReadback, "create", classmethod(lambda cls, ctx, size, slots=3: None))
    n = SHAPE[1]
    g = SmokeGrid(ctx, (n, n), advection="maccormack", vorticity=2.0, buoyancy=(0.2, 2.0),
                  pressure_tolerance=TOLERANCE)
    assert (g._pressure.ring is None) == (not ring)
    per_step, cycles = [], []
    for k in range(12):
        angle = 0.7 * k
        g.splat(n / 2 + 0.25 * n * np.cos(angle), n / 4, n / 12, velocity=(0.2 * n * np.sin(angle), 0.1 * n),
                density=1.0, temperature=1.0)
        predicted = g._pressure.predicted
        before = reads[0]
        g.step(1 / 60)
        assert reads[0] == before            # step() leaves its check queued
        cycles.append(g.pressure_cycles)     # which the first look at the solve waits for
        per_step.append(reads[0] - before)
        assert per_step[-1] == 1 + max(cycles[-1] - predicted, 0), (per_step, cycles)
        assert g.pressure_residual <= TOLERANCE
    assert min(cycles[1:]) >= 2
    assert sum(per_step[1:]) <= len(per_step[1:]) + 2, (per_step, cycles)
    assert sum(per_step[1:]) * 2 <= sum(cycles[1:]), (per_step, cycles)
    g.release()


def _divergence_left(g):
    """|D v|_2 / |b|_2 over fluid cells, in float64 from the GPU's faces (which settles a queued
    check) and the last projection's b."""
    vx, vy = g.face_velocity
    ny, nx = g.shape
    b = np.frombuffer(g._pressure.rhs[0].read(), np.float32).reshape(ny, nx).astype(np.float64)
    fluid = ~g._solid
    d = ref.divergence(vx.astype(np.float64), vy.astype(np.float64), g._solid)
    return np.linalg.norm(d[fluid]) / np.linalg.norm(b[fluid])


@pytest.mark.parametrize("look", ["face_velocity", "splat"])
def test_step_leaves_its_check_queued_and_projects_again_when_it_fails(ctx, rng, reads, look):
    """step() returns without reading its residual back. A step whose batch of cycles falls short of
    the tolerance (the prediction forced to 1 on a field that needs 4) has already subtracted that
    batch's gradient; the first call that looks at the velocity waits for the check, runs the
    missing cycles and subtracts the gradient of what they added to q: the divergence left is
    within the tolerance (one cycle leaves ~1e-1)."""
    tol = 1e-6
    g, faces = _hard_field(ctx, rng, tol)
    g.face_velocity = faces
    g._pressure.predicted = 1
    before = reads[0]
    g.step(1e-3)
    assert reads[0] == before and g._pressure.pending is not None
    if look == "splat":                      # a splat only adds to the velocity: it does not wait
        g.splat(5.0, 5.0, 2.0, velocity=(0.0, 0.0), density=0.0)
        assert reads[0] == before and g._pressure.pending is not None
    assert _divergence_left(g) <= 2 * tol
    assert g.pressure_cycles >= 4 and g.pressure_residual <= tol
    g.release()


def test_a_splat_while_a_check_is_queued_adds_to_the_corrected_velocity(ctx, rng, run_ahead):
    """A splat does not wait for the last step's check: where that check then asks for more cycles,
    the correction (the gradient of what they added to q) is subtracted from the velocity with the
    splat in it. The result is that of waiting before the splat."""
    out = []
    for wait_first in (False, True):
        g, faces = _hard_field(ctx, np.random.default_rng(9), 1e-6)
        g.face_velocity = faces
        g._pressure.predicted = 1
        g.step(1e-3)
        if wait_first:
            g.face_velocity
        g.splat(30.0, 20.0, 6.0, velocity=(2.0, -3.0), density=1.0)
        out.append(np.concatenate([f.ravel() for f in (*g.face_velocity, g.density)]))
        assert g.pressure_cycles > 1                 # cycles beyond the batch of 1: a correction ran
        g.release()
    np.testing.assert_allclose(out[0], out[1], rtol=0, atol=1e-6 * np.abs(out[1]).max())
    assert not np.allclose(out[0][:faces[0].size], faces[0].ravel())


# where a step is interrupted, and how many times in a row before one gets through: the wait for the
# last step's check (the poll where it spends its waiting), the velocity's advection and, running ahead,
# the divergence pass of its own projection and the scalars' advection after it
INTERRUPTS = {"wait": (smoke_pressure.Pressure, "_read_check"), "advection": (SmokeGrid, "_advect_velocity"),
              "projection": (SmokeGrid, "_divergence"), "scalars": (SmokeGrid, "_advect_scalars")}


@pytest.mark.parametrize("where, times", [("wait", 1), ("wait", 3), ("advection", 1), ("projection", 2),
                                          ("scalars", 1)])
def test_an_interrupted_step_is_undone(ctx, rng, monkeypatch, run_ahead, where, times):
    """A KeyboardInterrupt in a step that runs ahead of the last one's check: the check stays queued
    (readable however often it happens: the ring keeps its record), the velocity, the scalars and
    the solve are as the step found them, the solve's figures are of that solve, and the next step
    gives what an uninterrupted run gives, its ledger included (nothing booked twice)."""
    if where in ("projection", "scalars") and not run_ahead:
        where = "advection"      # without running ahead the projection and the scalars come after the wait
    out, ledgers = [], []
    for interrupt in (True, False):
        # density diffusion: its iterates rotate the scalars' textures, which an undone substep puts back
        g, faces = _hard_field(ctx, np.random.default_rng(11), 1e-4, buoyancy=(0.3, 1.0), density_diffusion=20.0)
        g.face_velocity = faces
        g.density = np.random.default_rng(12).uniform(0.0, 1.0, g.shape)
        g.step(1e-3)
        if interrupt:
            target, name = INTERRUPTS[where]
            original, calls = getattr(target, name), []

            def interrupted(self, *args, **kwargs):
                calls.append(1)
                raise KeyboardInterrupt

            monkeypatch.setattr(target, name, interrupted)
            for _ in range(times):
                with pytest.raises(KeyboardInterrupt):
                    g.step(1e-3)
                assert g._pressure.pending is not None and g._pressure.aside is None and g.iteration == 1
            monkeypatch.setattr(target, name, original)
            assert len(calls) == times
        # the solve's figures are of the solve whose check is queued (reading them waits for it)
        assert g.pressure_residual == pytest.approx(_float64_residual(g), rel=1e-3) and g.pressure_residual <= 1e-4
        g.step(1e-3)
        out.append(np.concatenate([f.ravel() for f in (*g.face_velocity, g.density)]))
        ledgers.append(g.ledger())
        assert g.iteration == 2 and g.pressure_residual <= 1e-4
        g.release()
    np.testing.assert_array_equal(out[0].view(np.uint32), out[1].view(np.uint32))    # to the bit
    assert ledgers[0] == ledgers[1]


@pytest.mark.parametrize("waiting", ["step", "reading"])
def test_an_interrupt_in_the_cycles_a_check_asked_for_leaves_a_consistent_grid(ctx, rng, monkeypatch, run_ahead,
                                                                               waiting):
    """A step runs ahead of a check that asks for more cycles (a batch of 1 on a field that needs 4),
    and a KeyboardInterrupt lands after the first of them: nothing stays pending, the substep is
    undone (no time passed, the scalars as they were), and the velocity is the one it found less the
    gradient of what that cycle added to q, so its divergence is the residual of the solve's q
    (D G = L); the next step runs and meets the tolerance. The same where the wait is a reading's
    (the velocity)."""
    tol = 1e-6
    g, faces = _hard_field(ctx, rng, tol, buoyancy=(0.3, 1.0))
    g.face_velocity = faces
    g.density = np.random.default_rng(12).uniform(0.0, 1.0, g.shape)
    g._pressure.predicted = 1
    g.step(1e-3)
    density = g._scalars().copy()
    check, calls = smoke_pressure.Pressure._check, []

    def interrupted(self):
        calls.append(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(smoke_pressure.Pressure, "_check", interrupted)
    with pytest.raises(KeyboardInterrupt):
        if waiting == "step":
            g.step(1e-3)
        else:
            g.face_velocity
    monkeypatch.setattr(smoke_pressure.Pressure, "_check", check)
    pr = g._pressure
    assert calls == [1] and pr.pending is None and pr.aside is None and g.iteration == 1
    np.testing.assert_array_equal(g._scalars(), density)
    left = _divergence_left(g)
    assert left == pytest.approx(_float64_residual(g), rel=1e-3) and tol < left < 1e-2
    g.step(1e-3)
    assert g.iteration == 2 and g.pressure_residual <= tol
    g.release()


@pytest.mark.parametrize("options, substeps", [
    (dict(buoyancy=(0.3, 1.0)), 1),
    (dict(advection="semi-lagrangian", vorticity=2.0), 1),
    (dict(fire=True, buoyancy=(0.3, 1.0)), 1),
    (dict(buoyancy=(0.3, 1.0), vorticity=1.0), 3),
    (dict(buoyancy=(0.3, 1.0), viscosity=0.05), 1),      # waits first: the viscosity solve uses _spare
], ids=["maccormack", "semi-lagrangian", "fire", "substeps", "viscosity"])
def test_next_step_settles_the_last_ones_check(ctx, rng, reads, options, substeps, run_ahead):
    """Two steps in a row whose batches fall short: the second runs its forces and advection ahead of
    the first's check, finds it short, finishes that solve, corrects the velocity it kept and runs
    them again from it (with viscosity it waits first), so it ends with the velocity and scalars of
    two steps with a wait between."""
    tol = 1e-6
    out = []
    for settle_between in (False, True):
        g, faces = _hard_field(ctx, np.random.default_rng(5), tol, **options)
        g.face_velocity = faces
        g.density = np.random.default_rng(6).uniform(0.0, 1.0, g.shape)
        if g.params.fire:
            g.fuel = np.random.default_rng(7).uniform(0.0, 1.0, g.shape)
        g._pressure.predicted = 1
        g.step(1e-3)
        if settle_between:
            g.face_velocity
        else:
            before = reads[0]
        g._pressure.predicted = 1
        g.step(1e-3 * substeps, substeps=substeps)
        if not settle_between:
            assert reads[0] - before >= 4     # the first step's check and one per cycle it still needed
        out.append(np.concatenate([f.ravel() for f in (*g.face_velocity, g.density, g.temperature, g.fuel)]))
        assert g.pressure_residual <= tol
        g.release()
    np.testing.assert_allclose(out[0], out[1], rtol=0, atol=1e-6 * np.abs(out[1]).max())


@pytest.fixture(params=[True, False], ids=["ahead", "kept"])
def run_ahead(request, monkeypatch):
    """Both ways a step runs ahead of the last check: its forces and advection only, or its whole
    projection too (forced here; SmokeGrid.step chooses by smoke_pressure.RUN_AHEAD)."""
    monkeypatch.setattr(smoke_pressure, "RUN_AHEAD", math.inf if request.param else -1.0)
    return request.param


def test_step_queues_work_before_waiting(ctx, monkeypatch, run_ahead):
    """The wait for the last step's check comes after this step's forces and velocity advection are
    queued, or its whole projection and the scalars' advection (run ahead), so the GPU has work behind
    the record it waits for (with viscosity, whose solve uses the texture that keeps the velocity, it
    waits first). The scalars always move after the projection, with the velocity it left."""
    events = []
    for name in ("_forces", "_advect_velocity", "_divergence", "_advect_scalars"):
        method = getattr(SmokeGrid, name)
        monkeypatch.setattr(SmokeGrid, name, lambda self, *a, _m=method, _n=name, **k: (events.append(_n), _m(self, *a, **k))[1])
    read = smoke_pressure.Pressure._read_check
    monkeypatch.setattr(smoke_pressure.Pressure, "_read_check", lambda self, seq: (events.append("wait"), read(self, seq))[1])
    passes = ["_forces", "_advect_velocity", "_divergence", "_advect_scalars"]
    inviscid = passes + ["wait"] if run_ahead else passes[:2] + ["wait"] + passes[2:]
    for viscosity, expected in ((0.0, inviscid), (0.1, ["wait"] + passes)):
        g = SmokeGrid(ctx, (40, 40), buoyancy=(0.0, 1.0), viscosity=viscosity, pressure_tolerance=TOLERANCE)
        g.splat(20, 10, 5.0, velocity=(1.0, 3.0), density=1.0, temperature=1.0)
        g._pressure.predicted = 8                  # more than enough: the check will pass
        g.step(1 / 60)
        events.clear()
        g.splat(20, 10, 5.0, velocity=(1.0, 3.0), density=1.0, temperature=1.0)
        g.step(1 / 60)
        assert events == expected, (viscosity, events)
        assert g.pressure_residual <= TOLERANCE
        g.release()


def test_steps_bring_the_prediction_down_from_the_checks_they_ran_ahead_of(ctx, reads, run_ahead):
    """Each step reads the last one's check once its own projection is queued (Pressure.finish_aside):
    one readback a step, and where one cycle fewer met half the tolerance the prediction comes down
    (the next step's batch is shorter) without any other wait."""
    g = SmokeGrid(ctx, (40, 48), buoyancy=(0.0, 1.0), pressure_tolerance=TOLERANCE)
    g._pressure.predicted = 5
    batches = []
    before = reads[0]
    for _ in range(6):
        g.splat(24, 10, 5.0, velocity=(2.0, 4.0), density=1.0, temperature=1.0)
        g.step(1 / 60)
        batches.append(g._pressure.pending.batch)
    assert reads[0] - before == 5                  # the first step had no check to read
    assert batches[0] == 5 and batches[-1] < batches[0] and batches == sorted(batches, reverse=True)
    assert g._pressure.run_ahead() == run_ahead
    assert g.pressure_residual <= TOLERANCE
    g.release()


def test_reading_the_divergence_between_steps_changes_nothing(ctx):
    """divergence() runs the divergence pass into the textures the next projection writes: the last
    solve's q, which the next warm start starts from, stays, so the steps after it give the same
    velocity to the bit as steps with no reading between."""
    out = []
    for read in (False, True):
        g = SmokeGrid(ctx, (40, 48), buoyancy=(0.2, 2.0), vorticity=2.0, pressure_tolerance=1e-3)
        for k in range(5):
            g.splat(24 + 6 * np.cos(k), 10, 5.0, velocity=(4.0 * np.sin(k), 4.0), density=1.0, temperature=1.0)
            g.step(1 / 60)
            if read:
                assert 0.0 < g.divergence("rms") < g.divergence("max")
        out.append(np.concatenate([f.ravel() for f in g.face_velocity]))
        g.release()
    np.testing.assert_array_equal(out[0].view(np.uint32), out[1].view(np.uint32))    # to the bit


def test_a_step_runs_ahead_only_of_a_solve_that_met_its_tolerance_with_a_margin(ctx):
    """Pressure.run_ahead: a step queues its projection before the last check only where the last
    concluded solve left at most RUN_AHEAD times its tolerance (a failed check then costs the step's
    projection too); a fresh solver has concluded none."""
    g = SmokeGrid(ctx, (40, 48), pressure_tolerance=1e-3)
    pr = g._pressure
    assert not pr.run_ahead()
    queued = smoke_pressure.Queued(1e-3, 10, 2, 0)
    for left, ahead in ((0.4e-3, True), (0.5e-3, True), (0.6e-3, False), (0.99e-3, False)):
        pr._conclude(queued, {"b": 1.0, "relative": left, "before_last": 1e-2}, run=False)
        assert pr.run_ahead() == ahead, left
    g.release()


def _source(g, k, stir):
    """bench/smoke.py's stirring splat (an impulse moving 0.7 rad round a circle each step), or a
    steady buoyant source: a fixed splat whose amounts scale with the step (a chimney)."""
    n = g.nx
    if stir:
        angle = 0.7 * k
        g.splat(n / 2 + 0.25 * n * np.cos(angle), n / 4, n / 12, velocity=(0.2 * n * np.sin(angle), 0.1 * n),
                density=1.0, temperature=1.0)
    else:
        g.splat(n / 2, n / 4, n / 12, velocity=(0.0, 0.1 * n), density=1.0, temperature=1.0)


def _cold_and_warm(ctx, stir, steps=10, n=SHAPE[1], tolerance=TOLERANCE):
    cycles = []
    for warm in (False, True):
        g = SmokeGrid(ctx, (n, n), advection="maccormack", vorticity=2.0, buoyancy=(0.2, 2.0),
                      pressure_tolerance=tolerance, pressure_warm_start=warm)
        cycles.append([])
        for k in range(steps):
            _source(g, k, stir)
            g.step(1 / 60)
            cycles[-1].append(g.pressure_cycles)
            assert g.pressure_residual <= tolerance
            assert _float64_residual(g) <= tolerance * 1.01
        g.release()
    return cycles


def test_warm_start_needs_fewer_cycles_in_a_steady_scene(ctx):
    """A steady buoyant source: after the first steps each warm-started solve reaches the tolerance
    (checked in float64 from the GPU's q) in fewer V-cycles than from q = 0."""
    cold, warm = _cold_and_warm(ctx, stir=False)
    assert warm[0] == cold[0], (cold, warm)                 # the first solve has nothing to start from
    assert all(w < c for w, c in zip(warm[3:], cold[3:])), (cold, warm)


def test_warm_start_is_no_worse_when_the_pressure_moves(ctx):
    """bench/smoke.py's stirring impulse lands elsewhere each step, so the last q is a poor guess
    (q0 itself would start above |b|): the scale alpha keeps the warm start's cycles at the cold ones."""
    for n, tolerance in ((SHAPE[1], TOLERANCE), (128, 1e-3)):
        cold, warm = _cold_and_warm(ctx, stir=True, n=n, tolerance=tolerance)
        assert sum(warm) <= sum(cold), (n, cold, warm)


def test_warm_start_converges_after_dt_obstacle_and_boundary_changes(ctx):
    """The kept q meets a new dt (q = p dt / (rho h) scales with it), new obstacles (over cells that had
    pressure), an open side, and a velocity set from outside (a cold start): every solve still ends
    at the tolerance in float64, never more than a cycle above the same steps from q = 0, and fewer
    in all."""
    n = SHAPE[1]
    cycles = []
    for warm in (False, True):
        g = SmokeGrid(ctx, (n, n), buoyancy=(0.2, 2.0), pressure_tolerance=TOLERANCE, pressure_warm_start=warm)
        changes = [None, None, None, ("dt", 1 / 15), ("dt", 1 / 240), ("obstacles", _block(n, 20, 30)),
                   ("obstacles", _block(n, 24, 44)), ("open", "top"), ("velocity", np.ones((n, n, 2)))]
        dt, cycles = 1 / 60, cycles + [[]]
        for k, change in enumerate(changes):
            if change and change[0] == "dt":
                dt = change[1]
            elif change and change[0] == "open":
                g.set_boundary(change[1], "open")
            elif change:
                setattr(g, *change)
            _source(g, k, stir=False)
            g.step(dt)
            assert g.pressure_residual <= TOLERANCE
            assert _float64_residual(g) <= TOLERANCE * 1.01, (warm, k)
            cycles[-1].append(g.pressure_cycles)
        g.release()
    cold, warm = cycles
    assert all(w <= c + 1 for w, c in zip(warm, cold)) and sum(warm) < sum(cold), (cold, warm)


def _block(n, y0, y1):
    mask = np.zeros((n, n), bool)
    mask[y0:y1, n // 3:n // 2] = True
    return mask


def test_step_submits_its_passes_as_it_goes(ctx, monkeypatch):
    """glFlush resolves through moderngl's loader, and a multigrid step submits at its start (the
    caller's splats), after the forces, after advection, before each V-cycle and at its end, so after
    the readback of a tolerance solve the GPU does not wait for the whole next step to be queued."""
    assert _native.gl_functions(ctx, {"glFlush": (None, [])}) is not None
    calls = []
    g = SmokeGrid(ctx, (40, 48), buoyancy=(0.0, 1.0), pressure="multigrid", pressure_tolerance=None,
                  pressure_iterations=2)
    monkeypatch.setitem(_native._loaded.setdefault(ctx, {}), "glFlush", lambda: calls.append(1))
    g.step(0.02, substeps=2)
    assert len(calls) == 1 + 2 * (1 + 1 + 2 + 1)
    monkeypatch.setattr(_native, "FLUSH", False)
    g.step(0.02)
    assert len(calls) == 11
    g.release()


def test_grids_sharing_a_context_keep_their_own_passes(ctx):
    """Programs are compiled once per context and shared by every grid on it, and _gl.set_uniforms
    skips a value the program already holds: two grids of different sizes stepped in turn (every pass
    gets the other grid's sizes in between) end exactly where each ends stepped alone."""
    def make(shape):
        g = SmokeGrid(ctx, shape, buoyancy=(0.2, 2.0), pressure_tolerance=None, pressure_iterations=3)
        g.splat(shape[1] / 2, shape[0] / 4, 5.0, velocity=(3.0, 5.0), density=1.0, temperature=1.0)
        return g

    shapes = [(48, 70), (40, 56)]
    together = [make(shape) for shape in shapes]
    for _ in range(3):
        for g in together:
            g.step(1 / 60)
    for g, shape in zip(together, shapes):
        alone = make(shape)
        for _ in range(3):
            alone.step(1 / 60)
        for x, y in ((alone.density, g.density), (alone.velocity, g.velocity)):
            np.testing.assert_array_equal(x.view(np.uint32), y.view(np.uint32))     # to the bit
        alone.release()
    for g in together:
        g.release()


def test_a_ring_the_driver_will_not_map_falls_back_to_reads(ctx, monkeypatch, reads, run_ahead):
    """Where the driver refuses to map the readback ring, FencedReadback.create gives None instead of
    failing, and a smoke grid still builds and checks its residual with buffer reads; its steps never
    queue a projection ahead of a check (only the newest check could be read), however RUN_AHEAD is
    set, and still wait only once their forces and advection are queued."""
    def refuse(self, gl, size, slots):
        raise _gl.HydroGLError("could not map a readback buffer persistently")

    monkeypatch.setattr(_native.FencedReadback, "__init__", refuse)
    assert _native.FencedReadback.create(ctx, 16) is None
    g = SmokeGrid(ctx, (40, 48), buoyancy=(0.0, 1.0), pressure_tolerance=TOLERANCE)
    assert g._pressure.ring is None
    g.splat(24, 10, 5.0, velocity=(2.0, 4.0), density=1.0, temperature=1.0)
    before = reads[0]
    g.step(1 / 60)
    assert g.pressure_residual <= TOLERANCE and reads[0] > before
    for _ in range(3):
        g.splat(24, 10, 5.0, velocity=(2.0, 4.0), density=1.0, temperature=1.0)
        g.step(1 / 60)
        assert not g._pressure.run_ahead() and g._pressure.aside is None
    assert g.pressure_residual <= TOLERANCE and _float64_residual(g) <= TOLERANCE * 1.01
    g.release()
