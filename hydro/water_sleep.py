"""Sleeping tiles: the cell-wise kernel, and on GPUs the blocked one (`texels`), compute only the tiles of
the grid where something can change.

A tile sleeps when a substep left its water and its faces' flows exactly as they were, and the tiles
beside it too: its next substep would work out the same numbers from the same numbers, so skipping it
gives the bits computing it gives (a dry slope, a lake whose flows have settled). The boundary pass
before each substep also plans it, one invocation per tile (common/sleep_plan.glsl): it lists the
tiles that changed in the substep before, with those beside them, the tiles beside a side that is not
a wall (so inflows, outflows and levels, and every change of their values, keep them computed), and
those an edit woke; the cell passes run one workgroup per listed tile through an indirect dispatch and
flag the tiles in which something changed (common/sleep.glsl). The water cycle needs nothing more:
rain or a spring changes a cell's water, or what rounding owes it, at every substep, so the tiles under
them stay flagged; evaporation and drains change the water they take until there is none (a change of
the rates wakes every tile for one substep). Nothing is read back within a call: each call's count of
tiles computed goes into a fenced ring that the grid reads two calls later (fraction_of), to go dense
where most tiles move, and `awake_fraction()` reads the last call's when asked. docs/design.md,
"Sleeping tiles", says why the same bits.
"""
from __future__ import annotations

import numpy as np

from . import _gl, _native
from .boundary import KINDS
from ._owner import Held

WAKE_RECTS = 8                  # rectangles an edit wakes between two calls before they merge into one box
# the tiles listed over a call's substeps, and over those whose plans did not wake every tile (the dense
# policy's), and 2 unused; then two dispatches' (x, y, z, unused) by parity, then the blocked kernel's unpack's,
# then its edge tiles' by parity (common/sleep_plan.glsl's EDGE_LIST)
ARGS = np.array([0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0], np.uint32)
UNPACK_ARGS = 48                # the unpack's arguments' offset in bytes
EDGE_ARGS = 64                  # the edge tiles' arguments' offset in bytes
PLAN_GROUP = 256                # water/sleep_plan.comp's workgroup


def tiles_of(nx: int, ny: int, tile: int) -> tuple[int, int]:
    return -(-nx // tile), -(-ny // tile)


def wake_box(box, nx: int, ny: int, tile: int):
    """The tiles (x0, y0, x1, y1), inclusive, that an edit of the cells `box` (x0, y0, width, height)
    wakes: those it touches and the tiles beside them, whose faces with them it changes."""
    x0, y0, w, h = box
    tx, ty = tiles_of(nx, ny, tile)
    return (max(x0 // tile - 1, 0), max(y0 // tile - 1, 0),
            min((x0 + w - 1) // tile + 1, tx - 1), min((y0 + h - 1) // tile + 1, ty - 1))


def open_cells(table, layout, nx: int, ny: int) -> np.ndarray:
    """(ny, nx) bools: the cells beside a face that is not a wall (hydro.boundary's table and layout),
    whose tiles stay awake."""
    cells = np.zeros(nx * ny, bool)
    cells[layout.inside_cell[table["kind"] != KINDS["wall"]]] = True
    return cells.reshape(ny, nx)


class CallCounts:
    """Each sleeping step() call's count of tiles computed, by call number, kept until the call two later
    reads it (the dense policy): a count read at once, or None where it waits in a fenced ring."""

    def __init__(self):
        self.records = {}               # call number: (substeps it planned, its count or None)

    def keep(self, call: int, substeps: int, count=None) -> None:
        self.records[call] = (substeps, count)
        for old in [c for c in self.records if c < call - 3]:
            del self.records[old]

    def take(self, call: int, read):
        """(substeps, count) of call number `call`, or None where it kept none; `read(call)` gives a count
        left in the ring."""
        record = self.records.pop(call, None)
        if record is None:
            return None
        substeps, count = record
        return substeps, read(call) if count is None else count


class Wakes:
    """The tiles of `tile` x `tile` over `span` (x, y) that an edit woke for the coming plan, beside those
    the substep before changed (common/sleep_awake.glsl): every tile, or the rectangles of tiles around the
    cells edited. Sleep's, and hydro.water_fragment's sleeping tiles'."""

    def __init__(self, span, tile: int):
        self.span, self.tile = span, tile
        self.tiles = tiles_of(*span, tile)
        self.count = self.tiles[0] * self.tiles[1]
        self.all_woken = True           # every tile computes the next substep (made, or after an edit)
        self.boxes = []                 # tile rectangles woken since the last substep

    def wake(self, box=None) -> None:
        """Wake every tile (box None), or the tiles an edit of the cells box (x0, y0, width, height)
        touches and those beside them, for the next substep."""
        if box is None:
            self.all_woken, self.boxes = True, []
        elif not self.all_woken:
            self.boxes.append(wake_box(box, *self.span, self.tile))
            if len(self.boxes) > WAKE_RECTS:
                b = np.array(self.boxes)
                self.boxes = [(b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max())]

    def tiles_of_cells(self, cells) -> np.ndarray:
        """(tiles y, tiles x) bools: the tiles holding a True of the (ny, nx) bools `cells`."""
        tx, ty = self.tiles
        padded = np.zeros((ty * self.tile, tx * self.tile), bool)
        padded[:cells.shape[0], :cells.shape[1]] = cells
        return padded.reshape(ty, self.tile, tx, self.tile).any(axis=(1, 3))

    def take_wakes(self, prog) -> dict:
        """The wakes for the plan `prog` runs next: its u_wake written, and its uniforms u_wake_all and
        u_wake_count; the plan after it wakes none of them."""
        if self.boxes:
            rects = np.zeros((WAKE_RECTS, 4), np.int32)
            rects[:len(self.boxes)] = self.boxes
            prog["u_wake"].write(rects.tobytes())
        uniforms = {"u_wake_all": self.all_woken, "u_wake_count": len(self.boxes)}
        self.all_woken, self.boxes = False, []
        return uniforms


class Sleep(Wakes, Held):
    """The sleeping tiles of one grid (`state`, a water_kernels.WaterState) of `tile` x `tile` cells; with
    `texels` (the blocked kernel's) of as many of its texels, which reach a row and a column past the cells
    and hold the outer faces, and the tiles a call lists are marked for its unpack (`touched`)."""

    held = ("list", "flags_even", "flags_odd", "args", "open", "touched", "ring")

    def __init__(self, state, tile: int, texels: bool = False):
        super().__init__((state.nx + texels, state.ny + texels), tile)
        self.state, self.ctx, self.texels = state, state.ctx, texels
        count = self.count
        self.list = self.flags_even = self.flags_odd = self.args = self.open = self.touched = self.ring = None
        try:
            self.list = self.ctx.buffer(reserve=4 * count)
            if texels:
                self.touched = self.ctx.buffer(reserve=4 * count)
                self.touched.clear()
            # each tile's flag that something changed in it, written by the substeps of that parity
            self.flags_even = self.ctx.buffer(reserve=4 * count)
            self.flags_odd = self.ctx.buffer(reserve=4 * count)
            for flags in (self.flags_even, self.flags_odd):
                flags.clear()
            self.args = self.ctx.buffer(ARGS.tobytes())
            # each sleeping call's counts (ARGS' first two), read two calls later without a wait (fraction_of)
            self.ring = _native.FencedReadback.create(self.ctx, 8, 4)
        except BaseException:
            self.release()
            raise
        self.call_counts = CallCounts()  # each call's count of tiles computed, for fraction_of
        self.any_open = False           # whether a side that is not a wall keeps tiles awake (`open`)
        self.dense_above = None         # the dense policy's threshold where not Tuning.sleep_dense_above
        self.parity = 0                 # the parity of the next substep
        self.substeps = 0               # substeps of the last step() call it planned
        self.listed = False             # whether the count on the GPU belongs to the last call
        self.judged = 0                 # substeps of the last call whose plans did not wake every tile

    def begin_call(self) -> None:
        """A step() call starts: its count starts from zero."""
        self.substeps = 0
        self.listed = False

    def set_open(self, table, layout) -> None:
        """The boundary table changed its faces' kinds: the tiles holding a cell beside a face that is not
        a wall stay awake (hydro.boundary's table and layout)."""
        nx, ny = self.state.nx, self.state.ny
        cells = open_cells(table, layout, nx, ny)
        self.any_open = bool(cells.any())
        if self.any_open:
            if self.open is None:
                self.open = self.ctx.buffer(reserve=4 * self.count)
            if self.texels:         # and the texels beside them, which hold their outer faces
                grown = np.zeros((ny + 1, nx + 1), bool)
                for dy in (0, 1):
                    for dx in (0, 1):
                        grown[dy:dy + ny, dx:dx + nx] |= cells
                cells = grown
            self.open.write(self.tiles_of_cells(cells).astype(np.uint32).tobytes())

    def plan(self, prog, steps: int = 1, interior=None) -> int:
        """Bind what the plan of the coming substep (the blocked kernel's: launch of `steps` substeps) reads
        and writes and set its uniforms on `prog` (the pass that runs it: common/sleep_plan.glsl); returns
        its invocations, one a tile. `interior` (EDGE_LIST): the first and the last tile (column, row) of
        the rectangle listed from the list's start; the others are listed for run()'s `edges`."""
        b = _gl.BINDINGS
        if not self.listed:
            self.args.write(ARGS[:2].tobytes())
            self.listed = True
            self.judged = 0
        # a plan that wakes every tile (an edit, another schedule) says nothing of the world: the policy
        # judges a call by its other substeps
        judge = 0 if self.all_woken else steps
        self.judged += judge
        flags = (self.flags_even, self.flags_odd)
        p = self.parity
        flags[1 - p].bind_to_storage_buffer(b["B_SLEEP_ACTIVE"])
        flags[p].bind_to_storage_buffer(b["B_SLEEP_CLEAR"])
        self.list.bind_to_storage_buffer(b["B_SLEEP_LIST"])
        self.args.bind_to_storage_buffer(b["B_SLEEP_ARGS"])
        if self.any_open:
            self.open.bind_to_storage_buffer(b["B_SLEEP_OPEN"])
        if self.touched is not None:
            self.touched.bind_to_storage_buffer(b["B_SLEEP_TOUCHED"])
        _gl.set_uniforms(prog, u_tiles=self.tiles, u_parity=p, u_any_open=self.any_open, u_plan_steps=steps,
                         u_judge_steps=judge, **self.take_wakes(prog))
        if interior is not None:
            _gl.set_uniforms(prog, u_interior=interior, u_list_end=self.count)
        self.substeps += steps
        return self.count

    def planned(self) -> None:
        """The plan ran: the coming substep's cell passes flag the tiles they change."""
        (self.flags_even, self.flags_odd)[self.parity].bind_to_storage_buffer(_gl.BINDINGS["B_SLEEP_ACTIVE"])

    def run(self, prog, edges=None) -> None:
        """Run a cell pass of the planned substep over its awake tiles; with `edges`, `prog` over those the
        plan listed from the start and `edges` (common/sleep.glsl's SLEEP_EDGES) over the others beside it,
        first, so its few workgroups run beside the others'."""
        if edges is not None:
            _gl.set_uniforms(edges, u_list_end=self.count)
            edges.run_indirect(self.args, EDGE_ARGS + 16 * self.parity)
        prog.run_indirect(self.args, 16 + 16 * self.parity)
        self.ctx.memory_barrier()

    def run_listed(self, prog) -> None:
        """Run `prog` over the tiles list_touched listed (the blocked kernel's unpack)."""
        self.list.bind_to_storage_buffer(_gl.BINDINGS["B_SLEEP_LIST"])
        prog.run_indirect(self.args, UNPACK_ARGS)
        self.ctx.memory_barrier()

    def list_touched(self, prog) -> None:
        """After a call's last launch: list the tiles its launches listed, with their count in the unpack's
        arguments, by `prog` (water/sleep_plan.comp's LIST_TOUCHED), which unmarks them."""
        b = _gl.BINDINGS
        self.args.write(ARGS[:1].tobytes(), offset=UNPACK_ARGS)
        self.list.bind_to_storage_buffer(b["B_SLEEP_LIST"])
        self.args.bind_to_storage_buffer(b["B_SLEEP_ARGS"])
        self.touched.bind_to_storage_buffer(b["B_SLEEP_TOUCHED"])
        _gl.set_uniforms(prog, u_tiles=self.tiles)
        prog.run(-(-self.count // PLAN_GROUP), 1, 1)
        self.ctx.memory_barrier()

    def end_substep(self) -> None:
        self.parity = 1 - self.parity

    def push_call(self, call: int) -> None:
        """The step() call numbered `call` has ended: where it slept here, queue its count of the tiles its
        plans listed but those that woke every tile (u_judged_total) for fraction_of."""
        if not self.listed or not self.judged:
            return
        if self.ring is not None:
            self.ring.push(self.args, call)
            self.call_counts.keep(call, self.judged)
        else:
            self.call_counts.keep(call, self.judged, int(np.frombuffer(self.args.read(8), np.uint32)[1]))

    def fraction_of(self, call: int):
        """The fraction of tiles the step() call numbered `call` computed where it slept here, over the
        substeps whose plans did not wake every tile (None where it has none); waits for the GPU only where
        that call is not done yet."""
        record = self.call_counts.take(call, lambda c: int(np.frombuffer(self.ring.record(c), np.uint32)[1]))
        if record is None:
            return None
        substeps, count = record
        return count / (substeps * self.count)

    def listed_substeps(self) -> float:
        """The tiles the last step() call listed over its substeps, in substeps of the whole grid; reads the
        count back, waiting for the GPU."""
        if not self.listed:
            return 0.0
        return int(np.frombuffer(self.args.read(4), np.uint32)[0]) / self.count
