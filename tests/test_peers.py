"""The peer benchmarks (bench/peers) compute hydro's water step: each peer against the float64 reference
(hydro.reference.water.step), NumPy float32, torch and taichi on the CPU, cupy on a CUDA device. torch,
taichi and cupy are optional and not installed by CI: without them their tests skip."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # the repository root, for bench.peers

from bench.peers import GRAVITY, compare, random_case, reference_water, stable_dt  # noqa: E402

STEPS = 20


@pytest.fixture(scope="module", params=[(1.0, 0.02), (0.5, 0.3)], ids=["cell1-f0.02", "cell0.5-f0.3"])
def case(request):
    cell_size, friction = request.param
    terrain, water = random_case(48, 40)
    dt = stable_dt(terrain, water, safety=0.9, cell_size=cell_size)
    want = reference_water(terrain, water, dt, STEPS, friction=friction, cell_size=cell_size)
    return terrain, water, dt, cell_size, friction, want


def run_peer(module, case, **kw):
    terrain, water, dt, cell_size, friction, want = case
    sim = module.make(terrain, water, GRAVITY, friction, cell_size, **kw)
    sim.step(dt, STEPS)
    sim.sync()
    return compare(sim.water(), want)


def test_numpy_peer_matches_reference(case):
    from bench.peers import numpy_pipes
    err, ok = run_peer(numpy_pipes, case)
    assert ok, f"numpy peer: max error {err:.3g} of the deepest water"


def test_torch_peer_matches_reference(case):
    pytest.importorskip("torch", reason="torch is an optional peer-benchmark dependency")
    from bench.peers import torch_pipes
    err, ok = run_peer(torch_pipes, case, device="cpu")
    assert ok, f"torch peer: max error {err:.3g} of the deepest water"


def test_taichi_peer_matches_reference(case):
    ti = pytest.importorskip("taichi", reason="taichi is an optional peer-benchmark dependency")
    from bench.peers import taichi_pipes
    taichi_pipes.init(ti.cpu)
    err, ok = run_peer(taichi_pipes, case)
    assert ok, f"taichi peer: max error {err:.3g} of the deepest water"


def test_cupy_peer_matches_reference(case):
    cp = pytest.importorskip("cupy", reason="cupy is an optional peer-benchmark dependency")
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - no driver or no device
        pytest.skip(f"cupy needs a CUDA device: {exc}")
    from bench.peers import cupy_pipes
    err, ok = run_peer(cupy_pipes, case)
    assert ok, f"cupy peer: max error {err:.3g} of the deepest water"


def test_the_floor_rows_time_a_bare_pass_and_a_copy(capsys):
    """`--floor` prints, beside the peers, what a pass that does nothing and an r32f copy cost over the same
    cells on hydro's context, a row each with a time."""
    from bench.peers import run
    run.main(["--sizes", "64", "--peers", "numpy", "--steps", "20", "--repeat", "2", "--warmup", "1", "--floor"])
    rows = {line[:13].strip(): line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("gl ")}
    assert set(rows) == {"gl empty pass", "gl r32f copy"}
    ms = {name: float(row[-1]) for name, row in rows.items()}
    assert all(v > 0 for v in ms.values())


def test_hydro_runs_as_a_game_makes_it_and_with_every_cell_computed(capsys):
    """The two hydro rows: `hydro` with its tiles sleeping where nothing moves, `hydro-dense` computing
    every cell, as the array peers do; each prints a time."""
    from bench.peers import run
    run.main(["--sizes", "32", "--peers", "hydro", "hydro-dense", "--steps", "4", "--repeat", "1", "--warmup", "1"])
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()
            if line.startswith("hydro")}
    assert set(rows) == {"hydro", "hydro-dense"}
    assert all(float(row[-1]) > 0 for row in rows.values())
    dense = run._Hydro(*run.bench_case(8), 9.81, 0.02, 1.0, sleep=False)
    assert dense.grid.sleep is False
    dense.release()
