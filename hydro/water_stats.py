"""The water's totals and extremes, reduced on the GPU for the step planner: volume (a sum of depths in
fp64), deepest water and the lowest bed on the grid's edge (where level faces are), in two passes
(stats.comp, stats_final.comp). A record is queued without waiting; `read()` waits for the last one,
and the records queued at the ends of step() calls go into a fenced, persistently mapped ring
(hydro._native.FencedReadback), from which `record(seq)` takes one without waiting for later work."""
from __future__ import annotations

import struct

import numpy as np

from . import _gl, _native
from ._owner import Held

# common/stats.glsl's Stats in std430: `taken` (a dvec2) aligned to 16 bytes
_RECORD = struct.Struct("<dfff")          # a record's depth_sum, max_depth, min_terrain, max_speed
STATS_DTYPE = np.dtype({"names": ["depth_sum", "max_depth", "min_terrain", "max_speed", "unused", "taken"],
                        "formats": ["<f8", "<f4", "<f4", "<f4", "<f4", ("<f8", 2)],
                        "offsets": [0, 8, 12, 16, 20, 32], "itemsize": 48})


class StatsReduction(Held):
    """The reduction of one grid (`state`: a water_kernels.WaterState) with its tuning's shape."""

    held = ("partials", "buffer", "ring")

    def __init__(self, state, tuning):
        ctx, self.state, self.ctx = state.ctx, state, state.ctx
        self.rows = tuning.stats_rows
        # with inertia the planner bounds the substep by the fastest water too
        self.speed = state.params.inertia
        # with a water cycle it adds what the cycle took to the ledger (water_cycle)
        self.cycle = state.cycle
        defines = {"STATS_ROWS": self.rows, "SPEED": self.speed, "HEX": state.hexagonal, "CYCLE": self.cycle is not None}
        self.tiles_program = _gl.program(ctx, "water/stats.comp", defines)
        self.final_program = _gl.program(ctx, "water/stats_final.comp", {"CYCLE": self.cycle is not None})
        # GPUs: each workgroup walks up enough tiles that the records stay at most stats_records
        tiles_x, tiles_y = -(-state.nx // _gl.LOCAL_SIZE), -(-state.ny // _gl.LOCAL_SIZE)
        self.walk = 1
        while not self.rows and tiles_x * -(-tiles_y // self.walk) > tuning.stats_records:
            self.walk *= 2
        rows = _gl.LOCAL_SIZE * (self.rows or self.walk)
        self.groups = (tiles_x, -(-state.ny // rows))
        self.records = self.groups[0] * self.groups[1] * (_gl.LOCAL_SIZE ** 2 if self.rows else 1)
        self.partials = self.buffer = self.ring = None
        self.seq = 0                        # records pushed into the ring so far
        try:
            self.partials = ctx.buffer(reserve=STATS_DTYPE.itemsize * self.records)
            self.buffer = ctx.buffer(reserve=STATS_DTYPE.itemsize)
            self.ring = _native.FencedReadback.create(ctx, STATS_DTYPE.itemsize)
        except BaseException:
            self.release()
            raise

    def queue(self, push: bool = False) -> int:
        """Dispatch the reduction of the state as it is; with `push`, into the ring too. Returns the
        record's number in the ring (0 if not pushed)."""
        s, b = self.state, _gl.BINDINGS
        s.terrain.bind_to_image(b["B_TERRAIN"], read=True, write=False)
        s.water.bind_to_image(b["B_WATER"], read=True, write=False)
        self.partials.bind_to_storage_buffer(b["B_PARTIALS"])
        self.buffer.bind_to_storage_buffer(b["B_STATS"])
        _gl.set_uniforms(self.tiles_program, u_size=s.size, u_walk=self.walk, u_face_width=s.geometry.face_width)
        if self.speed:
            s.bind_flows()
        if self.cycle is not None:
            self.cycle.bind_for_stats()
            s.ledger.bind_to_storage_buffer(b["B_LEDGER"])
            grid = self.cycle.grid
            _gl.set_uniforms(self.final_program, u_evaporation_slot=grid._evaporation_slot,
                             u_drain_slot=grid._drain_slot, u_cell_area=s.geometry.cell_area)
        self.tiles_program.run(*self.groups, 1)
        self.ctx.memory_barrier()
        _gl.set_uniforms(self.final_program, u_count=self.records)

        self.final_program.run(1, 1, 1)
        self.ctx.memory_barrier()
        if not (push and self.ring is not None):
            return 0
        self.seq += 1
        self.ring.push(self.buffer, self.seq)
        return self.seq

    def read(self) -> dict:
        """The last record queued; waits for every pass queued so far."""
        return self._dict(self.buffer.read())

    def record(self, seq: int) -> dict:
        """Ring record `seq`, waiting only for the work queued before it."""
        return self._dict(self.ring.record(seq))

    def _dict(self, data) -> dict:
        depth_sum, max_depth, min_terrain, max_speed = _RECORD.unpack_from(data)    # STATS_DTYPE's first fields
        return {"volume": depth_sum * self.state.geometry.cell_area, "max_depth": max_depth,
                "min_terrain": min_terrain, "max_speed": max_speed}
