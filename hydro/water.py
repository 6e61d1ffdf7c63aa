"""WaterGrid: virtual-pipes shallow water over a terrain heightmap, as GLSL compute passes.

A substep is three passes, each a shader file named after the method that dispatches it
(shaders/water/): `_accelerate` (surface-height differences accelerate the flow in every pipe, friction
(1 - f)^dt, boundary faces re-imposed), `_scale_outflow` (no cell sends out more than it holds; Mei et
al. 2007) and `_move` (columns change by the net flow; flux form, so water is conserved). On GPUs
`_step_fused` does the same arithmetic in one dispatch per substep (step_fused.comp: a shared-memory
tile with a two-cell halo, the move applied lazily), which moves half the bytes; in calls of
PACKED_MIN_SUBSTEPS substeps and more `_step_packed` does it on a packed copy of the state, one rgba32f
texel per cell (step_packed.comp, the same tile kernel on texels GL moves at twice the rate, two
substeps a launch, interior tiles of grids from 512^2 through a program of their own, which on square
grids from STREAM_MIN_CELLS climbs each tile a row at a time, step_stream.comp; pack.comp packs it at
the start of the call and unpacks it at the end). On CPU rasterisers the cell-wise step does it in two
passes over the cells (`_accelerate_cells`: each cell accelerates all its faces and works out its
outflow scale; `_scale_and_move`: each cell scales its faces and moves its column), each invocation
walking a column of CELL_ROWS cells, with the boundary faces handled apart before and after
(`_boundary_faces`); llvmpipe runs it 1.5-2x as fast as the three passes (fewer, longer invocations; no
barriers; cheap image loads instead of storage-buffer loads where it can, the input flows too, through
r32f buffer-texture views of their buffers, _gl.BufferViews: 1.2x more at 256^2). Water and terrain are
r32f images a game can sample; flows are storage buffers, one signed value per face. `step(dt)` splits
dt into substeps from the exact stability bound (hydro.params.stable), records them all without reading
anything back, then queues a GPU reduction of the volume and deepest water for the next call to plan
from. The next call takes it from a fenced, persistently mapped ring (_gl.FencedReadback) when the GPU
has finished it, else the one before (with a wider margin), so a game loop does not wait for the GPU to
drain: a buffer read waits for every queued pass, and the CPU and the GPU would take turns
(docs/benchmarks.md). After an edit it waits.

The NumPy float64 twin of every pass is hydro.reference.water; tests hold the two together.
"""
from __future__ import annotations

import math

import numpy as np

from . import _gl
from . import _validate as check
from . import boundary as bnd
from .params import Geometry, WaterParams, max_stable_dt, stable, stable_face_depth
from .reference import water as ref

STATS_DTYPE = np.dtype([("depth_sum", "<f8"), ("max_depth", "<f4"), ("min_terrain", "<f4")])
AUTO_SAFETY = 0.9          # automatic substeps stay this far inside the stable limit
DEPTH_MARGIN = 1.25        # deepest water may grow this much during one step() call
MAX_CHUNK = 64             # automatic substeps between two re-measurements of the deepest water
MAX_SUBSTEPS = 100_000     # per step() call; more means dt is far too large for the grid
# Step implementation, by what measured fastest (docs/benchmarks.md): 1 = the fused tile kernels
# (step_fused.comp; step_packed.comp in calls of PACKED_MIN_SUBSTEPS and more) on GPUs, 2 = the
# cell-wise step on CPU rasterisers (llvmpipe); 3 = accelerate, scale_outflow, move, one dispatch each.
AUTO_PASSES = {"gpu": 1, "cpu": 2}
CELL_ROWS = 16             # cells one invocation of the cell-wise passes (passes=2) walks up a column
# The tile kernel (step_fused.comp): cells per tile (x, y) and invocations per workgroup, by lattice;
# measured best on the H200 (docs/benchmarks.md) on grids of MIN_TILES such tiles and more: one
# invocation per cell of the tile grown by its two-cell halo (32 x 32 and 32 x 16), so every phase of
# the kernel is one round; 6 % (square) and 11-14 % (hex) faster than the 32x32/1024 and 32x16/512
# tiles, whose halo took two rounds, and ahead of 16x16/256, 16x32/512, 32x32/512, 24x24/576,
# 30x30/1024 and 64x16/256. Smaller grids (384^2 and below) take SMALL_TILE, whose more workgroups fill
# the GPU, also one round a phase (16 x 16 cells with the halo): 6.5 against 8.6-9.4 us a substep at
# 256^2 for the 16x16/256 tile before it (hex 8.1-8.3 against 9.6-9.8)
FUSED_TILE = {"square": (28, 28, 1024), "hex": (28, 12, 512)}
SMALL_TILE = (12, 12, 256)
MIN_TILES = 256
# The tile kernel on the packed state (step_packed.comp), measured best on the H200
# (docs/benchmarks.md): PACKED_SHAPE (cells x, cells y, substeps a launch), one invocation per texel of
# the tile and its halo of two cells a substep: 24 x 24 cells advanced two substeps a launch by 32 x 32
# invocations, 17-20 % faster a substep at 4096^2 than the best single-substep tiles (12 x 12, hex
# 12 x 28; ahead of 28x12, 28x28, 28x4, 60x4, 12x4 and 4x4) and ahead of 8x8, 12x12, 16x16, 20x20,
# 24x8, 8x24, 28x20, 20x28, 40x12, 56x8 and 24x20 tiles of two substeps and 8x8, 12x12, 16x16, 20x20 and
# 24x16 of three (rechecked after faces were scaled in place: ahead of 28x20, 20x28, 16x16 and 24x16x3).
# PACKED_TILE: the tile of launches of one substep (a call's odd substep). A call
# packs the grid into the state and unpacks it (pack.comp), about 350 us at 4096^2, so calls of
# PACKED_MIN_SUBSTEPS substeps and more take it: in calls of 2 it is 13 % (hex 15 %) faster than
# step_fused.comp at 4096^2 and level at 512^2; in calls of 1, 14 % (6 %) slower at 4096^2.
PACKED_SHAPE = {"square": (24, 24, 2), "hex": (24, 24, 2)}
PACKED_TILE = {"square": (12, 12), "hex": (12, 28)}
PACKED_MIN_SUBSTEPS = 2
RING_ROW = 4096            # workgroups per row of the packed kernel's ring dispatch
# Grids of this many cells and more run the packed kernel's interior tiles through a program without
# boundary tests and the ring of tiles around them through the general one (two dispatches a
# launch, the ring first); smaller ones all tiles through the general one, where the second dispatch
# costs more than it saves (H200, 2026-12-04 15:15 UTC, PACKED_SHAPE, us a substep in two dispatches
# against one: square 256^2 5.5 against 5.0, 512^2 6.5 against 8.2, 1024^2 14.1 against 20.0; hex
# 256^2 7.1 against 6.5, 512^2 8.8 against 12.7, 1024^2 20.5 against 35.8)
SPLIT_MIN_CELLS = {"square": 512 * 512, "hex": 512 * 512}
# Square grids of this many cells and more run the interior tiles of PACKED_SHAPE's launches through
# step_stream.comp, whose workgroup (one row of the tile with its halo) climbs the tile a row at a
# time, in place of step_packed.comp's interior program: it works out no halo row and holds rows in
# registers (H200, 2026-12-04 18:00 UTC, us a substep against the tile program in one run: 4096^2
# 130.8 against 161.2, 2048^2 40.0 against 44.6, 1536^2 27.1 against 28.2; 1024^2 14.4 against 13.4,
# where its 32-invocation workgroups leave the GPU too little to do). None: no such kernel (hex).
STREAM_MIN_CELLS = {"square": 1536 * 1536, "hex": None}
# its loops unrolled (constant trip counts) on GPUs, plain on CPU rasterisers (2.5x faster on llvmpipe)
UNROLLED_TILE_LOOPS = {"gpu": True, "cpu": False}
# The volume / deepest-water reduction's first pass (stats.comp), by device: 0 = one record per tile,
# reduced in shared memory (GPUs); n = one record per invocation walking n cells (CPU rasterisers,
# where barriers are dear: 256^2 on llvmpipe, 3.5 ms with tiles).
STATS_ROWS = {"gpu": 0, "cpu": 16}
STATS_RECORDS = 4096       # GPUs: at most this many tile records for stats_final.comp's one workgroup
# The cell-wise passes read the flows through r32f buffer-texture views (_gl.BufferViews) where that
# measured faster: llvmpipe, 256^2 square, docs/benchmarks.md (storage buffers on GPUs)
BUFFER_VIEWS = {"gpu": False, "cpu": True}
# boundary_faces.comp's programs by (book, accelerate)
BOUNDARY_PROGRAMS = {(False, True): "boundary_accelerate", (True, False): "boundary_book",
                     (True, True): "boundary_book_accelerate"}


def _check_passes(passes, alternatives=""):
    if isinstance(passes, bool) or not isinstance(passes, int) or passes not in (1, 2, 3):
        raise ValueError(f"passes: expected 1 (fused), 2 (cell-wise), 3 (accelerate, scale_outflow, move)"
                         f"{' ' + alternatives if alternatives else ''}, got {passes!r}")
    return passes


class _PipeGrid(_gl.Simulation):
    """The pipe network on the GPU; WaterGrid (square) and HexWaterGrid (triangular) set the lattice."""

    _hexagonal = False
    _kind = "WaterGrid"

    def __init__(self, ctx, terrain, cell_size=1.0, gravity=9.81, friction=0.02, *, pipe_area="depth",
                 water=None, passes=None):
        self._released = True                     # until every resource exists
        self.params = WaterParams(cell_size, gravity, friction, pipe_area)
        terrain = check.field("terrain", terrain)
        if terrain.ndim != 2 or min(terrain.shape) < 2:
            raise ValueError(f"terrain: expected a 2D array (ny, nx) with ny, nx >= 2, got shape {terrain.shape}")
        self.ny, self.nx = terrain.shape
        water = (np.zeros_like(terrain) if water is None
                 else check.field("water", water, terrain.shape, nonnegative=True))
        if passes is not None:
            _check_passes(passes, "or None")
        owns_ctx = ctx is None
        if not owns_ctx:
            _gl.require_compute(ctx)
        ctx = _gl.create_context() if owns_ctx else ctx
        self.ctx, self._owns_ctx = ctx, owns_ctx
        try:
            self._create(terrain, water, passes)
        except BaseException:
            self._release_partial()
            raise

    def _check_limits(self):
        """Raise, before any GPU work, where the context cannot hold this grid: the packed state is a
        texture of (nx + 1) x (ny + 1) texels and each flow a storage buffer of 4 (nx + 1)(ny + 1) bytes
        at most; beyond GL_MAX_TEXTURE_SIZE or GL_MAX_SHADER_STORAGE_BLOCK_SIZE the driver would give
        garbage, not an error."""
        info = self.ctx.info
        side = info.get("GL_MAX_TEXTURE_SIZE") or 0
        block = info.get("GL_MAX_SHADER_STORAGE_BLOCK_SIZE") or 0
        need_side = max(self.nx, self.ny) + 1
        need_block = 4 * (self.nx + 1) * (self.ny + 1)
        if side and need_side > side:
            raise ValueError(f"terrain: shape {(self.ny, self.nx)} is too large for this context: its textures "
                             f"need {need_side} texels a side and GL_MAX_TEXTURE_SIZE is {side}; expected ny, nx "
                             f"<= {side - 1}")
        if block and need_block > block:
            raise ValueError(f"terrain: shape {(self.ny, self.nx)} is too large for this context: a flow buffer "
                             f"needs {need_block} bytes and GL_MAX_SHADER_STORAGE_BLOCK_SIZE is {block}; expected "
                             f"(nx + 1) * (ny + 1) <= {block // 4}")

    def _create(self, terrain, water, passes):
        """Compile (or fetch) the programs and make every GPU resource; on failure the caller frees
        whatever exists so far."""
        ctx = self.ctx
        self._check_limits()
        self.geometry = (Geometry.hexagonal if self._hexagonal else Geometry.square)(self.params.cell_size)
        self._layout = bnd.layout(self.nx, self.ny, self._hexagonal)
        self._table = bnd.new_table(self._layout)
        self._note_boundary_bounds()
        device = _gl.device_kind(ctx)
        self._passes = AUTO_PASSES[device] if passes is None else passes    # measured: docs/benchmarks.md
        self._stats_rows = STATS_ROWS[device]
        self._unrolled = UNROLLED_TILE_LOOPS[device]
        hexa = {"HEX": self._hexagonal}
        pipes = {**hexa, "PIPE_AREA_DEPTH": self.params.depth_area}
        self._pipe_defines = pipes                  # the tile kernels, compiled later
        self._programs = {key: _gl.program(ctx, f"water/{name}.comp", defs) for key, name, defs in (
            ("accelerate", "accelerate", pipes), ("scale_outflow", "scale_outflow", hexa),
            ("move", "move", {**hexa, "SEPARATE_OUTPUT": False}),
            ("settle", "move", {**hexa, "SEPARATE_OUTPUT": True}),
            ("dig", "dig", {}), ("add_water", "add_water", {}), ("remove_water", "remove_water", {}),
            ("boundary_accelerate", "boundary_faces", {**pipes, "BOOK": False, "ACCELERATE": True}),
            ("boundary_book", "boundary_faces", {**pipes, "BOOK": True, "ACCELERATE": False}),
            ("boundary_book_accelerate", "boundary_faces", {**pipes, "BOOK": True, "ACCELERATE": True}),
            ("stats", "stats", {"STATS_ROWS": self._stats_rows}), ("stats_final", "stats_final", {}))}

        size = (self.nx, self.ny)
        self.terrain_texture = ctx.texture(size, 1, terrain.tobytes(), dtype="f4")
        self.water_texture = ctx.texture(size, 1, water.tobytes(), dtype="f4")
        # the fused step ping-pongs depth through two scratch textures, then settles into water_texture
        self._scratch = [ctx.texture(size, 1, dtype="f4") for _ in range(2)]
        # the cell-wise step passes each cell's outflow scale from its first cell pass to the second
        self._outflow_scale = ctx.texture(size, 1, dtype="f4")
        for tex in (self.terrain_texture, self.water_texture, *self._scratch, self._outflow_scale):
            tex.repeat_x = tex.repeat_y = False
        self._flow_shapes = [(self.ny, self.nx + 1), (self.ny + 1, self.nx)]
        if self._hexagonal:
            self._flow_shapes.append((self.ny + 1, self.nx + 1))
        self._flows = [ctx.buffer(reserve=4 * a * b) for a, b in self._flow_shapes]
        self._flows_tmp = [ctx.buffer(reserve=4 * a * b) for a, b in self._flow_shapes]
        for buf in self._flows + self._flows_tmp:
            buf.clear()
        self._views = (_gl.BufferViews.create(ctx, self._flows + self._flows_tmp, _gl.BINDINGS["B_FLOW_Z_TMP_VIEW"] + 1)
                       if BUFFER_VIEWS[device] else None)
        views = {"BUFFER_VIEWS": self._views is not None, "CELL_ROWS": CELL_ROWS}
        self._programs["accelerate_cells"] = _gl.program(ctx, "water/accelerate_cells.comp", {**pipes, **views})
        self._programs["scale_and_move"] = _gl.program(ctx, "water/scale_and_move.comp", {**hexa, **views})
        self._boundary = ctx.buffer(self._table.tobytes())
        lay = self._layout                            # the cell-wise step's boundary passes find faces here
        self._places = ctx.buffer(np.stack([lay.array, lay.i, lay.j], axis=1).astype("<i4").tobytes())
        self._drain_slot = self._layout.size          # the ledger's last slot: volume taken by drains
        self._ledger_faces = ctx.buffer(reserve=8 * (self._layout.size + 1))
        self._ledger_faces.clear()
        self._state = []                            # the packed kernel's two states, made on first use
        self._booked = None                         # and its booked boundary flows
        tile = FUSED_TILE[self._lattice]
        if -(-self.nx // tile[0]) * -(-self.ny // tile[1]) < MIN_TILES:
            tile = SMALL_TILE
        self._compile_tile(tile)
        # the tile kernel on the packed state: for calls of PACKED_MIN_SUBSTEPS and more (None), in
        # every call (True) or none (False); its tile; its programs and states are made on first use
        self._packed_use = None
        shape = PACKED_SHAPE[self._lattice]
        self._packed_tile, self._packed_steps = shape[:2], shape[2]
        self._packed_ready = False
        # GPUs: each workgroup walks up enough tiles that the records stay at most STATS_RECORDS
        tiles_x, tiles_y = -(-self.nx // _gl.LOCAL_SIZE), -(-self.ny // _gl.LOCAL_SIZE)
        self._stats_walk = 1
        while not self._stats_rows and tiles_x * -(-tiles_y // self._stats_walk) > STATS_RECORDS:
            self._stats_walk *= 2
        rows = _gl.LOCAL_SIZE * (self._stats_rows or self._stats_walk)
        self._stats_groups = (tiles_x, -(-self.ny // rows))
        groups = self._stats_groups[0] * self._stats_groups[1]
        self._tiles = groups * (_gl.LOCAL_SIZE ** 2 if self._stats_rows else 1)      # partial records
        self._partials = ctx.buffer(reserve=STATS_DTYPE.itemsize * self._tiles)
        self._stats_buffer = ctx.buffer(reserve=STATS_DTYPE.itemsize)
        self._brush_buffer = None                   # a brush's weights (_run_brush), made on first use
        # step() plans from the stats of earlier calls without waiting for the GPU (None: it reads them)
        self._readback = _gl.FencedReadback.create(ctx, STATS_DTYPE.itemsize)
        self._stats_seq = 0                         # stats reductions queued so far
        self._sync_next = True                      # an edit since: the next step() reads the stats afresh
        self._released = False

        self._sim_time = 0.0
        self._iteration = 0                         # substeps advanced so far
        self._ledger_totals = {"inflow": 0.0, "outflow": 0.0, "level": 0.0}
        self._ledger_edits = {"brushes": 0.0, "drains": 0.0, "assigned": 0.0}
        self._queue_stats()
        self._initial_volume = self._read_stats()["volume"]
        self._seal()

    @property
    def passes(self) -> int:
        """The substep implementation step() runs: 1 the fused tile kernel, 2 the cell-wise passes, 3
        accelerate, scale_outflow and move (the same result; passes=None at creation takes the fastest
        for the device, docs/benchmarks.md). Settable between steps."""
        return self._passes

    @passes.setter
    def passes(self, value):
        self._passes = _check_passes(value)

    # ------------------------------------------------------------------------------------ state access

    @property
    def shape(self) -> tuple[int, int]:
        """(ny, nx): the shape of terrain, water and every per-cell array."""
        return (self.ny, self.nx)

    @property
    def water(self) -> np.ndarray:
        """Water depth (ny, nx), world units; a NumPy copy."""
        self._alive()
        return np.frombuffer(self.water_texture.read(), np.float32).reshape(self.shape).copy()

    @water.setter
    def water(self, depth):
        self._alive()
        depth = check.field("water", depth, self.shape, nonnegative=True)
        old = self._read_stats()["volume"]
        self.water_texture.write(depth.tobytes())
        self._ledger_edits["assigned"] += float(depth.astype(np.float64).sum()) * self.geometry.cell_area - old
        self._queue_stats()

    @property
    def terrain(self) -> np.ndarray:
        """Terrain height (ny, nx), world units; a NumPy copy."""
        self._alive()
        return np.frombuffer(self.terrain_texture.read(), np.float32).reshape(self.shape).copy()

    @terrain.setter
    def terrain(self, height):
        self._alive()
        height = check.field("terrain", height, self.shape)
        self.terrain_texture.write(height.tobytes())
        self._queue_stats()

    def _flow(self, k):
        self._alive()
        return np.frombuffer(self._flows[k].read(), np.float32).reshape(self._flow_shapes[k]).copy()

    @property
    def flow_x(self) -> np.ndarray:
        """Signed flow (ny, nx+1), volume/s, from cell [y, x-1] to [y, x]; a NumPy copy."""
        return self._flow(0)

    @property
    def flow_y(self) -> np.ndarray:
        """Signed flow (ny+1, nx), volume/s, from cell [y-1, x] to [y, x]; a NumPy copy."""
        return self._flow(1)

    @flow_x.setter
    def flow_x(self, flow):
        self._set_flow(0, "flow_x", flow)

    @flow_y.setter
    def flow_y(self, flow):
        self._set_flow(1, "flow_y", flow)

    def _set_flow(self, k, name, flow):
        """Flows are state too (a saved game restores them); they move water only through step()."""
        self._alive()
        flow = check.field(name, flow, self._flow_shapes[k])
        self._flows[k].write(flow.tobytes())

    @property
    def flow_buffers(self) -> tuple:
        """The storage buffers holding flow_x, flow_y (hex: flow_z) now, float32 row-major, for a game's
        shaders. The grid swaps buffers as it steps: fetch them after each step(), do not keep them."""
        self._alive()
        return tuple(self._flows)

    @property
    def surface(self) -> np.ndarray:
        """Water surface height terrain + water (ny, nx)."""
        return self.terrain.astype(np.float64) + self.water

    def volume(self) -> float:
        """Total water volume (depth * cell area), world units^3, reduced on the GPU in fp64. Waits for
        the GPU to finish the work queued so far (a HUD can call it once a frame)."""
        self._alive()
        self._queue_stats(edit=False)
        return self._read_stats()["volume"]

    def ledger(self) -> dict:
        """Where the water came from: the start volume, what crossed each kind of boundary (+ in,
        - out), what brushes and assignments added; `expected` is their sum, which volume() matches
        to float precision."""
        self._alive()
        totals, drains = self._ledger_by_kind(np.frombuffer(self._ledger_faces.read(), np.float64))
        for kind, volume in self._ledger_totals.items():
            totals[kind] += volume
        edits = dict(self._ledger_edits)
        edits["drains"] += drains
        out = {"initial": self._initial_volume, **totals, **edits}
        out["expected"] = math.fsum(out.values())
        return out

    # ------------------------------------------------------------------------------------- boundaries

    def set_boundary(self, side, kind, value=0.0, span=None) -> None:
        """Set what happens at one side of the grid, or at `span=(first, stop)` cells along it.

        side: "left" | "right" | "bottom" | "top".
        kind: "wall" (no flow; value unused), "inflow" / "outflow" (value = total discharge through
        the span in volume/s, spread evenly over its faces; inflow is exact, outflow is limited by the
        water present), "level" (value = height of an outside water surface, e.g. a sea).
        """
        self._alive()
        table = bnd.with_boundary(self._table, self._layout, side, kind, value, span)
        self._fold_ledger()
        self._table = table
        self._boundary.write(table.tobytes())
        self._note_boundary_bounds()

    @property
    def boundaries(self) -> dict:
        """Per side, runs of (kind, first cell, stop cell, value) as set_boundary takes them: the
        discharge of the run for inflow/outflow, the outside surface for level."""
        self._alive()
        return bnd.describe(self._table, self._layout)

    def _note_boundary_bounds(self):
        """What the boundaries add to the stable-substep bound, worked out once per set_boundary."""
        self._max_cell_inflow = bnd.max_cell_inflow(self._table, self._layout, self.nx, self.ny)
        level = self._table["value"][self._table["kind"] == bnd.KINDS["level"]]
        self._max_level = float(level.max()) if level.size else None

    def _ledger_by_kind(self, slots):
        """Per-face fp64 ledger slots -> volume per boundary kind (+ into the grid), and the drains."""
        faces, kinds = slots[:self._drain_slot], self._table["kind"]
        totals = {kind: float(faces[kinds == code].sum()) for kind, code in bnd.KINDS.items() if kind != "wall"}
        return totals, float(slots[self._drain_slot])

    def _fold_ledger(self):
        """Move the per-face ledger into per-kind totals before the kinds change."""
        totals, drains = self._ledger_by_kind(np.frombuffer(self._ledger_faces.read(), np.float64))
        for kind, volume in totals.items():
            self._ledger_totals[kind] += volume
        self._ledger_edits["drains"] += drains
        self._ledger_faces.clear()

    # ---------------------------------------------------------------------------------------- brushes

    def _brush(self, x, y, radius, normalise: bool):
        """The box of cells (x0, y0, width, height) a brush touches and its float32 weights there
        (hydro.reference.water.brush_box; scaled to sum to about 1 where `normalise`), with the
        float64 sum of those float32 weights. Raises if it touches no cell."""
        x, y = check.real32("x", x), check.real32("y", y)
        radius = check.real32("radius", radius, low=0.0, low_open=True)
        box = ref.brush_box((self.ny, self.nx), x, y, radius, self._hexagonal)
        if box is None:
            raise ValueError(f"x, y: a brush of radius {radius} at ({x}, {y}) reaches no cell of the "
                             f"{self.nx} x {self.ny} grid: its centre is off the grid (cells are at "
                             f"x = 0 .. {self.nx - 1}, y = 0 .. {self.ny - 1}) and it reaches no cell "
                             f"centre")
        x0, y0, weights = box
        if normalise:
            weights = weights / weights.sum()
        weights = weights.astype(np.float32)
        return (x0, y0, weights.shape[1], weights.shape[0]), weights, float(weights.sum(dtype=np.float64))

    def _run_brush(self, name, box, weights, **uniforms):
        """Dispatch brush pass `name` over its box with its weights: one invocation per cell, or for
        remove_water one workgroup that walks the box and books what it took."""
        x0, y0, w, h = box
        data = weights.tobytes()
        if self._brush_buffer is None:
            self._brush_buffer = self.ctx.buffer(data)
        else:                         # a fresh store: a pass still reading the last brush keeps its own
            self._brush_buffer.orphan(len(data))
            self._brush_buffer.write(data)
        self._brush_buffer.bind_to_storage_buffer(_gl.BINDINGS["B_BRUSH"])
        prog = self._programs[name]
        _gl.set_uniforms(prog, u_size=(self.nx, self.ny), u_origin=(x0, y0), u_box=(w, h), **uniforms)
        tex = self.terrain_texture if name == "dig" else self.water_texture
        tex.bind_to_image(_gl.BINDINGS["B_TERRAIN" if name == "dig" else "B_WATER"], read=True, write=True)
        if name == "remove_water":
            self._ledger_faces.bind_to_storage_buffer(_gl.BINDINGS["B_LEDGER"])
            prog.run(1, 1, 1)
            self.ctx.memory_barrier()
        else:
            _gl.dispatch(self.ctx, prog, w, h)

    def dig(self, x, y, radius, depth) -> None:
        """Lower the terrain by `depth` (world units) at the centre of a smooth round brush of `radius`
        cells around grid point (x, y); a negative depth raises it. Water depth is kept. Grid point
        (x, y) is the centre of cell [y, x] (world ((x + 0.5) * cell_size, (y + 0.5) * cell_size) on
        the square grid, hydro.hex.grid_to_world on the hex lattice); radius is in cells (lattice
        spacings). A brush that reaches no cell centre acts on the cell nearest (x, y) with weight 1."""
        self._alive()
        box, weights, _ = self._brush(x, y, radius, normalise=False)
        depth = check.real32("depth", depth)
        self._run_brush("dig", box, weights, u_depth=depth)
        self._queue_stats()

    def add_water(self, x, y, radius, volume) -> None:
        """Add exactly `volume` (world units^3, >= 0; to float32 rounding) of water under a smooth
        round brush of `radius` cells around grid point (x, y) (as dig); a brush that reaches no cell
        centre puts it all in the cell nearest (x, y)."""
        self._alive()
        box, weights, total = self._brush(x, y, radius, normalise=True)
        volume = check.real32("volume", volume, low=0.0)
        amount = check.real32("volume", volume / (total * self.geometry.cell_area))   # a float32 depth
        self._run_brush("add_water", box, weights, u_amount=amount)
        self._ledger_edits["brushes"] += volume
        self._queue_stats()

    def remove_water(self, x, y, radius, volume) -> None:
        """Take up to `volume` (world units^3, >= 0) of water under a smooth round brush of `radius`
        cells around grid point (x, y), as add_water (a drain).
        Cells give at most what they hold, so less may be taken; what was taken is booked in the
        ledger under "drains" on the GPU, without reading anything back."""
        self._alive()
        box, weights, total = self._brush(x, y, radius, normalise=True)
        volume = check.real32("volume", volume, low=0.0)
        amount = check.real32("volume", volume / (total * self.geometry.cell_area))
        self._run_brush("remove_water", box, weights, u_amount=amount, u_slot=self._drain_slot,
                        u_cell_area=self.geometry.cell_area)
        self._queue_stats()

    # --------------------------------------------------------------------------------------- stepping

    def _coupling(self, stats, dt, margin=1.0) -> float:
        """Upper bound of K/S = g A / (l S) over every pipe during the coming `dt`, the deepest water
        taken `margin` times deeper than measured."""
        p, geo = self.params, self.geometry
        if not p.depth_area:
            return p.gravity * float(p.pipe_area) / (geo.pipe_length * geo.cell_area)
        depth = stats["max_depth"] * margin
        # water an inflow can pile into one cell during dt
        depth += self._max_cell_inflow * dt / geo.cell_area
        if self._max_level is not None:   # a level face's pipe: the outside surface over the lowest edge bed
            depth = max(depth, self._max_level - stats["min_terrain"])
        return p.gravity * depth * geo.face_width / (geo.pipe_length * geo.cell_area)

    def _auto_substeps(self, stats, dt, lag=0) -> int:
        """Substeps for `dt` from stats `lag` step() calls older than the previous call's end: the
        deepest water may have grown by DEPTH_MARGIN in each of those calls and in this one."""
        margin = DEPTH_MARGIN ** (1 + lag)
        limit = AUTO_SAFETY * max_stable_dt(self._coupling(stats, dt, margin), self.geometry, self.params)
        return max(1, math.ceil(dt / limit - 1e-9))

    def max_stable_dt(self) -> float:
        """The largest stable substep for the water as it is now (seconds; inf when dry)."""
        self._alive()
        return max_stable_dt(self._coupling(self._read_stats(), 0.0), self.geometry, self.params)

    def step(self, dt, substeps=None) -> int:
        """Advance the simulation by `dt` seconds; returns the number of substeps taken.

        Without `substeps`, stable substeps are chosen from the exact bound (hydro.params.stable) for the
        deepest water (measured on the GPU at the end of the previous call, with a margin; if the GPU is
        still busy with that call, at the end of the one before, with the margin widened for two calls;
        after an edit, as it is now; re-measured every hydro.water.MAX_CHUNK (64) substeps of a long call).
        With `substeps`, dt/substeps must be stable for the water so measured, or ValueError is raised
        before anything runs. Either way a pipe that gets deeper during the call than its substep is stable
        for is treated as that deep (params.stable_face_depth), so the step never goes unstable.
        """
        self._alive()
        dt = check.real32("dt", dt, low=0.0, low_open=True)
        stats, lag = self._planning_stats()
        if substeps is not None:
            substeps = check.integer("substeps", substeps, low=1, high=MAX_SUBSTEPS)
            h = dt / substeps
            coupling = self._coupling(stats, dt)
            if not stable(h, coupling, self.geometry, self.params):
                limit = max_stable_dt(coupling, self.geometry, self.params)
                raise ValueError(f"substeps: dt/substeps = {h:.4g} s is beyond the stable limit {limit:.4g} s for "
                                 f"the deepest water now; use substeps >= {math.ceil(dt / limit)} or omit substeps")
            self._run_substeps(h, substeps)
            done = substeps
        else:
            n = self._auto_substeps(stats, dt, lag)
            if n > MAX_SUBSTEPS:                      # decided before anything runs
                raise ValueError(f"dt: {dt} s needs {n} substeps on this grid, more than {MAX_SUBSTEPS}; "
                                 f"call step() more often with a smaller dt")
            done, remaining = 0, dt
            while True:
                h = remaining / n
                chunk = min(n, MAX_CHUNK)
                self._run_substeps(h, chunk)
                done += chunk
                if chunk == n:
                    break
                remaining -= h * chunk
                self._queue_stats(edit=False)
                # re-plan for the water as it is now; past the cap the depth cap keeps longer substeps stable
                n = max(1, min(self._auto_substeps(self._read_stats(), remaining), MAX_SUBSTEPS - done))
        self._sim_time += dt
        self._queue_stats(edit=False)
        return done

    def _bind_step(self):
        self.terrain_texture.bind_to_image(_gl.BINDINGS["B_TERRAIN"], read=True, write=False)
        self.water_texture.bind_to_image(_gl.BINDINGS["B_WATER"], read=True, write=True)
        self._bind_flows()
        self._boundary.bind_to_storage_buffer(_gl.BINDINGS["B_BOUNDARY"])
        self._ledger_faces.bind_to_storage_buffer(_gl.BINDINGS["B_LEDGER"])

    @property
    def _lattice(self) -> str:
        return "hex" if self._hexagonal else "square"

    @property
    def _packed(self):
        """When passes=1 takes the tile kernel on the packed state (step_packed.comp) in place of
        step_fused.comp: None for calls of PACKED_MIN_SUBSTEPS substeps and more, False for no call,
        or its (cells x, cells y, substeps a launch) when it runs in every call; the same result to
        the bit. Set None, False, True (every call, PACKED_SHAPE's) or a shape (cells x, cells y, substeps
        a launch) for every call; (cells x, cells y) means one substep a launch. A call's remainder
        (n % substeps a launch) runs one substep a launch on PACKED_TILE's tile whatever the shape."""
        return (*self._packed_tile, self._packed_steps) if self._packed_use else self._packed_use

    @_packed.setter
    def _packed(self, on) -> None:
        self._alive()
        default = PACKED_SHAPE[self._lattice]
        if on is None or isinstance(on, bool):
            shape = default
        else:
            shape = tuple(on) if isinstance(on, (tuple, list)) else ()
            if len(shape) == 2:
                shape = (*shape, 1)
            if not (len(shape) == 3 and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1
                                            for v in shape)
                    and (shape[0] + 4 * shape[2]) * (shape[1] + 4 * shape[2]) <= 1024):
                raise ValueError(f"_packed: expected None, True, False, (cells x, cells y) or (cells x, cells y, "
                                 f"substeps a launch), positive ints with (x + 4 s) * (y + 4 s) <= 1024, got {on!r}")
            shape = tuple(int(v) for v in shape)
        if shape != (*self._packed_tile, self._packed_steps):
            self._packed_tile, self._packed_steps, self._packed_ready = shape[:2], shape[2], False
        self._packed_use = True if on is not None and not isinstance(on, bool) else on

    def _takes_packed(self, n: int) -> bool:
        """Whether a call of n substeps (passes=1) runs step_packed.comp."""
        return self._packed_use if self._packed_use is not None else n >= PACKED_MIN_SUBSTEPS

    def _ready_packed(self, n: int) -> None:
        """The packed kernel's states, its booked boundary flows (_packed_steps slots a boundary
        face) and the programs a call of n substeps runs (interior tiles, the ring around them; each
        in two directions) with where their tiles lie: those that advance _packed_steps substeps a
        launch and, for a call's remainder, those that advance one, made on first use."""
        if not self._packed_ready:
            if not self._state:   # (depth, flow_x, flow_y, bed or flow_z) per cell and outer face, twice
                self._state = [self.ctx.texture((self.nx + 1, self.ny + 1), 4, dtype="f4") for _ in range(2)]
            # what the ring's owners of boundary faces book at each substep of a launch, a slot each,
            # until the next launch or the unpack adds it to the ledger (common/booked.glsl); zeros
            # between calls
            if self._booked is not None:
                self._booked.release()
            self._booked = self.ctx.buffer(reserve=4 * self._packed_steps * self._layout.size)
            self._booked.clear()
            hexa = {"HEX": self._hexagonal}
            for key, defs in (("pack", {**hexa, "UNPACK": False}),
                              ("unpack", {**hexa, "UNPACK": True, "BOOK_SLOTS": self._packed_steps})):
                self._programs[key] = _gl.program(self.ctx, "water/pack.comp", defs)
            self._packed_sets = {self._packed_steps: self._packed_set(self._packed_tile, self._packed_steps)}
            self._packed_ready = True
        if n % self._packed_steps and 1 not in self._packed_sets:
            self._packed_sets[1] = self._packed_set(PACKED_TILE[self._lattice], 1)

    def _packed_set(self, tile, steps: int) -> dict:
        """The packed kernel's four programs for tiles of tile = (cells x, cells y) advanced `steps`
        substeps a launch, and where their tiles lie."""
        tx, ty = tile
        halo = 2 * steps
        defines = {**self._pipe_defines, "TILE_X": tx, "TILE_Y": ty, "STEPS": steps,
                   "GROUP_X": tx + 2 * halo, "GROUP_Y": ty + 2 * halo}
        # tiles cover the texels (nx + 1, ny + 1); tile b is interior when its halo lies in the grid:
        # b * t >= halo and b * t + t + halo <= n
        tiles, first, last = [], [], []
        for n, t in ((self.nx, tx), (self.ny, ty)):
            tiles.append(-(-(n + 1) // t))
            first.append(-(-halo // t))
            last.append((n - t - halo) // t)
        small = self.nx * self.ny < SPLIT_MIN_CELLS[self._lattice]
        if small or last[0] < first[0] or last[1] < first[1]:      # no rectangle: the ring is every tile
            first, last = [0, tiles[1]], [-1, tiles[1] - 1]
        inner = (last[0] - first[0] + 1, last[1] - first[1] + 1)
        ring = tiles[0] * tiles[1] - max(inner[0], 0) * max(inner[1], 0)
        # the interior tiles climbed a row at a time (step_stream.comp) or settled at once
        least = STREAM_MIN_CELLS[self._lattice]
        climbs = (steps == self._packed_steps and least is not None and self.nx * self.ny >= least
                  and inner[0] > 0)
        if climbs:                      # one row of invocations a tile
            interior = ("water/step_stream.comp", {k: v for k, v in defines.items() if k != "GROUP_Y"})
        else:
            interior = ("water/step_packed.comp", {**defines, "INTERIOR": True})
        general = ("water/step_packed.comp", {**defines, "INTERIOR": False, "BOOK_SLOTS": self._packed_steps})
        programs = [[_gl.program(self.ctx, name, {**defs, "SWAPPED": swapped}) for swapped in (False, True)]
                    for name, defs in (general, interior)]
        return {"ring": programs[0], "interior": programs[1], "climbs": climbs,
                "ring_x": (tiles[0], first[0], last[0]), "ring_y": (first[1], last[1], ring),
                "first_tile": (first[0], first[1]), "inner": inner,
                "ring_groups": (min(ring, RING_ROW), -(-ring // RING_ROW))}

    @property
    def _packed_layout(self) -> dict:
        """Where the packed kernel's tiles lie (its launches of _packed_steps substeps)."""
        return self._packed_sets[self._packed_steps]

    @property
    def _tile(self):
        """The tile kernel's (cells in x, cells in y, invocations per workgroup): FUSED_TILE's for the
        lattice, SMALL_TILE on grids of fewer than MIN_TILES of those, unless a benchmark sets another.
        Every shape gives the same result to the bit."""
        return self._tile_shape

    @_tile.setter
    def _tile(self, shape) -> None:
        self._alive()
        ok = (isinstance(shape, tuple) and len(shape) == 3 and all(isinstance(v, int) and v >= 1 for v in shape)
              and shape[2] <= 1024)
        if not ok:
            raise ValueError(f"_tile: expected (cells x, cells y, invocations <= 1024), positive ints, got {shape!r}")
        self._compile_tile(shape)

    def _compile_tile(self, shape) -> None:
        tx, ty, threads = shape
        self._programs["step_fused"] = _gl.program(self.ctx, "water/step_fused.comp", {
            **self._pipe_defines, "TILE_X": tx, "TILE_Y": ty, "THREADS": threads, "UNROLLED": self._unrolled})
        self._tile_shape = (tx, ty, threads)

    def _set_step_uniforms(self, h: float, n: int = 1) -> None:
        """The uniforms of the passes this grid's step runs (passes, `_packed`) in a call
        of n substeps of h."""
        p, geo = self.params, self.geometry
        size = (self.nx, self.ny)
        packed = self.passes == 1 and self._takes_packed(n)
        if self.passes == 1:
            if packed:
                self._ready_packed(n)
                pipes, moves = [], []
                _gl.set_uniforms(self._programs["pack"], u_size=size)
                _gl.set_uniforms(self._programs["unpack"], u_size=size, u_dt=h)
            else:
                pipes, moves = ["step_fused"], ["settle"]
        elif self.passes == 2:
            pipes, moves = ["accelerate_cells", *BOUNDARY_PROGRAMS.values()], ["scale_and_move"]
        else:
            pipes, moves = ["accelerate"], ["scale_outflow", "move"]
        pipe = dict(u_size=size, u_dt=h, u_friction_factor=p.friction_factor(h),
                    u_g_over_l=p.gravity / geo.pipe_length, u_face_width=geo.face_width,
                    u_pipe_area=0.0 if p.depth_area else float(p.pipe_area), u_cell_area=geo.cell_area,
                    u_max_face_depth=stable_face_depth(h, geo, p))
        for key in pipes:
            _gl.set_uniforms(self._programs[key], **pipe)
        if packed:                      # the programs this call launches (a remainder: one substep each)
            runs = [self._packed_steps] + [1] * bool(n % self._packed_steps)
            for lay in (self._packed_sets[s] for s in runs):
                for prog in lay["ring"]:
                    _gl.set_uniforms(prog, **pipe, u_ring_x=lay["ring_x"], u_ring_y=lay["ring_y"])
                for prog in lay["interior"]:
                    _gl.set_uniforms(prog, **pipe, u_first_tile=lay["first_tile"])
        for key in moves:
            _gl.set_uniforms(self._programs[key], u_size=size, u_dt=h, u_cell_area=geo.cell_area)
        if self.passes == 2:
            for key in BOUNDARY_PROGRAMS.values():
                _gl.set_uniforms(self._programs[key], u_count=self._layout.size)

    def _run_substeps(self, h: float, n: int) -> None:
        """Record n substeps of length h, nothing read back: fused, cell-wise or three passes."""
        self._set_step_uniforms(h, n)
        self._bind_step()
        if self.passes == 1:
            if self._takes_packed(n):
                self._step_packed(n)
            else:
                self._step_fused(h, n)
        elif self.passes == 2:
            self._bind_cell_wise()
            self._boundary_faces(book=False, accelerate=True)
            for k in range(n):
                self._accelerate_cells()
                self._scale_and_move()
                self._boundary_faces(book=True, accelerate=k + 1 < n)
        else:
            for _ in range(n):
                self._accelerate()
                self._scale_outflow()
                self._move()
        self._iteration += n

    def _bind_flows(self):
        for name, buf, tmp in zip(("B_FLOW_X", "B_FLOW_Y", "B_FLOW_Z"), self._flows, self._flows_tmp):
            buf.bind_to_storage_buffer(_gl.BINDINGS[name])
            tmp.bind_to_storage_buffer(_gl.BINDINGS[name + "_TMP"])

    def _step_fused(self, h: float, n: int):
        """n fused substeps, depth ping-ponging through the scratch textures and flows by swapping
        buffers, then the pending move of the last substep settled into the water texture."""
        prog = self._programs["step_fused"]
        depth_in = self.water_texture
        for k in range(n):
            if k < 2:
                _gl.set_uniforms(prog, u_pending=k > 0)
            depth_out = self._scratch[k % 2]
            depth_in.bind_to_image(_gl.BINDINGS["B_WATER"], read=True, write=False)
            depth_out.bind_to_image(_gl.BINDINGS["B_OUT_IMAGE"], read=False, write=True)
            self._bind_flows()
            _gl.dispatch(self.ctx, prog, self.nx, self.ny, local=self._tile[:2])
            self._flows, self._flows_tmp = self._flows_tmp, self._flows
            depth_in = depth_out
        depth_in.bind_to_image(_gl.BINDINGS["B_WATER"], read=True, write=False)
        self.water_texture.bind_to_image(_gl.BINDINGS["B_OUT_IMAGE"], read=False, write=True)
        self._bind_flows()
        _gl.dispatch(self.ctx, self._programs["settle"], self.nx, self.ny)

    def _step_packed(self, n: int):
        """n substeps of the tile kernel on the packed state: pack the grid into state 0, launches
        alternate the two programs that read one state and write the other, each advancing
        _packed_steps substeps (the call's remainder one a launch; the ring's owners of boundary faces
        store what crossed them in _booked, and add what the launch before stored to the ledger),
        unpack the last state into the grid (its depth is settled: this kernel moves every substep)
        and the last launch's booked flows into the ledger."""
        b = _gl.BINDINGS
        self._state[0].bind_to_image(b["B_PACKED_OUT"], read=False, write=True)
        _gl.dispatch(self.ctx, self._programs["pack"], self.nx + 1, self.ny + 1)
        self._state[0].bind_to_image(b["B_PACKED_IN"], read=True, write=True)
        self._state[1].bind_to_image(b["B_PACKED_OUT"], read=True, write=True)
        self._booked.bind_to_storage_buffer(b["B_BOOKED"])
        steps = self._packed_steps
        launches = [steps] * (n // steps) + [1] * (n % steps)
        # The two write different texels: one barrier after both. The ring goes first, so its few
        # workgroups run beside the interior's rather than after them (1-9 % a substep on the H200).
        for k, s in enumerate(launches):
            lay = self._packed_sets[s]
            inner = lay["inner"]
            lay["ring"][k % 2].run(*lay["ring_groups"], 1)
            if inner[0] > 0:            # (0, 0) where there is no interior rectangle
                lay["interior"][k % 2].run(*inner, 1)
            self.ctx.memory_barrier()
        self._state[len(launches) % 2].bind_to_image(b["B_PACKED_IN"], read=True, write=False)
        self.water_texture.bind_to_image(b["B_WATER"], read=False, write=True)
        self._bind_flows()
        _gl.dispatch(self.ctx, self._programs["unpack"], self.nx + 1, self.ny + 1)

    def _accelerate(self):
        _gl.dispatch(self.ctx, self._programs["accelerate"], self.nx + 1, self.ny + 1)     # one thread per face

    def _scale_outflow(self):
        _gl.dispatch(self.ctx, self._programs["scale_outflow"], self.nx + 1, self.ny + 1)

    def _move(self):
        _gl.dispatch(self.ctx, self._programs["move"], self.nx, self.ny)

    # The cell-wise step (passes=2): the boundary faces accelerated, then per substep two passes over
    # the cells and the boundary faces booked (and accelerated for the next substep, in the same
    # dispatch). Cell passes walk CELL_ROWS cells up a column per invocation; boundary passes take
    # one invocation per boundary table entry (laid out in rows of LOCAL_SIZE).

    def _bind_cell_wise(self):
        self._outflow_scale.bind_to_image(_gl.BINDINGS["B_OUTFLOW_SCALE"], read=True, write=True)
        self._places.bind_to_storage_buffer(_gl.BINDINGS["B_BOUNDARY_FACES"])
        if self._views is not None:       # the input flows of both cell passes, as _bind_flows binds them
            for axis, buf, tmp in zip("XYZ", self._flows, self._flows_tmp):
                self._views.bind(_gl.BINDINGS[f"B_FLOW_{axis}_VIEW"], buf)
                self._views.bind(_gl.BINDINGS[f"B_FLOW_{axis}_TMP_VIEW"], tmp)

    def _boundary_faces(self, book: bool, accelerate: bool):
        count = self._layout.size + 2 * self._hexagonal      # hex: and the two unused corner faces
        prog = self._programs[BOUNDARY_PROGRAMS[book, accelerate]]
        _gl.dispatch(self.ctx, prog, _gl.LOCAL_SIZE, -(-count // _gl.LOCAL_SIZE))

    def _accelerate_cells(self):
        _gl.dispatch(self.ctx, self._programs["accelerate_cells"], self.nx, -(-self.ny // CELL_ROWS))

    def _scale_and_move(self):
        _gl.dispatch(self.ctx, self._programs["scale_and_move"], self.nx, -(-self.ny // CELL_ROWS))

    def _queue_stats(self, edit=True):
        """Dispatch the two-pass reduction; `_read_stats` reads it when needed (no wait here), and it
        goes into the fenced ring that step() plans from. `edit`: the water or terrain was changed
        otherwise than by stepping, so the next step() must plan from these very stats."""
        self.terrain_texture.bind_to_image(_gl.BINDINGS["B_TERRAIN"], read=True, write=False)
        self.water_texture.bind_to_image(_gl.BINDINGS["B_WATER"], read=True, write=False)
        self._partials.bind_to_storage_buffer(_gl.BINDINGS["B_PARTIALS"])
        self._stats_buffer.bind_to_storage_buffer(_gl.BINDINGS["B_STATS"])
        tiles = self._programs["stats"]
        _gl.set_uniforms(tiles, u_size=(self.nx, self.ny), u_walk=self._stats_walk)
        tiles.run(*self._stats_groups, 1)
        self.ctx.memory_barrier()
        final = self._programs["stats_final"]
        _gl.set_uniforms(final, u_count=self._tiles)
        final.run(1, 1, 1)
        self.ctx.memory_barrier()
        self._stats_seq += 1
        self._sync_next = self._sync_next or edit
        if self._readback is not None:
            self._readback.push(self._stats_buffer, self._stats_seq)

    def _read_stats(self) -> dict:
        """The stats last queued; waits for every pass queued so far."""
        return self._stats_dict(self._stats_buffer.read())

    def _stats_dict(self, data) -> dict:
        rec = np.frombuffer(data, STATS_DTYPE)[0]
        return {"volume": float(rec["depth_sum"]) * self.geometry.cell_area,
                "max_depth": float(rec["max_depth"]), "min_terrain": float(rec["min_terrain"])}

    def _planning_stats(self) -> tuple[dict, int]:
        """The stats a step() call plans from, and how many reductions older than the last queued
        they are: the last (queued at the end of the previous call) if the GPU has finished it, else
        the one before, so the CPU queues this call while the GPU still works on the last one. After
        an edit, or without a fenced ring, it reads the last one, waiting for the GPU."""
        if self._readback is None or self._sync_next or self._stats_seq < 2:
            self._sync_next = False
            return self._read_stats(), 0
        data, seq = self._readback.newest(self._stats_seq - 1)
        return self._stats_dict(data), self._stats_seq - seq

    # -------------------------------------------------------------------------------------- lifetime

    _RESOURCES = ("terrain_texture", "water_texture", "_scratch", "_outflow_scale", "_state", "_booked", "_views",
                  "_flows", "_flows_tmp", "_boundary", "_places", "_ledger_faces", "_partials", "_stats_buffer",
                  "_readback", "_brush_buffer")

    def _gpu_objects(self):
        objects = []
        for name in self._RESOURCES:
            value = getattr(self, name, None)
            objects.extend(value if isinstance(value, list) else [] if value is None else [value])
        return objects

    def _release_partial(self):
        """Free what a failed constructor made, and the context if the grid created it."""
        self._released = False
        self.release()

    def __repr__(self):
        state = "released" if self._released else f"t={self.sim_time:.3f}s"
        return f"{self._kind}({self.nx}x{self.ny}, cell_size={self.params.cell_size}, {state})"


class WaterGrid(_PipeGrid):
    """Virtual-pipes water on a square grid. Cell [y, x] covers world [x, x+1] x [y, y+1] * cell_size.

    ctx: a moderngl.Context with GL >= 4.3 (a game window's), or None for a private standalone one.
    terrain: (ny, nx) heights in world units. cell_size, gravity, friction, pipe_area: see WaterParams.
    water: optional initial depths (ny, nx), >= 0.
    passes: None (choose for this device), 1 (one fused dispatch per substep; in calls of 3 substeps
    and more on a packed copy of the state, packed and unpacked once a call, and on grids of 512^2 cells and
    more two dispatches, interior tiles and the ring around them), 2 (the cell-wise step:
    two passes over the cells, made for CPU rasterisers) or 3 (accelerate, scale_outflow, move: one
    dispatch each). All give the same result to rounding.

    Attributes: ctx (the context it lives on), nx, ny, shape ((ny, nx)), params (WaterParams),
    geometry (cell area and pipe widths of the lattice), water_texture and terrain_texture (r32f
    (nx, ny) textures, depth and bed height in world units, for a game's own shaders; valid until
    release()).
    """
