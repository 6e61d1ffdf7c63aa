"""bench/gpu_check.py, the check to run first on a GPU, passes on the test context: every water kernel
gives the cell-wise kernel's water and flows over a run of calls, with the thresholds forced and not and
with inertia, and erosion on the planner's kernel its beds and sediment."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # the repository root, for bench

from bench import gpu_check  # noqa: E402
from hydro import water_kernels  # noqa: E402


def test_gpu_check_passes(ctx, capsys):
    assert gpu_check.main(["--size", "20", "26"], ctx=ctx) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert out.count(" ok") == 20 and sum(line.startswith("inertia ") for line in lines) == 4
    assert sum(line.startswith("erosion ") for line in lines) == 4
    assert "FAIL" not in out and "all kernels agree" in out


def test_gpu_check_reports_a_kernel_that_disagrees(ctx, capsys, monkeypatch):
    """Hex blocked calls that start every call with no z flow (the fault seen on one GPU driver) fail
    the check, on both kinds of sides and thresholds, with inertia, and with erosion (its blocked kernel
    packs alike)."""
    real = water_kernels.Blocked._pack

    def from_rest(self, *args, **kwargs):
        if self.state.hexagonal:
            self.state.flows[2].write(bytes(self.state.flows[2].size))
        real(self, *args, **kwargs)

    monkeypatch.setattr(water_kernels.Blocked, "_pack", from_rest)
    assert gpu_check.main(["--size", "20", "26"], ctx=ctx) == 1
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if "FAIL" in line]
    assert len(failed) == 8 and all("HexWaterGrid" in line for line in failed)
    assert sum(line.startswith("erosion") for line in failed) == 2
    assert sum(line.startswith("inertia") for line in failed) == 2
