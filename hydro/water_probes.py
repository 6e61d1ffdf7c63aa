"""What a game asks of the water between frames, without stalling a frame.

- `Sampler`: the water at a few points (common/sample.glsl). Each request is one small pass whose values
  (16 bytes a point, never the grid) are copied into a fenced, persistently mapped ring
  (hydro._native.FencedReadback); the game gets a `Sample` handle it can poll next frame, whose
  `result()` waits only where the GPU has not got there yet. On CPU rasterisers, where a pass of its
  own costs a dispatch's hand-off to the rasteriser's threads, a request waits for the next step()
  call, whose first pass samples it (`Tuning.fold_samples`, docs/design.md).
- `Gauges`: what crosses lines across the flow (water wheels, gates, a river's mouth). A gauge is the
  faces whose pipe (the segment between the centres of the face's two cells) its line cuts, each with
  a sign (`line_faces`, worked out once on the CPU); after every substep of a call the kernels call
  `Gauges.hook`, whose pass (water/gauge.comp) adds what crossed them to fp64 sums on the GPU. The
  sums are copied into a fenced ring at the end of every step() call that advanced the water, and a
  gauge reads the record of the call before the latest one: one call late, so reading it nearly
  never waits, and which record it reads never depends on the GPU's timing.
"""
from __future__ import annotations

import math
import struct

import numpy as np

from . import _gl, _native
from . import _validate as check
from ._owner import Held

SAMPLE_DRY_DEPTH = 1e-3     # cells: columns no deeper than this (times cell_size) have no velocity,
                            # the renderer's default dry depth (hydro.render.RenderStyle.dry_depth)
MAX_POINTS = 1 << 20        # points a sample may ask for
FLOW_BINDINGS = ("B_FLOW_X", "B_FLOW_Y", "B_FLOW_Z")


def check_points(name: str, points, nx: int, ny: int) -> np.ndarray:
    """(N, 2) finite grid coordinates (x, y), N >= 1, each within half a cell of the grid's cell
    centres (x in [-0.5, nx - 0.5], y in [-0.5, ny - 0.5]), as a C-contiguous float32 copy. A game
    calls this every frame: an array of numbers is checked in a few NumPy calls, anything else (and
    any error) by check.field, which names what is wrong."""
    arr = np.asarray(points) if isinstance(points, (np.ndarray, list, tuple)) else None
    if (arr is not None and arr.dtype.kind in "fiu" and arr.ndim == 2 and arr.shape[1] == 2
            and 1 <= arr.shape[0] <= MAX_POINTS and arr.min() >= -0.5 and (arr <= _upper(nx, ny)).all()):
        # the common case, in two reductions (NaN fails both): within the grid in its own precision,
        # so within it in float32 too, where the bounds are exact, and the cast cannot overflow
        return np.array(arr, np.float32, order="C")
    if arr is None or arr.dtype.kind not in "fiu":
        arr = check.field(name, points)                  # raises for what is not an array of numbers
    with np.errstate(over="ignore"):
        arr = np.array(arr, np.float32, order="C")
    if arr.ndim != 2 or arr.shape[1] != 2 or not 1 <= arr.shape[0] <= MAX_POINTS:
        raise ValueError(f"{name}: expected an (N, 2) array of grid coordinates (x, y) with 1 <= N <= "
                         f"{MAX_POINTS}, got shape {arr.shape}")
    (x_low, y_low), (x_high, y_high) = arr.min(axis=0).tolist(), arr.max(axis=0).tolist()
    if not all(map(math.isfinite, (x_low, y_low, x_high, y_high))):       # NaN reaches the min and max
        check.field(name, points)                        # raises, naming the first value that is not finite
    if x_low >= -0.5 and y_low >= -0.5 and x_high <= nx - 0.5 and y_high <= ny - 0.5:
        return arr
    off = ((arr[:, 0] < -0.5) | (arr[:, 0] > nx - 0.5) | (arr[:, 1] < -0.5) | (arr[:, 1] > ny - 0.5))
    if off.any():
        i = int(np.argmax(off))
        raise ValueError(f"{name}: point {i} ({float(arr[i, 0])}, {float(arr[i, 1])}) lies off the grid: expected "
                         f"-0.5 <= x <= {nx - 0.5} and -0.5 <= y <= {ny - 0.5} (integer (x, y) is the centre "
                         f"of cell [y, x])")
    return arr


_UPPER = {}


def _upper(nx: int, ny: int) -> np.ndarray:
    """The largest grid coordinates (x, y) a point may have, as an array (made once per shape)."""
    upper = _UPPER.get((nx, ny))
    if upper is None:
        upper = _UPPER[nx, ny] = np.array([nx - 0.5, ny - 0.5])
    return upper


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


class Sampler(Held):
    """A grid's sample pass and its readback ring (made on the grid's first sample). A ring record holds
    `capacity` points; a request of more grows it (after taking every request still in it)."""

    SLOTS = 8                   # requests that can be on their way at once; the next takes the oldest
    held = ("points", "values", "ring")

    def __init__(self, owner, state, cell_size: float, fold: bool = False):
        self.owner, self.state, self.ctx = owner, state, state.ctx
        self.program = _gl.program(self.ctx, "water/sample.comp", {"HEX": state.hexagonal})
        self.uniforms = dict(u_sample_face_width=float(state.geometry.face_width),
                             u_sample_min_depth=SAMPLE_DRY_DEPTH * cell_size)
        self.points = self.values = self.ring = None
        self.capacity = 0
        self.sent = None
        self.seq = 0
        self.waiting = {}                   # seq -> Sample whose record is in the ring, not yet read
        # `fold`: a request waits for the next call's first pass (fold_into) while `foldable`, which the
        # grid clears at an edit that call's first pass would race with, until the call after it
        self.fold, self.foldable = fold, fold
        self.pending = None                 # the Sample that waits for the next call

    def release(self) -> None:
        super().release()
        self.waiting, self.pending = {}, None

    def _grow(self, count: int) -> None:
        """Room for `count` points a record: the requests in the old ring are taken first."""
        self.flush()
        for handle in list(self.waiting.values()):
            self.take(handle)
        self.release()
        self.capacity = max(64, 1 << (count - 1).bit_length())
        self.sent = None                        # the points in the buffer (bytes), none yet
        self.points = self.ctx.buffer(reserve=8 * self.capacity)
        self.values = self.ctx.buffer(reserve=16 * self.capacity)
        self.ring = _native.FencedReadback.create(self.ctx, 16 * self.capacity, self.SLOTS)

    def queue(self, points: np.ndarray) -> Sample:
        """Queue the pass for `points` (checked (N, 2) float32) and the copy of its values, or, folding,
        leave them for the next call's first pass."""
        self.flush()                            # one request waits at a time
        count = len(points)
        if count > self.capacity:
            self._grow(count)
        data = points.tobytes()
        if data != self.sent:                   # a game often asks at the same points: they are there already
            self.points.orphan(8 * self.capacity)   # a fresh store: a pass still reading the last points keeps its own
            self.points.write(data)
            self.sent = data
        handle = self.pending = Sample(self, 0, count)
        if not (self.fold and self.foldable and self.ring is not None):
            self.flush()                        # its own pass, now
        return handle

    def _bind(self, count: int, prog, state: bool = True) -> None:
        """Bind what the sample reads (the water's `state` too, unless the kernel has) and writes, and set
        its uniforms on `prog`."""
        s, b = self.state, _gl.BINDINGS
        if state:
            s.terrain.bind_to_image(b["B_TERRAIN"], read=True, write=False)
            s.water.bind_to_image(b["B_WATER"], read=True, write=False)
            for name, flow in zip(FLOW_BINDINGS, s.flows):     # only the flows: not the kernels' others
                flow.bind_to_storage_buffer(b[name])
        self.points.bind_to_storage_buffer(b["B_SAMPLE_POINTS"])
        self.values.bind_to_storage_buffer(b["B_SAMPLE_VALUES"])
        _gl.set_uniforms(prog, u_size=s.size, u_sample_count=count, **self.uniforms)

    def _sent(self, handle: Sample) -> None:
        """The pass for `handle` ran: its values go into the ring (read now where there is none)."""
        if self.ring is None:                   # no persistent mapping (GL < 4.4): read it now
            handle._values = self._values(self.values.read(16 * handle._count), handle._count)
            return
        self.seq += 1
        overwritten = self.waiting.get(self.seq - self.SLOTS)
        if overwritten is not None:             # its slot is taken next: read it first
            self.take(overwritten)
        self.ring.push(self.values, self.seq)
        handle._seq = self.seq
        self.waiting[self.seq] = handle

    def flush(self) -> None:
        """Run the waiting request's pass now, on the water as it still is."""
        handle, self.pending = self.pending, None
        if handle is not None:
            self._bind(handle._count, self.program)
            self.program.run(-(-handle._count // 64), 1, 1)
            self.ctx.memory_barrier()
            self._sent(handle)

    def edited(self) -> None:
        """The water, terrain, flows or a side's kind are about to change otherwise than by stepping: the
        waiting request samples the water as it is first, and none waits for the call after the edit,
        whose first pass may change a wall's flows."""
        self.flush()
        self.foldable = False

    def fold_into(self, prog, first: int) -> int:
        """Bind the waiting request for `prog`, the call's first pass (cells_boundary.comp with SAMPLES),
        whose invocations from `first` sample it; returns their count (0: none waits)."""
        if self.pending is None:
            return 0
        self._bind(self.pending._count, prog, state=False)     # the kernel has bound the state
        _gl.set_uniforms(prog, u_sample_first=first)
        return self.pending._count

    def folded(self) -> None:
        """The call's first pass ran (with the sample's invocations where one waited). Where its values
        are back already (a CPU rasteriser runs a pass when it is dispatched), the handle takes them now,
        so its result() needs no GL call."""
        handle, self.pending = self.pending, None
        if handle is not None:
            self._sent(handle)
            if self.ring.done(handle._seq):
                self.take(handle)

    def called(self) -> None:
        """A step() call ended: requests made now may wait for the next."""
        self.flush()
        self.foldable = self.fold

    def done(self, handle: Sample) -> bool:
        self.owner._alive()
        return handle is not self.pending and self.ring.done(handle._seq)

    def take(self, handle: Sample) -> None:
        """Read a request's values out of the ring, waiting for the GPU if it is not done (running its
        pass first where it waits for a call)."""
        self.owner._alive()
        if handle is self.pending:
            self.flush()
        handle._values = self._values(self.ring.record(handle._seq), handle._count)
        del self.waiting[handle._seq]

    @staticmethod
    def _values(data: bytes, count: int) -> np.ndarray:
        return np.frombuffer(data, np.float32, 4 * count).reshape(count, 4)


# ---------------------------------------------------------------------------------------------- gauges

MAX_GAUGES = 256            # gauges a grid holds at once
_DOUBLE = struct.Struct("=d")   # a record's sums: fp64 in the machine's byte order


def line_faces(p0, p1, nx: int, ny: int, hexagonal: bool):
    """The faces a gauge from p0 to p1 (grid coordinates) counts: those whose pipe, from the centre of the
    face's from-cell to that of its to-cell, goes from the line's negative side (or the line itself) to
    its positive side (sign +1), or back (-1), meeting the line within the segment (t in [0, 1]). The
    positive side is that of n = (y1 - y0, -(x1 - x0)). Faces with a cell of the grid at one end at
    least, boundary faces included. Returns (array, i, j, sign) int arrays: array 0 flow_x[j, i],
    1 flow_y[j, i], 2 flow_z[j, i] (hex)."""
    p0, p1 = np.asarray(p0, np.float64), np.asarray(p1, np.float64)
    d = p1 - p0
    normal = np.array([d[1], -d[0]])
    lo, hi = np.floor(np.minimum(p0, p1)).astype(int) - 2, np.ceil(np.maximum(p0, p1)).astype(int) + 2
    j, i = np.mgrid[max(lo[1], 0):min(hi[1], ny) + 1, max(lo[0], 0):min(hi[0], nx) + 1]
    i, j = i.ravel(), j.ravel()
    found = []
    # per array: the from-cell's and the to-cell's offsets from the face's (i, j), and its index range
    pipes = [((-1, 0), (0, 0), (nx, ny - 1)), ((0, -1), (0, 0), (nx - 1, ny))] + [((0, -1), (-1, 0), (nx, ny))] * hexagonal
    for k, (a_off, b_off, last) in enumerate(pipes):
        a = np.stack([i + a_off[0], j + a_off[1]], 1)
        b = np.stack([i + b_off[0], j + b_off[1]], 1)
        has_cell = _in_grid(a, nx, ny) | _in_grid(b, nx, ny)
        sa, sb = (a - p0) @ normal, (b - p0) @ normal
        sign = np.where((sa <= 0) & (sb > 0), 1, 0) - np.where((sb <= 0) & (sa > 0), 1, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            meet = a + (sa / (sa - sb))[:, None] * (b - a)
        t = (meet - p0) @ d / (d @ d)
        keep = (sign != 0) & has_cell & (i <= last[0]) & (j <= last[1]) & (t >= 0) & (t <= 1)
        found.append((np.full(int(keep.sum()), k), i[keep], j[keep], sign[keep]))
    return tuple(np.concatenate(parts).astype(np.int32) for parts in zip(*found))


def _in_grid(c, nx, ny):
    return (c[:, 0] >= 0) & (c[:, 0] < nx) & (c[:, 1] >= 0) & (c[:, 1] < ny)


def check_line(p0, p1, nx: int, ny: int, hexagonal: bool):
    """A gauge's line, ((x0, y0), (x1, y1)) with both ends within half a cell of the cell centres (as
    sample points) and apart, and the faces it counts (line_faces), at least one."""
    line = tuple(check.pair(name, p, "(x, y) grid coordinates", item=check.real32) for name, p in (("p0", p0), ("p1", p1)))
    for name, (x, y) in zip(("p0", "p1"), line):
        if not (-0.5 <= x <= nx - 0.5 and -0.5 <= y <= ny - 0.5):
            raise ValueError(f"{name}: ({x}, {y}) lies off the grid: expected -0.5 <= x <= {nx - 0.5} and "
                             f"-0.5 <= y <= {ny - 0.5} (integer (x, y) is the centre of cell [y, x])")
    if line[0] == line[1]:
        raise ValueError(f"p1: the line ends where it starts, at {line[0]}; a gauge needs a line across the flow")
    faces = line_faces(*line, nx, ny, hexagonal)
    if not len(faces[0]):
        raise ValueError(f"p0, p1: the line from {line[0]} to {line[1]} cuts no pipe between two cell centres; "
                         f"expected a line across at least one face")
    return line, faces


class Gauge:
    """What crosses a line across the flow (a water wheel, a gate, a river's mouth), summed on the GPU
    after every substep in double precision (on the fragment backend as float pairs hi + lo, about as
    precise), signed along the line's normal (y1 - y0, -(x1 - x0)): a line drawn toward +y counts flow
    toward +x.

    discharge: m^3/s (world units^3/s) over the step() call before the latest one.
    volume: m^3 crossed since the gauge was added, up to the end of that same call.
    sim_time: the grid's sim_time at the end of that call (0.0, and both values 0, until there is one).
    The values are one step() call late (a frame, where a game steps once a frame), so reading them
    nearly never waits for the GPU, and which call they are of never depends on its timing; only
    calls that advance the water count (with fixed_substep, a call too short for a substep does not).
    line: ((x0, y0), (x1, y1)); faces: (array, i, j, sign) of the faces it counts (line_faces).
    remove(): the gauge stops counting; reading it then raises.
    """

    __slots__ = ("_gauges", "slot", "line", "faces", "_since")

    def __init__(self, gauges, slot, line, faces, since):
        self._gauges, self.slot, self.line, self.faces, self._since = gauges, slot, line, faces, since

    @property
    def discharge(self) -> float:
        return self._gauges.read(self)[0]

    @property
    def volume(self) -> float:
        return self._gauges.read(self)[1]

    @property
    def sim_time(self) -> float:
        return self._gauges.read(self)[2]

    def remove(self) -> None:
        self._gauges.remove(self)

    def __repr__(self):
        (x0, y0), (x1, y1) = self.line
        return f"Gauge(({x0}, {y0}) -> ({x1}, {y1}), {len(self.faces[0])} faces)"


class Gauges(Held):
    """A grid's gauges: their faces on the GPU, the per-substep pass and the ring of per-call records.
    A record holds, per gauge slot, the volume since added and the volume over the call (fp64)."""

    SLOTS = 4                   # records in the ring; a gauge reads the one before the newest
    held = ("faces", "volumes", "ring")

    def __init__(self, owner, state):
        self.owner, self.state, self.ctx = owner, state, state.ctx
        defines = {"HEX": state.hexagonal, "MAX_GAUGES": MAX_GAUGES}
        self.programs = {packed: _gl.program(self.ctx, "water/gauge.comp", {**defines, "PACKED": packed})
                         for packed in (False, True)}
        self.live = {}                  # slot -> Gauge
        self.count = 0                  # gauge slots the pass runs over (the highest live one + 1)
        self.first = True               # the next substep is its call's first
        self.faces = self.volumes = self.ring = None
        self.seq = 0                    # records pushed so far
        self.kept = {}                  # seq -> (sim_time, seconds the call advanced[, its bytes without a ring])
        self.last = None                # (seq, record bytes, sim_time, seconds) of the record read last
        try:
            self.faces = self.ctx.buffer(reserve=8 * MAX_GAUGES + 16)
            self.volumes = self.ctx.buffer(reserve=16 * MAX_GAUGES)
            self.volumes.clear()
            self.ring = _native.FencedReadback.create(self.ctx, 16 * MAX_GAUGES, self.SLOTS)
        except BaseException:
            self.release()
            raise

    def add(self, line, faces) -> Gauge:
        slot = min(set(range(MAX_GAUGES)) - set(self.live))
        self._start(slot)
        gauge = Gauge(self, slot, line, faces, self.seq)
        self.live[slot] = gauge
        self._upload()
        return gauge

    def _start(self, slot: int) -> None:
        """The slot's sums start from 0."""
        zero = np.zeros(1, np.float64).tobytes()
        self.volumes.write(zero, offset=8 * slot)
        self.volumes.write(zero, offset=8 * (MAX_GAUGES + slot))

    def remove(self, gauge: Gauge) -> None:
        self.owner._alive()
        if self.live.get(gauge.slot) is not gauge:
            raise RuntimeError(f"{gauge!r} was removed already")
        del self.live[gauge.slot]
        self._upload()

    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        """Each slot's (first, count) of the faces, and every live gauge's faces in slot order, (N, 4) int32
        rows as line_faces gives them."""
        ranges = np.zeros((MAX_GAUGES, 2), np.int32)
        faces, first = [], 0
        for slot, gauge in sorted(self.live.items()):
            count = len(gauge.faces[0])
            ranges[slot] = (first, count)
            faces.append(np.stack(gauge.faces, axis=1))
            first += count
        return ranges, (np.concatenate(faces).astype(np.int32) if faces else np.zeros((0, 4), np.int32))

    def _upload(self) -> None:
        """Every live gauge's faces, and each slot's range of them, in one buffer."""
        ranges, faces = self._table()
        data = ranges.tobytes() + faces.tobytes()
        self.faces.orphan(max(len(data), 8 * MAX_GAUGES + 16))      # a pass still reading the old faces keeps them
        self.faces.write(data)
        self.count = max(self.live) + 1 if self.live else 0

    def hook(self, dt: float, packed=None) -> None:
        """The kernels' per-substep hook (water_kernels.Kernel.run): add what crossed every gauge in the
        substep just done, reading its flows where the kernel left them."""
        s, b = self.state, _gl.BINDINGS
        prog = self.programs[packed is not None]
        if packed is None:
            s.bind_flows()
        else:
            texture, margin = packed
            texture.bind_to_image(b["B_PACKED_IN"], read=True, write=False)
            _gl.set_uniforms(prog, u_margin=margin)
        self.faces.bind_to_storage_buffer(b["B_GAUGE_FACES"])
        self.volumes.bind_to_storage_buffer(b["B_GAUGE_VOLUMES"])
        _gl.set_uniforms(prog, u_size=s.size, u_dt=dt, u_first=self.first)
        prog.run(self.count, 1, 1)                  # a workgroup a gauge slot
        self.ctx.memory_barrier()
        self.first = False

    def end_call(self, sim_time: float, seconds: float) -> None:
        """A step() call advanced the water by `seconds`, ending at `sim_time`: record the sums."""
        self.first = True
        self.seq += 1
        self.kept[self.seq] = (sim_time, seconds, *self._keep(self.seq))
        self.kept.pop(self.seq - self.SLOTS, None)

    def _keep(self, seq: int) -> tuple:
        """Queue the copy of the sums into the ring as record `seq`: (); with no ring (no persistent
        mapping: GL < 4.4) read them now: (their bytes,)."""
        if self.ring is not None:
            self.ring.push(self.volumes, seq)
            return ()
        return (self.volumes.read(),)

    def read(self, gauge: Gauge) -> tuple[float, float, float]:
        """(discharge, volume, sim_time) of a gauge as of the record before the newest (read out of the
        ring once, for every gauge: the other gauges' reads touch no GL, so they skip the context check)."""
        if self.owner._released:
            self.owner._alive()                     # raises
        if self.live.get(gauge.slot) is not gauge:
            raise RuntimeError(f"{gauge!r} was removed: it counts nothing any more")
        seq = self.seq - 1
        if seq <= gauge._since:         # no call both after it was added and before the latest
            return 0.0, 0.0, 0.0
        if self.last is None or self.last[0] != seq:
            self.owner._alive()
            kept = self.kept[seq]
            data = kept[2] if self.ring is None else self.ring.record(seq)
            self.last = (seq, data, *kept[:2])
        _, data, sim_time, seconds = self.last
        call, volume = self._sums(data, gauge.slot)
        return call / seconds, volume, sim_time

    @staticmethod
    def _sums(data: bytes, slot: int) -> tuple[float, float]:
        """A slot's (volume over the call, volume since added) in a record: only its two sums are
        decoded, not the record's 2 * MAX_GAUGES."""
        return _DOUBLE.unpack_from(data, 8 * (MAX_GAUGES + slot))[0], _DOUBLE.unpack_from(data, 8 * slot)[0]
