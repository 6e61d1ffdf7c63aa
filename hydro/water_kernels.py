"""The water step's kernels: schedules of one model (shaders/common/model.glsl), each an object that owns
its programs and scratch resources and records a call's substeps on the grid's `WaterState`.

- `CellWise` ("cells", CPU rasterisers): per substep two passes over the cells, each invocation walking
  a column of cells (cells_accelerate.comp: every face accelerated and each cell's outflow scale;
  cells_move.comp: faces scaled, columns moved), the boundary faces apart (cells_boundary.comp).
- `Fused` ("fused", GPU calls of one substep): a whole substep in one dispatch over tiles in shared
  memory (fused.comp), the last substep's move settled into the water texture (settle.comp).
- `Blocked` ("blocked", GPU calls of several substeps): the state packed into one rgba32f texel a cell
  (pack.comp), several substeps a launch over tiles grown by a halo of two cells a substep
  (blocked_tile.comp, or on square grids the climb, blocked_climb.comp), unpacked at the end.
Which kernel runs a call, and how the blocked kernel's launches tile the grid, hydro.water_plan decides.
All give the same result to rounding (to the bit on CPU rasterisers), which the tests check.
"""
from __future__ import annotations

import numpy as np

from . import _gl, _native
from . import water_plan as plan
from .params import Geometry, WaterParams, model_uniforms
from .boundary import KINDS
from .water_erosion import erode_uniforms, erosion_uniforms
from .water_sleep import PLAN_GROUP, WAKE_RECTS, Sleep


class WaterState:
    """What a water step reads and writes on the GPU, shared by the kernels: terrain and water (r32f
    textures), the flows (a storage buffer per axis, and scratch twins the kernels write into and swap
    with), the boundary table and the per-face ledger. Owned by the grid."""

    def __init__(self, ctx, terrain: np.ndarray, water: np.ndarray, hexagonal: bool, params: WaterParams,
                 geometry: Geometry, boundary_table: np.ndarray, ledger_slots: int):
        self.ctx, self.hexagonal, self.params, self.geometry = ctx, hexagonal, params, geometry
        self.ny, self.nx = terrain.shape
        self.defines = {"HEX": hexagonal, "PIPE_AREA_DEPTH": params.depth_area, "MANNING": params.manning > 0,
                        "INERTIA": params.inertia, "CYCLE": False, "RAIN_FIELD": False, "SOURCES": False}
        self.cycle = None               # the grid's hydro.water_cycle.Cycle, once it has one
        self.sleep = None               # the grid's hydro.water_sleep.Sleep (the cell-wise kernel's)
        self.sleepers = []              # the other kernels' (the blocked kernel's)
        self.open_source = None         # (boundary table, layout) the sleepers' open tiles come from
        self.call_substeps = 0          # substeps of the last step() call, and of those every tile's
        self.dense_substeps = 0
        self.open_entries = None        # the table entries that are not walls, and how often they changed
        self.kinds_version = 0
        self._uniforms = None           # (key, dict) of model_uniforms' last answer
        self.set_kinds(boundary_table["kind"])
        self.terrain = self.water = self.boundary = self.ledger = None
        self.flows, self.flows_tmp = [], []
        self.flow_shapes = [(self.ny, self.nx + 1), (self.ny + 1, self.nx)] + [(self.ny + 1, self.nx + 1)] * hexagonal
        try:
            self._create(terrain, water, boundary_table, ledger_slots)
        except BaseException:
            self.release()
            raise

    def _create(self, terrain, water, boundary_table, ledger_slots):
        ctx, size = self.ctx, (self.nx, self.ny)
        self.terrain = ctx.texture(size, 1, terrain.tobytes(), dtype="f4")
        self.water = ctx.texture(size, 1, water.tobytes(), dtype="f4")
        for tex in (self.terrain, self.water):
            tex.repeat_x = tex.repeat_y = False
        for rows, cols in self.flow_shapes:
            for flows in (self.flows, self.flows_tmp):
                flows.append(ctx.buffer(reserve=4 * rows * cols))
                flows[-1].clear()
        self.boundary = ctx.buffer(boundary_table.tobytes())
        self.ledger = ctx.buffer(reserve=8 * ledger_slots)
        self.ledger.clear()

    def set_kinds(self, kinds: np.ndarray) -> None:
        """The boundary table's kinds changed (hydro.boundary.KINDS, an entry each)."""
        self.open_entries = np.flatnonzero(kinds != KINDS["wall"]).astype(np.int32)
        self.kinds_version += 1

    def all_sleepers(self) -> list:
        return [self.sleep] * (self.sleep is not None) + self.sleepers

    def wake(self, box=None) -> None:
        """Wake every kernel's tiles (box None), or those an edit of the cells `box` reaches
        (water_sleep.Sleep.wake)."""
        for sleep in self.all_sleepers():
            sleep.wake(box)

    def set_open(self, table, layout) -> None:
        """The boundary table's kinds changed: every kernel's tiles beside a side that is not a wall."""
        self.open_source = (table, layout)
        for sleep in self.all_sleepers():
            sleep.set_open(table, layout)

    def begin_call(self) -> None:
        self.call_substeps = self.dense_substeps = 0
        for sleep in self.all_sleepers():
            sleep.begin_call()

    def ran(self, substeps: int, sleep=None) -> None:
        """A call's substeps ran, sleeping through `sleep` or on every tile; the other kernels' flags no
        longer say what changed, so their next sleeping substep computes every tile."""
        self.call_substeps += substeps
        self.dense_substeps += substeps * (sleep is None)
        for other in self.all_sleepers():
            if other is not sleep:
                other.wake()

    def awake_fraction(self) -> float:
        """The fraction of tiles the last step() call computed, over its substeps (1.0 where it ran none);
        reads the counts back, waiting for the GPU."""
        if not self.call_substeps:
            return 1.0
        listed = sum(sleep.listed_substeps() for sleep in self.all_sleepers())
        return (self.dense_substeps + listed) / self.call_substeps

    def objects(self) -> list:
        """Its GPU objects, and every kernel's sleeping tiles' (a grid's release frees them all)."""
        sleep = [obj for sleeper in self.all_sleepers() for obj in sleeper.objects()]
        return [obj for obj in (self.terrain, self.water, *self.flows, *self.flows_tmp, self.boundary, self.ledger)
                if obj is not None] + sleep

    def release(self) -> None:
        for obj in self.objects():
            obj.release()
        if self.sleep is not None:
            self.sleep.release()
        self.terrain = self.water = self.boundary = self.ledger = self.sleep = None
        self.flows, self.flows_tmp = [], []

    @property
    def size(self) -> tuple[int, int]:
        return self.nx, self.ny

    def bind(self, flows: bool = True) -> None:
        """Bind what every kernel reads: terrain, water, flows (unless the kernel binds them itself),
        boundary table and ledger."""
        b = _gl.BINDINGS
        self.terrain.bind_to_image(b["B_TERRAIN"], read=True, write=False)
        self.water.bind_to_image(b["B_WATER"], read=True, write=True)
        if flows:
            self.bind_flows()
        self.boundary.bind_to_storage_buffer(b["B_BOUNDARY"])
        self.ledger.bind_to_storage_buffer(b["B_LEDGER"])
        if self.defines["CYCLE"]:
            self.cycle.bind()

    def bind_flows(self) -> None:
        for name, buf, tmp in zip(("B_FLOW_X", "B_FLOW_Y", "B_FLOW_Z"), self.flows, self.flows_tmp):
            buf.bind_to_storage_buffer(_gl.BINDINGS[name])
            tmp.bind_to_storage_buffer(_gl.BINDINGS[name + "_TMP"])

    def swap_flows(self) -> None:
        self.flows, self.flows_tmp = self.flows_tmp, self.flows

    def cycle_written(self) -> None:
        """A dispatch with halos ran the water cycle: each cell's owner wrote its record to the other
        texture, which is now the records (water_cycle.Cycle.swap_records)."""
        if self.defines["CYCLE"]:
            self.cycle.swap_records()

    def model_uniforms(self, dt: float, smoothing: float = 0.0) -> dict:
        """params.model_uniforms (and the water cycle's) for a substep of dt: the same dict while dt, the
        smoothing and the cycle's rates stay the same (_gl.set_uniform_dict skips it then); not to be
        changed."""
        cycle = self.cycle.uniforms() if self.defines["CYCLE"] else {}
        key = (dt, smoothing, *cycle.values())
        if self._uniforms is None or self._uniforms[0] != key:
            made = model_uniforms(self.params, self.geometry, self.size, dt, smoothing, self.hexagonal)
            self._uniforms = (key, {**cycle, **made})
        return self._uniforms[1]


class Kernel:
    """One schedule of the model: `run(dt, call, hook)` records the call's substeps of dt (a
    water_plan.CallPlan) on the state, nothing read back; `release()` frees what it made.
    `hook`, where given (a call planned `per_substep`), is called after each substep, once that
    substep's scaled flows are all stored: `hook(dt)` where they are in the state's flow buffers
    (`state.flows`), `hook(dt, packed=(texture, margin))` where they are in the blocked kernel's packed
    state (texel (x, y) + margin holds the faces of cell (x, y), pack.comp). The hook binds what it
    reads, and may bind the flow buffers at B_FLOW_* and the packed state at B_PACKED_IN."""

    name = ""
    sleep = None                        # the water_sleep.Sleep of its sleeping calls, where it has one

    def __init__(self, state: WaterState, tuning: plan.Tuning, layout):
        self.state, self.tuning, self.ctx = state, tuning, state.ctx
        self._made = []                 # what it made that holds GPU memory, released with it
        try:
            self._create(layout)
        except BaseException:
            self.release()
            raise

    def _create(self, layout) -> None:
        raise NotImplementedError

    def run(self, dt: float, call: plan.CallPlan, hook=None) -> None:
        raise NotImplementedError

    def _keep(self, obj):
        self._made.append(obj)
        return obj

    def objects(self) -> list:
        return list(self._made)

    def release(self) -> None:
        for obj in self._made:
            obj.release()
        self._made = []

    def _program(self, name: str, **defines):
        return _gl.program(self.ctx, f"water/{name}.comp", {**self.state.defines, **defines})


class CellWise(Kernel):
    """Per substep: cells_accelerate.comp and cells_move.comp over the cells, each invocation walking
    cell_rows cells up a column, and the boundary faces booked and accelerated for the next substep in
    one dispatch of cells_boundary.comp; with inertia, in calls that compute every cell, each face's
    velocity first (cells_velocity.comp). Fewer, longer invocations and no barriers: what CPU rasterisers
    run fastest, reading the input flows through buffer-texture views where they can."""

    name = "cells"

    @property
    def sleep(self):
        return self.state.sleep

    def _create(self, layout):
        ctx, s, tuning = self.ctx, self.state, self.tuning
        self.scale = self._keep(ctx.texture(s.size, 1, dtype="f4"))     # each cell's outflow scale, pass 1 to 2
        self.scale.repeat_x = self.scale.repeat_y = False
        # every boundary face (array, column, row, table entry), and a list of those that are not walls
        self.all_places = np.stack([layout.array, layout.i, layout.j, np.arange(layout.size)], axis=1).astype("<i4")
        self.places = self._keep(ctx.buffer(self.all_places.tobytes()))
        self.faces = layout.size
        self.open_places = self._keep(ctx.buffer(reserve=max(self.all_places.nbytes, 16)))
        self.open_faces, self.open_version = 0, None
        # with inertia, each face's velocity (cells_velocity.comp), which the stencils of a dense call read
        self.velocities = None
        if s.params.inertia:
            self.velocities = [self._keep(ctx.buffer(reserve=4 * rows * cols)) for rows, cols in s.flow_shapes]
        units = _gl.BINDINGS["B_VELOCITY_Z_VIEW" if self.velocities else "B_FLOW_Z_TMP_VIEW"] + 1
        self.views = (_native.BufferViews.create(ctx, s.flows + s.flows_tmp + (self.velocities or []), units)
                      if tuning.buffer_views else None)
        if self.views is not None:
            self._made.append(self.views)
        self.view_defines = {"BUFFER_VIEWS": self.views is not None, "CELL_ROWS": tuning.cell_rows}
        self.programs = {}

    def _programs(self, sleeping: bool):
        """The passes (accelerate, move, boundary by (book, accelerate)) over every cell, or with
        `sleeping` over the tiles the plan lists (hydro.water_sleep), made on first use."""
        if sleeping not in self.programs:
            cells = self._cell_defines(sleeping)
            self.programs[sleeping] = (
                self._program("cells_accelerate", **cells, WALLED=False, STORED_VELOCITIES=self._stored(sleeping)),
                self._program("cells_move", **cells),
                {(book, accelerate): self._boundary_program(sleeping, BOOK=book, ACCELERATE=accelerate)
                 for book, accelerate in ((False, True), (True, False), (True, True))})
        return self.programs[sleeping]

    def _walled_accelerate(self, sleeping: bool):
        """cells_accelerate.comp for a grid walled all round (WALLED: every boundary face 0, read from no
        buffer), made on first use."""
        key = ("walled", sleeping)
        if key not in self.programs:
            self.programs[key] = self._program("cells_accelerate", **self._cell_defines(sleeping), WALLED=True,
                                               STORED_VELOCITIES=self._stored(sleeping))
        return self.programs[key]

    def _stored(self, sleeping: bool) -> bool:
        """Whether the accelerate pass reads the faces' velocities cells_velocity.comp stored: with inertia,
        in calls that compute every cell (a sleeping call works out those of its awake tiles' faces)."""
        return self.velocities is not None and not sleeping

    def _velocity_program(self):
        """cells_velocity.comp, made on first use."""
        if "velocity" not in self.programs:
            self.programs["velocity"] = self._program("cells_velocity", BUFFER_VIEWS=self.views is not None)
        return self.programs["velocity"]

    def _cell_defines(self, sleeping: bool) -> dict:
        """The cell passes' defines: the flows' views, and with `sleeping` a workgroup a tile."""
        tile = self.tuning.sleep_tile
        groups = dict(SLEEP=True, SLEEP_TILE=tile, GROUP_X=tile, GROUP_Y=tile // self.tuning.cell_rows)
        return {**self.view_defines, **(groups if sleeping else {})}

    def _boundary_program(self, sleeping: bool, **defines):
        """cells_boundary.comp with `defines`; `sleeping`: its accelerating passes plan the tiles too."""
        plans = dict(SLEEP=True, WAKE_RECTS=WAKE_RECTS) if sleeping else {}
        return self._program("cells_boundary", **defines, **plans)

    def run(self, dt, call, hook=None, fold=None):
        """As Kernel.run; `fold`, where given, a water_probes.Sampler whose waiting sample the call's first
        pass takes (a few more invocations)."""
        s = self.state
        sleep = s.sleep if call.sleep else None
        if self.open_version != s.kinds_version:
            self.open_faces = len(s.open_entries)
            if self.open_faces:
                self.open_places.write(self.all_places[s.open_entries].tobytes())
            self.open_version = s.kinds_version
        accelerate, move, boundary = self._programs(sleep is not None)
        if not self.open_faces:
            accelerate = self._walled_accelerate(sleep is not None)
        first = self._first_program(sleep is not None, fold is not None)
        velocity = self._velocity_program() if self._stored(sleep is not None) else None
        uniforms = s.model_uniforms(dt, call.smoothing)
        for prog in (accelerate, move, *boundary.values(), first, *([velocity] if velocity else [])):
            _gl.set_uniform_dict(prog, uniforms)
        if sleep is not None:
            for prog in (accelerate, move):
                _gl.set_uniforms(prog, u_tiles_x=sleep.tiles[0])
        s.bind()
        if s.defines["CYCLE"]:          # cells_move.comp: each cell's record read and written by its owner
            s.cycle.bind_records(in_place=True)
        self._bind()
        if velocity is not None:
            for axis, buf in zip("XYZ", self.velocities):
                buf.bind_to_storage_buffer(_gl.BINDINGS[f"B_VELOCITY_{axis}"])
                if self.views is not None:
                    self.views.bind(_gl.BINDINGS[f"B_VELOCITY_{axis}_VIEW"], buf)
        self._boundary(first, sleep=sleep, every=True, fold=fold)
        for k in range(call.substeps):
            if velocity is not None:
                _gl.dispatch(self.ctx, velocity, s.nx + 1, s.ny + 1)
            self._cells(accelerate, sleep)
            self._cells(move, sleep)
            if sleep is not None:
                sleep.end_substep()
            more = k + 1 < call.substeps
            if hook is None:
                self._boundary(boundary[True, more], sleep=sleep if more else None)
            else:       # the boundary faces' scaled flows stored for the hook first, then the next's
                self._boundary(boundary[True, False])
                hook(dt)
                if more:
                    self._boundary(boundary[False, True], sleep=sleep)

    def _bind(self):
        b, s = _gl.BINDINGS, self.state
        self.scale.bind_to_image(b["B_OUTFLOW_SCALE"], read=True, write=True)
        if self.views is not None:       # the input flows of both cell passes, as bind_flows binds them
            for axis, buf, tmp in zip("XYZ", s.flows, s.flows_tmp):
                self.views.bind(b[f"B_FLOW_{axis}_VIEW"], buf)
                self.views.bind(b[f"B_FLOW_{axis}_TMP_VIEW"], tmp)

    def _cells(self, prog, sleep=None):
        """A cell pass over every cell, or over the awake tiles of the planned substep."""
        if sleep is None:
            _gl.dispatch(self.ctx, prog, self.state.nx, -(-self.state.ny // self.tuning.cell_rows))
        else:
            sleep.run(prog)

    def _first_program(self, sleeping: bool, samples: bool):
        """A call's first boundary pass (book nothing, accelerate), with `samples` also the waiting sample's."""
        if not samples:
            return self._programs(sleeping)[2][False, True]
        key = ("first", sleeping)
        if key not in self.programs:
            self.programs[key] = self._boundary_program(sleeping, BOOK=False, ACCELERATE=True, SAMPLES=True)
        return self.programs[key]

    def _boundary(self, prog, sleep=None, every: bool = False, fold=None):
        """A boundary faces' pass `prog` over every face (`every`: a call's first, which zeroes the walls) or
        over those that are not walls; with `sleep` (where it accelerates the faces for a sleeping substep)
        it plans that substep's tiles too, a tile an invocation, and with `fold` it samples the points
        waiting for the call (water_probes.Sampler.fold_into), a point an invocation."""
        faces = self.faces if every else self.open_faces
        (self.places if every else self.open_places).bind_to_storage_buffer(_gl.BINDINGS["B_BOUNDARY_FACES"])
        _gl.set_uniforms(prog, u_count=faces)
        count = faces + 2 * self.state.hexagonal      # hex: and the two unused corner faces
        if sleep is not None:
            count += sleep.plan(prog)
        if fold is not None:
            count += fold.fold_into(prog, count)
        if count:
            _gl.dispatch(self.ctx, prog, _gl.LOCAL_SIZE, -(-count // _gl.LOCAL_SIZE))
        if sleep is not None:
            sleep.planned()
        if fold is not None:
            fold.folded()


class Fused(Kernel):
    """A substep in one dispatch of fused.comp over tiles in shared memory, the move of each substep
    left pending to the next (it reads the depth before it and the flows after), so a substep reads and
    writes the state once; depth ping-pongs through two scratch textures, flows through the state's
    buffer pairs, and settle.comp settles the last move into the water texture."""

    name = "fused"

    def _create(self, layout):
        s = self.state
        self.scratch = [self._keep(self.ctx.texture(s.size, 1, dtype="f4")) for _ in range(2)]
        for tex in self.scratch:
            tex.repeat_x = tex.repeat_y = False
        self.tile = plan.fused_tile(self.tuning, s.nx, s.ny)
        tx, ty, threads = self.tile
        self.program = self._program("fused", TILE_X=tx, TILE_Y=ty, THREADS=threads, UNROLLED=self.tuning.unrolled)
        self.settle_program = self._program("settle")

    def run(self, dt, call, hook=None):
        s, b = self.state, _gl.BINDINGS
        uniforms = s.model_uniforms(dt, call.smoothing)
        _gl.set_uniform_dict(self.program, uniforms)
        _gl.set_uniform_dict(self.settle_program, uniforms)
        s.bind(flows=False)                 # each substep binds them
        depth_in = s.water
        for k in range(call.substeps):
            if k < 2:
                _gl.set_uniforms(self.program, u_pending=k > 0)
            depth_out = self.scratch[k % 2]
            depth_in.bind_to_image(b["B_WATER"], read=True, write=False)
            depth_out.bind_to_image(b["B_OUT_IMAGE"], read=False, write=True)
            s.bind_flows()
            _gl.dispatch(self.ctx, self.program, s.nx, s.ny, local=self.tile[:2])
            s.swap_flows()
            if k > 0:                       # the pending move and the cycle ran
                s.cycle_written()
            if hook is not None:            # the substep's scaled flows are in s.flows now
                hook(dt)
            depth_in = depth_out
        depth_in.bind_to_image(b["B_WATER"], read=True, write=False)
        s.water.bind_to_image(b["B_OUT_IMAGE"], read=False, write=True)
        s.bind_flows()
        _gl.dispatch(self.ctx, self.settle_program, s.nx, s.ny)
        s.cycle_written()


class Blocked(Kernel):
    """Several substeps a launch on the state packed into one rgba32f texel a cell (temporal blocking):
    pack.comp packs the grid into state 0, launches read one state and write the other (the two swap
    image units between launches), each advancing its shape's substeps over tiles with a halo of two
    cells a substep, and the unpack writes the last state back with what the last launch booked at the
    boundary faces. A launch runs the interior tiles through a program without boundary tests and the
    ring of tiles around them through the general one (water_plan.TileLayout), or in walled calls
    every tile through the interior program against ghost columns; blocked_tile.comp settles a tile at
    once, blocked_climb.comp climbs it a row at a time (square grids)."""

    name = "blocked"
    eroding = False                     # ErodingBlocked: erosion's phases after each substep

    def _program(self, name: str, **defines):
        if name in ("blocked_tile", "pack"):
            defines = dict(defines, EROSION=self.eroding)
        return super()._program(name, **defines)

    def _create(self, layout):
        s, tuning = self.state, self.tuning
        self.shapes = plan.state_shapes(tuning, s.nx, s.ny)
        size, self.margin = plan.state_size(s.nx, s.ny, self.shapes, tuning.reach)
        self.states, self.bed = self._make_states(size)
        # what the ring's owners of boundary faces book at each substep of a launch, a slot each, until
        # the next launch or the unpack adds it to the ledger (common/booked.glsl); zeros between calls
        self.book_slots = max(steps for _, steps in self.shapes)
        self.booked = self._keep(self.ctx.buffer(reserve=4 * self.book_slots * layout.size))
        self.booked.clear()
        self.pack_program = self._program("pack", UNPACK=False, MARGIN=self.margin)
        self.unpack_program = self._program("pack", UNPACK=True, MARGIN=self.margin, BOOK_SLOTS=self.book_slots)
        self.layouts, self.programs = {}, {}
        self.sleeps = {}                # its sleeping tiles by side (hydro.water_sleep), made by the first call on them
        self.sleep = None               # those of its last sleeping call
        self.current = 0                # the state a sleeping call starts from: the last one's end

    def _make_states(self, size):
        """The two states, (depth, flow_x, flow_y, bed or flow_z) a texel, reaching past the grid so that
        every tile of every shape lies in them with its halo; texels outside the (nx + 1) x (ny + 1) the
        pack fills hold ghost columns. Hex: the beds in a third texture, laid out as the states (not with
        erosion, whose state holds them)."""
        s, (w, h), m = self.state, size, self.margin
        cw, ch = s.nx + 1, s.ny + 1
        # below, above, left of and right of the texels the pack fills, (x, y, width, height)
        strips = [(0, 0, w, m), (0, m + ch, w, h - m - ch), (0, m, m, ch), (m + cw, m, w - m - cw, ch)]
        ghost = np.array([0.0, 0.0, 0.0, 0.0 if s.hexagonal else plan.GHOST_BED], np.float32)
        made = []
        beds = s.hexagonal and not self.eroding
        for components, value in [(4, ghost), (4, ghost)] + [(1, np.float32([plan.GHOST_BED]))] * beds:
            tex = self._keep(self.ctx.texture((w, h), components, dtype="f4"))
            made.append(tex)
            for x, y, sw, sh in strips:
                if sw > 0 and sh > 0:
                    tex.write(np.tile(value, sw * sh).tobytes(), viewport=(x, y, sw, sh))
        return made[:2], (made[2] if beds else None)

    def _layout(self, shape):
        """The layout of a launch shape and its programs (ring, interior, walled), made on first use."""
        if shape not in self.layouts:
            s, t = self.state, self.tuning
            lay = plan.tile_layout(t, s.nx, s.ny, shape)
            (tx, ty), steps = shape
            halo = t.reach * steps
            tile = {"TILE_X": tx, "TILE_Y": ty, "STEPS": steps, "GROUP_X": tx + 2 * halo, "MARGIN": self.margin}
            settled = dict(tile, GROUP_Y=ty + 2 * halo)
            climb = dict(tile, AHEAD=lay.ahead)
            if lay.wide:
                inside = self._program("blocked_climb", **climb, EDGES=False)
                ring = self._program("blocked_climb", **climb, EDGES=True, BOOK_SLOTS=self.book_slots)
                programs = (ring, inside, inside)
            else:
                general = self._program("blocked_tile", **settled, INTERIOR=False, BOOK_SLOTS=self.book_slots)
                tiles = self._program("blocked_tile", **settled, INTERIOR=True)
                climbed = self._program("blocked_climb", **climb, EDGES=False) if lay.climbs or lay.climbs_walled else None
                programs = (general, climbed if lay.climbs else tiles, climbed if lay.climbs_walled else tiles)
            self.layouts[shape], self.programs[shape] = lay, programs
        return self.layouts[shape], self.programs[shape]

    def release(self) -> None:
        for sleep in self.sleeps.values():
            self.state.sleepers.remove(sleep)
            sleep.release()
        self.sleeps, self.sleep = {}, None
        super().release()

    def sleeper(self, tile: int):
        """Its water_sleep.Sleep of tiles of `tile` texels a side, made on first use (plan.blocked_sleeps,
        plan.sleep_climbs). Each kernel's sleepers are the grid's: where a call sleeps on one, the others
        wake every tile for their next (WaterState.ran)."""
        if tile not in self.sleeps:
            sleep = Sleep(self.state, tile, texels=True)
            sleep.set_open(*self.state.open_source)
            self.state.sleepers.append(sleep)
            self.sleeps[tile] = sleep
        return self.sleeps[tile]

    def _sleep_programs(self, tile: int):
        """(plan, list of the touched tiles, pack, unpack) of sleeping calls on tiles of `tile` texels; pack is
        (inside, edges), as the plan lists the tiles (_sleep_launch)."""
        key = ("sleep", tile)
        if key not in self.programs:
            rows = max(d for d in range(1, tile + 1) if tile % d == 0 and tile * d <= 1024)
            group = dict(SLEEP=True, SLEEP_TILE=tile, GROUP_X=tile, GROUP_Y=rows, MARGIN=self.margin)
            planning = {"WAKE_RECTS": WAKE_RECTS, "PLAN_GROUP": PLAN_GROUP}
            self.programs[key] = (
                _gl.program(self.ctx, "water/sleep_plan.comp", dict(planning, LIST_TOUCHED=False)),
                _gl.program(self.ctx, "water/sleep_plan.comp", dict(planning, LIST_TOUCHED=True)),
                (self._program("pack", UNPACK=False, **group),
                 self._program("pack", UNPACK=False, SLEEP_EDGES=True, **group)),
                self._program("pack", UNPACK=True, BOOK_SLOTS=self.book_slots, **group))
        return self.programs[key]

    def _sleep_launch(self, shape, walled: bool, climbs: bool):
        """The programs (inside, edges) of a sleeping launch of `shape`, a workgroup a listed tile: the
        climb's (plan.sleep_climbs) or the tile program's; `inside` over the tiles whose halo lies in the
        grid (every tile in walled calls), `edges` over the others (the plan's EDGE_LIST; None in walled
        calls): the climb's EDGES program, or the tile program's general one."""
        key = ("sleep launch", shape, walled, climbs)
        if key not in self.programs:
            (tile, _), steps = shape
            halo = self.tuning.reach * steps
            defines = dict(SLEEP=True, SLEEP_TILE=tile, TILE_X=tile, TILE_Y=tile, STEPS=steps,
                           GROUP_X=tile + 2 * halo, MARGIN=self.margin)
            edging = dict(SLEEP_EDGES=True, BOOK_SLOTS=self.book_slots)
            if climbs:
                climb = dict(defines, AHEAD=self.tuning.climb_ahead)
                inside = self._program("blocked_climb", **climb, EDGES=False)
                edges = None if walled else self._program("blocked_climb", **climb, **edging, EDGES=True)
            else:
                settled = dict(defines, GROUP_Y=tile + 2 * halo)
                inside = self._program("blocked_tile", **settled, INTERIOR=True)
                edges = None if walled else self._program("blocked_tile", **settled, **edging, INTERIOR=False)
            self.programs[key] = (inside, edges)
        return self.programs[key]

    def _sleep_interior(self, shape, walled: bool) -> tuple:
        """The first and the last tile (column, row) of a sleeping launch of `shape` that its `inside`
        program works (_sleep_launch): every tile in walled calls, else those of the dense launches'
        interior rectangle (plan.tile_layout); worked out once a shape."""
        key = ("sleep interior", shape, walled)
        if key not in self.layouts:
            lay = plan.tile_layout(self.tuning, self.state.nx, self.state.ny, shape)
            self.layouts[key] = ((0, 0, lay.tiles[0] - 1, lay.tiles[1] - 1) if walled else
                                 (lay.first[0], lay.first[1], lay.first[0] + lay.inner[0] - 1,
                                  lay.first[1] + lay.inner[1] - 1))
        return self.layouts[key]

    def _run_sleeping(self, dt, call, hook=None):
        """run() over the awake tiles: before each launch the plan lists them (water/sleep_plan.comp), the
        first launch's are packed from the grid into the state the last sleeping call ended in, the
        launches run a workgroup a listed tile and flag those that changed, and the tiles any launch
        listed are unpacked. A tile not listed changed in no bit in the launch before, nor did those
        beside it, so both states hold it as it is (docs/design.md, "Sleeping tiles")."""
        s, b = self.state, _gl.BINDINGS
        tile = call.launches[0][0][0]
        climbs = plan.sleep_climbs(self.tuning, s.nx, s.ny, call.walled)
        self.sleep = sleep = self.sleeper(tile)
        sleep.dense_above = self.tuning.sleep_climb_dense_above if climbs else None
        planning, listing, pack, unpack = self._sleep_programs(tile)
        launches = {shape: self._sleep_launch(shape, call.walled, climbs) for shape in set(call.launches)}
        interiors = {shape: self._sleep_interior(shape, call.walled) for shape in launches}
        # the programs of a dense call as long, which follows where the tiles stay awake: built now, in a
        # game's first call, not in a later frame (a driver may take seconds over them: docs/benchmarks.md)
        dense = plan.plan_call(self.tuning, s.nx, s.ny, call.substeps, kernel="blocked", is_walled=call.walled,
                               per_substep=call.per_substep)
        for shape in dict.fromkeys(dense.launches):
            self._layout(shape)
        uniforms = s.model_uniforms(dt, call.smoothing)
        tiles = {"u_tiles_x": sleep.tiles[0]}
        for progs in launches.values():
            for prog in progs:
                if prog is not None:
                    _gl.set_uniforms(prog, **uniforms, **tiles)
        for prog in pack:
            _gl.set_uniforms(prog, u_size=s.size, **tiles)
        _gl.set_uniforms(unpack, u_size=s.size, u_dt=dt, **tiles)
        s.bind()
        self.booked.bind_to_storage_buffer(b["B_BOOKED"])
        current = self.current
        for k, shape in enumerate(call.launches):
            count = sleep.plan(planning, shape[1], interiors[shape])
            planning.run(-(-count // PLAN_GROUP), 1, 1)
            self.ctx.memory_barrier()
            sleep.planned()
            if k == 0:
                self._pack(current, run=lambda: sleep.run(pack[0], None if call.walled else pack[1]))
            self.states[current].bind_to_image(b["B_PACKED_IN"], read=True, write=False)
            self.states[1 - current].bind_to_image(b["B_PACKED_OUT"], read=False, write=True)
            sleep.run(*launches[shape])
            s.cycle_written()
            sleep.end_substep()
            current = 1 - current
            if hook is not None:
                hook(dt, packed=(self.states[current], self.margin))
            if k == 0:
                _native.flush(self.ctx)
        self.current = current
        sleep.list_touched(listing)
        self._unpack(current, run=lambda: sleep.run_listed(unpack))

    def run(self, dt, call, hook=None):
        if call.sleep:
            self._run_sleeping(dt, call, hook)
            return
        s, b = self.state, _gl.BINDINGS
        uniforms = s.model_uniforms(dt, call.smoothing)
        shapes = list(dict.fromkeys(call.launches))            # a long call launches a few shapes many times
        for shape in shapes:
            lay, (ring, interior, walled) = self._layout(shape)
            if not call.walled:
                _gl.set_uniforms(ring, **uniforms, u_ring_x=lay.ring_x, u_ring_y=lay.ring_y)
            _gl.set_uniforms(walled if call.walled else interior, **uniforms,
                             u_first_tile=(0, 0) if call.walled else lay.first)
        _gl.set_uniforms(self.pack_program, u_size=s.size)
        _gl.set_uniforms(self.unpack_program, u_size=s.size, u_dt=dt)
        s.bind()
        self._pack()
        self.booked.bind_to_storage_buffer(b["B_BOOKED"])
        for k, shape in enumerate(call.launches):
            self._launch(k, shape, call.walled)
            if hook is not None:            # a call planned per_substep launches one substep at a time
                hook(dt, packed=(self.states[1 - k % 2], self.margin))
            if k == 0:
                # hand the pack and the first launch to the GPU now, so it works while Python queues the
                # rest (a driver may hold them until its buffer fills or the call ends)
                _native.flush(self.ctx)
        self._unpack(len(call.launches))

    def _pack(self, state: int = 0, run=None):
        """Pack the grid into state `state`: every texel, or through `run(program)` (a sleeping call's
        pack, the listed tiles') the program run binds itself."""
        b, s = _gl.BINDINGS, self.state
        self.states[state].bind_to_image(b["B_PACKED_OUT"], read=False, write=True)
        if self.bed is not None:                # hex: the beds too, read by the launches at B_TERRAIN
            self.bed.bind_to_image(b["B_OUT_IMAGE"], read=False, write=True)
        if run is None:
            _gl.dispatch(self.ctx, self.pack_program, s.nx + 1, s.ny + 1)
        else:
            run()
        if self.bed is not None:
            self.bed.bind_to_image(b["B_TERRAIN"], read=True, write=False)

    def _launch(self, k: int, shape, walled: bool):
        """Launch k of a call reads state k % 2 and writes the other, every tile through the interior
        program (walled calls) or the ring and the interior rectangle, which write different texels: one
        barrier after both. The ring goes first, so its few workgroups run beside the interior's."""
        b = _gl.BINDINGS
        self.states[k % 2].bind_to_image(b["B_PACKED_IN"], read=True, write=False)
        self.states[1 - k % 2].bind_to_image(b["B_PACKED_OUT"], read=False, write=True)
        lay, (ring, interior, walled_program) = self._layout(shape)
        if walled:
            walled_program.run(*lay.tiles, 1)
        else:
            ring.run(*lay.ring_groups, 1)
            if lay.inner[0] > 0:            # (0, 0) where there is no interior rectangle
                interior.run(*lay.inner, 1)
        self.ctx.memory_barrier()
        self.state.cycle_written()

    def _unpack(self, launches: int, run=None):
        """Unpack the state `launches` launches wrote into the grid: every texel, or through `run()` (a
        sleeping call's unpack, the listed tiles')."""
        b, s = _gl.BINDINGS, self.state
        self.states[launches % 2].bind_to_image(b["B_PACKED_IN"], read=True, write=False)
        s.water.bind_to_image(b["B_WATER"], read=False, write=True)
        s.bind_flows()
        if run is None:
            _gl.dispatch(self.ctx, self.unpack_program, s.nx + 1, s.ny + 1)
        else:
            run()


class ErodingBlocked(Blocked):
    """The blocked kernel with erosion on (water_plan.eroding): each launch a substep of the tile program
    with erosion's phases after it (blocked_tile.comp's EROSION), on a second state laid out as the
    water's, ping-ponging beside it: hex (sediment, what rounding owes the bed, bed, bedrock) a cell,
    square (sediment, owed), whose beds the water's texels hold and whose launches read the bedrock from
    the grid's texture. pack_erosion.comp packs it from the grid's textures before a call and unpacks it
    after; the sediment booked at the sides in the grid's erosion ledger. Never sleeps."""

    eroding = True

    def __init__(self, state: WaterState, tuning: plan.Tuning, layout, erosion):
        self.erosion = erosion          # the grid's water_erosion.ErosionState
        super().__init__(state, tuning, layout)

    def _create(self, layout):
        super()._create(layout)
        size = self.states[0].size
        components = 4 if self.state.hexagonal else 2
        self.eroding_states = [self._keep(self.ctx.texture(size, components, dtype="f4")) for _ in range(2)]
        self.erosion_pack, self.erosion_unpack = (
            _gl.program(self.ctx, "water/pack_erosion.comp",
                        dict(UNPACK=unpack, MARGIN=self.margin, HEX=self.state.hexagonal))
            for unpack in (False, True))

    def run(self, dt, call, hook=None):
        s, p = self.state, self.erosion.params
        uniforms = dict(erosion_uniforms(p, s.geometry, dt), **erode_uniforms(s.geometry, s.params.cell_size))
        for shape in dict.fromkeys(call.launches):
            for prog in set(self._layout(shape)[1]):
                _gl.set_uniforms(prog, **uniforms)
        for prog in (self.erosion_pack, self.erosion_unpack):
            _gl.set_uniforms(prog, u_size=s.size)
        self.erosion.bedrock.use(_gl.BINDINGS["B_BEDROCK"])      # the hex pack's and the square launches'
        super().run(dt, call, hook)

    def _pack(self, state: int = 0, run=None):
        super()._pack(state, run)
        b, s, e = _gl.BINDINGS, self.state, self.erosion
        e.sediment.bind_to_image(b["B_SEDIMENT"], read=True, write=False)
        e.owed.bind_to_image(b["B_TERRAIN_OWED"], read=True, write=False)
        if s.hexagonal:                 # the beds into the erosion state
            s.terrain.bind_to_image(b["B_TERRAIN"], read=True, write=False)
        self.eroding_states[state].bind_to_image(b["B_EROSION_OUT"], read=False, write=True)
        _gl.dispatch(self.ctx, self.erosion_pack, s.nx, s.ny)

    def _launch(self, k: int, shape, walled: bool):
        b, e = _gl.BINDINGS, self.erosion
        self.eroding_states[k % 2].bind_to_image(b["B_EROSION_IN"], read=True, write=False)
        self.eroding_states[1 - k % 2].bind_to_image(b["B_EROSION_OUT"], read=False, write=True)
        e.ledger.bind_to_storage_buffer(b["B_SEDIMENT_LEDGER"])
        super()._launch(k, shape, walled)

    def _unpack(self, launches: int, run=None):
        super()._unpack(launches, run)
        b, s, e = _gl.BINDINGS, self.state, self.erosion
        self.eroding_states[launches % 2].bind_to_image(b["B_EROSION_IN"], read=True, write=False)
        if not s.hexagonal:             # the beds, in the water's last state
            self.states[launches % 2].bind_to_image(b["B_EROSION_WATER"], read=True, write=False)
        e.sediment.bind_to_image(b["B_SEDIMENT"], read=False, write=True)
        e.owed.bind_to_image(b["B_TERRAIN_OWED"], read=False, write=True)
        s.terrain.bind_to_image(b["B_TERRAIN"], read=False, write=True)
        _gl.dispatch(self.ctx, self.erosion_unpack, s.nx, s.ny)
        s.terrain.bind_to_image(b["B_TERRAIN"], read=True, write=False)


KERNEL_CLASSES = {cls.name: cls for cls in (CellWise, Fused, Blocked)}
