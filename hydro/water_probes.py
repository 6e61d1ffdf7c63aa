"""What a game asks of the water between frames, without stalling a frame: the water at a few points
(`Sampler`, water/sample.comp). Each request is one small pass whose values (16 bytes a point, never
the grid) are copied into a fenced, persistently mapped ring (hydro._native.FencedReadback); the game
gets a `Sample` handle it can poll next frame, whose `result()` waits only where the GPU has not got
there yet.
"""
from __future__ import annotations

import numpy as np

from . import _gl, _native
from . import _validate as check

SAMPLE_DRY_DEPTH = 1e-3     # cells: columns no deeper than this (times cell_size) have no velocity,
                            # the renderer's default dry depth (hydro.render.RenderStyle.dry_depth)
MAX_POINTS = 1 << 20        # points a sample may ask for


def check_points(name: str, points, nx: int, ny: int) -> np.ndarray:
    """(N, 2) finite grid coordinates (x, y), N >= 1, each within half a cell of the grid's cell
    centres (x in [-0.5, nx - 0.5], y in [-0.5, ny - 0.5]), as a C-contiguous float32 copy."""
    arr = check.field(name, points)
    if arr.ndim != 2 or arr.shape[1] != 2 or not 1 <= arr.shape[0] <= MAX_POINTS:
        raise ValueError(f"{name}: expected an (N, 2) array of grid coordinates (x, y) with 1 <= N <= "
                         f"{MAX_POINTS}, got shape {arr.shape}")
    off = ((arr[:, 0] < -0.5) | (arr[:, 0] > nx - 0.5) | (arr[:, 1] < -0.5) | (arr[:, 1] > ny - 0.5))
    if off.any():
        i = int(np.argmax(off))
        raise ValueError(f"{name}: point {i} ({float(arr[i, 0])}, {float(arr[i, 1])}) lies off the grid: expected "
                         f"-0.5 <= x <= {nx - 0.5} and -0.5 <= y <= {ny - 0.5} (integer (x, y) is the centre "
                         f"of cell [y, x])")
    return arr


class Sample:
    """The water at some points as it was when they were asked for, on its way back from the GPU.

    ready: whether result() can return without waiting (never waits itself).
    result(): (N, 4) float32, read-only: depth, surface (bed + depth), vx, vy (world units/s) at each
    point, bilinear between the four cells around it; waits for the GPU only if it is not there yet.
    A game asks in one frame and reads in the next, so it never waits.
    """

    __slots__ = ("_sampler", "_seq", "_count", "_values")

    def __init__(self, sampler, seq: int, count: int, values=None):
        self._sampler, self._seq, self._count, self._values = sampler, seq, count, values

    @property
    def ready(self) -> bool:
        return self._values is not None or self._sampler.done(self)

    def result(self) -> np.ndarray:
        if self._values is None:
            self._sampler.take(self)
        return self._values

    def __repr__(self):
        return f"Sample({self._count} points, {'ready' if self._values is not None else 'queued'})"


class Sampler:
    """A grid's sample pass and its readback ring (made on the grid's first sample). A ring record holds
    `capacity` points; a request of more grows it (after taking every request still in it)."""

    SLOTS = 8                   # requests that can be on their way at once; the next takes the oldest

    def __init__(self, owner, state, cell_size: float):
        self.owner, self.state, self.ctx = owner, state, state.ctx
        self.program = _gl.program(self.ctx, "water/sample.comp", {"HEX": state.hexagonal})
        self.uniforms = dict(u_face_width=float(state.geometry.face_width), u_min_depth=SAMPLE_DRY_DEPTH * cell_size)
        self.points = self.values = self.ring = None
        self.capacity = 0
        self.seq = 0
        self.waiting = {}                   # seq -> Sample whose record is in the ring, not yet read

    def objects(self) -> list:
        return [obj for obj in (self.points, self.values, self.ring) if obj is not None]

    def release(self) -> None:
        for obj in self.objects():
            obj.release()
        self.points = self.values = self.ring = None
        self.waiting = {}

    def _grow(self, count: int) -> None:
        """Room for `count` points a record: the requests in the old ring are taken first."""
        for handle in list(self.waiting.values()):
            self.take(handle)
        self.release()
        self.capacity = max(64, 1 << (count - 1).bit_length())
        self.points = self.ctx.buffer(reserve=8 * self.capacity)
        self.values = self.ctx.buffer(reserve=16 * self.capacity)
        self.ring = _native.FencedReadback.create(self.ctx, 16 * self.capacity, self.SLOTS)

    def queue(self, points: np.ndarray) -> Sample:
        """Queue the pass for `points` (checked (N, 2) float32) and the copy of its values."""
        count = len(points)
        if count > self.capacity:
            self._grow(count)
        self.points.orphan(8 * self.capacity)   # a fresh store: a pass still reading the last points keeps its own
        self.points.write(points.tobytes())
        s, b = self.state, _gl.BINDINGS
        s.terrain.bind_to_image(b["B_TERRAIN"], read=True, write=False)
        s.water.bind_to_image(b["B_WATER"], read=True, write=False)
        for name, buf in zip(("B_FLOW_X", "B_FLOW_Y", "B_FLOW_Z"), s.flows):
            buf.bind_to_storage_buffer(b[name])
        self.points.bind_to_storage_buffer(b["B_SAMPLE_POINTS"])
        self.values.bind_to_storage_buffer(b["B_SAMPLE_VALUES"])
        _gl.set_uniforms(self.program, u_size=s.size, u_count=count, **self.uniforms)
        self.program.run(-(-count // 64), 1, 1)
        self.ctx.memory_barrier()
        if self.ring is None:                   # no persistent mapping (GL < 4.4): read it now
            return Sample(self, 0, count, self._values(self.values.read(16 * count), count))
        self.seq += 1
        overwritten = self.waiting.get(self.seq - self.SLOTS)
        if overwritten is not None:             # its slot is taken next: read it first
            self.take(overwritten)
        self.ring.push(self.values, self.seq)
        handle = Sample(self, self.seq, count)
        self.waiting[self.seq] = handle
        return handle

    def done(self, handle: Sample) -> bool:
        self.owner._alive()
        return self.ring.done(handle._seq)

    def take(self, handle: Sample) -> None:
        """Read a request's values out of the ring, waiting for the GPU if it is not done."""
        self.owner._alive()
        handle._values = self._values(self.ring.record(handle._seq), handle._count)
        del self.waiting[handle._seq]

    @staticmethod
    def _values(data: bytes, count: int) -> np.ndarray:
        return np.frombuffer(data, np.float32, 4 * count).reshape(count, 4)
