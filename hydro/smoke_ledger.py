"""The ledger of SmokeGrid's scalars: where each total came from and where it went, booked on the GPU
as the steps run (no readback), and on the CPU for what the caller does between steps.

The totals sum over the fluid cells, times the cell area (world units^2): density, heat
(T - T_ambient) and fuel. Booked per scalar:
  assigned     what the setters (density, temperature, fuel) and new obstacles changed
  splats       what splat() added (its brush's weights over the fluid cells, hydro.smoke_ops.brush_sum)
  combustion   what burning changed (combust.comp, in the ledger's current slot)
  outflow      minus what left through open sides (net; the advection pass, shaders/smoke/ledger.glsl)
  dissipation  minus what density_dissipation took
and `expected`, their sum: with conserve=True, SmokeGrid.totals() equals it to float32 rounding. The
advection's drift (what the scheme alone gained or lost, which the conservation fix takes back) is
kept beside them, outside the sum.
"""
from __future__ import annotations

import math

import numpy as np

from . import _gl

SCALARS = ("density", "heat", "fuel")
SLOT = np.dtype([(name, "<f8", 4) for name in ("outflow", "dissipation", "combustion", "drift")])   # ledger.glsl
SUMS_BYTES = 32 + 3 * 32                    # sums.glsl: the group count, then up to three dvec4 sums
RECORD_BYTES = 3 * 32                       # a group's record of the advection pass's sums
# Cells an invocation of the scalars' last pass takes up its column (scalar_pass.glsl): fewer groups, so
# fewer records for the last one to fold. Untimed on a GPU; on llvmpipe it also cuts the barriers.
SCALAR_ROWS = 4


class Ledger:
    """The GPU buffers of the scalars' sums and ledger, and the CPU's entries. `slot` is the GPU
    ledger's current slot: a substep books from it into the other (`next`), which becomes current
    when the substep stands (commit)."""

    def __init__(self, ctx, shape, local_size=_gl.LOCAL_SIZE):
        ny, nx = shape
        columns = -(-nx // local_size)
        # the records of the advection pass (SCALAR_ROWS cells an invocation) or of combust.comp (one dvec4)
        records = max(columns * -(-ny // (local_size * SCALAR_ROWS)) * RECORD_BYTES, columns * -(-ny // local_size) * 32)
        self.partials = self.sums = self.slots = None
        try:
            self.partials = ctx.buffer(reserve=records)
            self.sums = ctx.buffer(reserve=SUMS_BYTES)
            self.slots = ctx.buffer(reserve=2 * SLOT.itemsize)
        except BaseException:
            self.release()
            raise
        self.sums.clear()
        self.slots.clear()
        self.slot = 0
        self.cpu = {"assigned": np.zeros(3), "splats": np.zeros(3)}

    @property
    def next(self) -> int:
        return 1 - self.slot

    def bind(self, prog, booking: bool) -> None:
        """The buffers a pass that sums the scalars uses; with `booking` the slots it books from and
        into (an advection pass: from the current one into the next; combustion: into the current)."""
        b = _gl.BINDINGS
        self.partials.bind_to_storage_buffer(b["B_SMOKE_SUM_PARTIALS"])
        self.sums.bind_to_storage_buffer(b["B_SMOKE_SUMS"])
        self.slots.bind_to_storage_buffer(b["B_SMOKE_LEDGER"])
        _gl.set_uniforms(prog, u_ledger_from=self.slot)
        if booking:
            _gl.set_uniforms(prog, u_ledger_to=self.next)

    def commit(self) -> None:
        """The substep that booked into the next slot stands: it becomes the current one."""
        self.slot = self.next

    def book(self, entry, amounts) -> None:
        """Add (density, heat, fuel) amounts, world units, to a CPU entry ("assigned" or "splats")."""
        self.cpu[entry] += np.asarray(amounts, np.float64)

    def report(self, cell_area) -> dict:
        """Per scalar: the entries, `expected` (their sum) and `drift` (outside it). Reads the GPU's
        slot: waits for the passes queued so far."""
        rec = np.frombuffer(self.slots.read(), SLOT)[self.slot]
        out = {}
        for k, name in enumerate(SCALARS):
            entries = {"assigned": float(self.cpu["assigned"][k]), "splats": float(self.cpu["splats"][k]),
                       "combustion": float(rec["combustion"][k]) * cell_area,
                       "outflow": -float(rec["outflow"][k]) * cell_area,
                       "dissipation": -float(rec["dissipation"][k]) * cell_area}
            entries["expected"] = math.fsum(entries.values())
            entries["drift"] = float(rec["drift"][k]) * cell_area
            out[name] = entries
        return out

    def release(self) -> None:
        for buf in (self.partials, self.sums, self.slots):
            if buf is not None:
                buf.release()
        self.partials = self.sums = self.slots = None


def scalar_totals(s, solid, t_ambient) -> np.ndarray:
    """The totals over the fluid cells of (density, heat T - T_ambient, fuel), in cells, of scalars
    s (ny, nx, >= 3) as float64."""
    phi = s[..., :3].astype(np.float64) - np.array([0.0, t_ambient, 0.0])
    return phi[~solid].sum(axis=0)
