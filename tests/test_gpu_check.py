"""bench/gpu_check.py, the check to run first on a GPU, passes on the test context: every water path
gives the three passes' water and flows over a run of calls, with the thresholds forced and not."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # the repository root, for bench

from bench import gpu_check  # noqa: E402
from hydro import water_passes  # noqa: E402


def test_gpu_check_passes_and_puts_the_thresholds_back(ctx, capsys):
    before = {id(table): dict(table) for table, _, _ in gpu_check.FORCED}
    assert gpu_check.main(["--size", "20", "26"], ctx=ctx) == 0
    out = capsys.readouterr().out
    assert out.count(" ok") == 12 and "FAIL" not in out and "all paths agree" in out
    for table, _, _ in gpu_check.FORCED:
        assert dict(table) == before[id(table)]
    assert water_passes.WIDE_OPEN_MIN_CELLS["square"] == 2048 * 2048


def test_gpu_check_reports_a_path_that_disagrees(ctx, capsys, monkeypatch):
    """Hex packed calls that start every call with no z flow (the fault seen on an NVIDIA driver) fail
    the check, on both kinds of sides and thresholds."""
    real = water_passes._Passes._step_packed

    def from_rest(self, n):
        if self._hexagonal:
            self._flows[2].write(bytes(self._flows[2].size))
        real(self, n)

    monkeypatch.setattr(water_passes._Passes, "_step_packed", from_rest)
    assert gpu_check.main(["--size", "20", "26"], ctx=ctx) == 1
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if "FAIL" in line]
    assert len(failed) == 4 and all("HexWaterGrid" in line for line in failed)
