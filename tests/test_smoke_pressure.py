"""The multigrid solve's residual checks (hydro.smoke_pressure.Pressure._solve_to): it runs the cycle
count the last solve needed before its first readback, so the tolerance must hold whatever that
prediction was (checked here in float64 from the GPU's q and b, not by the GPU's own norms), and a
steady scene must pay one readback per projection. Readbacks are counted by wrapping moderngl's
Buffer.read, the call every sync of the solver goes through."""
import moderngl
import numpy as np
import pytest

from hydro.reference import smoke as ref
from hydro.smoke import SmokeGrid

TOLERANCE = 1e-4
SHAPE = (48, 70)          # one tiled level above coarse_cycle.comp's, so prolong_smooth.comp's norms are used


@pytest.fixture
def reads(monkeypatch):
    """A one-item list counting Buffer.read calls from now on."""
    count = [0]
    read = moderngl.Buffer.read

    def counted(self, *args, **kwargs):
        count[0] += 1
        return read(self, *args, **kwargs)

    monkeypatch.setattr(moderngl.Buffer, "read", counted)
    return count


def _hard_field(ctx, rng, tolerance=TOLERANCE, **options):
    """A random velocity with an obstacle and an open side: 3 V-cycles to 1e-4, 5 to 1e-5."""
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
    c = ref.levels(g._solid, g._bc)[0]
    return np.linalg.norm(ref.residual(q, b, c)) / np.linalg.norm(np.where(c[..., 3] > 0, b, 0.0))


def _project(g, faces, predicted, reads):
    g.face_velocity = faces
    g._pressure.predicted = predicted
    before = reads[0]
    g.project()
    return reads[0] - before


def test_tolerance_holds_whatever_cycle_count_was_predicted(ctx, rng, reads):
    tol = 1e-5
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


def test_prediction_obeys_the_cycle_cap(ctx, rng, reads):
    g, faces = _hard_field(ctx, rng, pressure_iterations=2)
    assert _project(g, faces, 5, reads) == 1
    assert g.pressure_cycles == 2 and g.pressure_residual > TOLERANCE     # stopped by the cap, as stated
    g.release()


def test_steady_scene_reads_back_once_per_projection(ctx, reads):
    """A stirred, buoyant smoke scene (bench/smoke.py's): after the first step every projection
    checks its residual once unless it needed more cycles than the last one, each step meets the
    tolerance, and the readbacks are far fewer than the cycles (a check per cycle before)."""
    n = SHAPE[1]
    g = SmokeGrid(ctx, (n, n), advection="maccormack", vorticity=2.0, buoyancy=(0.2, 2.0),
                  pressure_tolerance=TOLERANCE)
    per_step, cycles = [], []
    for k in range(12):
        angle = 0.7 * k
        g.splat(n / 2 + 0.25 * n * np.cos(angle), n / 4, n / 12, velocity=(0.2 * n * np.sin(angle), 0.1 * n),
                density=1.0, temperature=1.0)
        predicted = g._pressure.predicted
        before = reads[0]
        g.step(1 / 60)
        per_step.append(reads[0] - before)
        cycles.append(g.pressure_cycles)
        assert per_step[-1] == 1 + max(cycles[-1] - predicted, 0), (per_step, cycles)
        assert g.pressure_residual <= TOLERANCE
    assert min(cycles[1:]) >= 2
    assert sum(per_step[1:]) <= len(per_step[1:]) + 2, (per_step, cycles)
    assert sum(per_step[1:]) * 2 <= sum(cycles[1:]), (per_step, cycles)
    g.release()
