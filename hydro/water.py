"""WaterGrid: virtual-pipes shallow water over a terrain heightmap, as GLSL compute kernels.

The model (docs/design.md, "The model"; its arithmetic in shaders/common/model.glsl, its float64 twin
hydro.reference.water): surface-height differences accelerate the flow in every pipe between two cells,
friction (1 - f)^dt; no cell sends out more than it holds (the outflow scale, Mei et al. 2007); each
column changes by the net flow of its faces (flux form, so water is conserved); boundary faces follow
their table entry. Water and terrain are r32f textures a game can sample; flows are storage buffers, one
signed value per face.

A step() call splits dt into substeps from the exact stability bound (hydro.params.stable), then one of
the kernels of hydro.water_kernels records them all without reading anything back, as
hydro.water_plan decides for the device and the call. It plans from the volume and deepest water
measured on the GPU at the end of the call before the previous one (or after the last edit), so the
same inputs and calls give the same substeps whatever the GPU's timing, and a game loop rarely waits:
that record is nearly always done by the time it is read (docs/design.md, "Planning a call").

Between frames a game asks the water without stalling (hydro.water_probes): sample() and
sample_async() read the water at a few points back through a fenced ring, gauges sum what crosses
their lines on the GPU after every substep, set_terrain() writes a rectangle of the bed in one upload,
and set_boundary() uploads the table, folding what faces booked into their kinds' totals on the GPU.
"""
from __future__ import annotations

import math

import moderngl
import numpy as np

from . import _gl, _owner, lattice
from . import _validate as check
from . import boundary as bnd
from . import water_plan as plan
from .params import (DEPTH_MARGIN, Erosion, Geometry, WaterParams, auto_substeps, check_substep_count, checked_substep,
                     coupling, fixed_substeps, max_stable_dt, smoothing_weight, stable)
from .water_cycle import Cycle, Source
from .water_erosion import NO_FLOOR, ErosionState, fill_texture
from .water_kernels import KERNEL_CLASSES, ErodingBlocked, WaterState
from .water_sleep import Sleep
from .water_probes import MAX_GAUGES, Gauge, Gauges, Sample, Sampler, check_line, check_points
from .water_stats import StatsReduction

MAX_CHUNK = 64             # automatic substeps between two re-measurements of the deepest water
MAX_SUBSTEPS = 100_000     # per step() call; more means dt is far too large for the grid
CYCLE_FOLD = 64            # substeps the water cycle's records sum what it took over, at most


def check_kernel(kernel, inertia=False):
    """None (the planner's choice) or one of water_plan.KERNELS (the fused kernel has no inertia)."""
    if kernel is not None and kernel not in plan.KERNELS:
        raise ValueError(f"kernel: expected None (chosen for the device and call) or one of "
                         f"{', '.join(repr(k) for k in plan.KERNELS)}, got {kernel!r}")
    if inertia and kernel == "fused":
        raise ValueError("kernel: the fused kernel has no inertia; expected None, 'cells' or 'blocked' with "
                         "inertia=True")
    return kernel


def check_sleep(sleep) -> bool:
    if not isinstance(sleep, (bool, np.bool_)):
        raise TypeError(f"sleep: expected True (skip the tiles where nothing moves) or False, got "
                        f"{type(sleep).__name__} {sleep!r}")
    return bool(sleep)


class _PipeGrid(_owner.Simulation):
    """The pipe network on the GPU; WaterGrid (square) and HexWaterGrid (triangular) set the lattice."""

    _hexagonal = False
    _kind = "WaterGrid"
    backend = "compute"         # the kernels of hydro.water_kernels; "fragment" on GL 3.3-4.2 (__new__)

    def __new__(cls, ctx=None, *args, **kwargs):
        """On a context with no compute shaders (GL 3.3 to 4.2; macOS: 4.1), the same lattice's grid of the
        fragment backend (hydro.water_fragment): the classic model as render-to-texture passes. What it
        has no passes for is refused by name."""
        if isinstance(ctx, moderngl.Context) and not _gl.has_compute(ctx) and ctx.version_code >= _gl.FRAGMENT_VERSION:
            return _fragment_grid(cls._hexagonal, ctx, *args, **kwargs)
        return super().__new__(cls)

    def __init__(self, ctx, terrain, cell_size=1.0, gravity=9.81, friction=0.02, *, pipe_area="depth",
                 water=None, kernel=None, manning=0.0, fixed_substep=None, inertia=False, sleep=True):
        self._released = True                     # until every resource exists
        owns_ctx = ctx is None
        if not owns_ctx:                          # first: WaterGrid(terrain, ctx) names ctx
            _gl.require_compute(ctx)
        self.params = WaterParams(cell_size, gravity, friction, pipe_area, manning, fixed_substep, inertia)
        terrain = check.field("terrain", terrain)
        if terrain.ndim != 2 or min(terrain.shape) < 1:
            raise ValueError(f"terrain: expected a 2D array (ny, nx) with ny, nx >= 1, got shape {terrain.shape}")
        self.ny, self.nx = terrain.shape
        water = (np.zeros_like(terrain) if water is None
                 else check.field("water", water, terrain.shape, nonnegative=True))
        self._kernel = check_kernel(kernel, self.params.inertia)
        self._sleep = check_sleep(sleep)
        ctx = _gl.create_context() if owns_ctx else ctx
        self.ctx, self._owns_ctx = ctx, owns_ctx
        try:
            self._create(terrain, water)
        except BaseException:
            self._release_partial()
            raise

    def _check_limits(self):
        """Raise, before any GPU work, where the context cannot hold this grid: its textures have
        (nx + 1) x (ny + 1) texels and each flow a storage buffer of 4 (nx + 1)(ny + 1) bytes at most
        (the blocked kernel's margin is not counted: where its state does not fit, the fused kernel runs
        instead); beyond GL_MAX_TEXTURE_SIZE or GL_MAX_SHADER_STORAGE_BLOCK_SIZE the driver would give
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

    def _create(self, terrain, water):
        """Make every GPU resource; on failure the caller frees whatever exists so far."""
        ctx = self.ctx
        self._check_limits()
        self.geometry = (Geometry.hexagonal if self._hexagonal else Geometry.square)(self.params.cell_size)
        self._layout = bnd.layout(self.nx, self.ny, self._hexagonal)
        self._table = bnd.new_table(self._layout)
        self._note_boundary_bounds()
        self._lowest_bed = float(terrain.min())       # a bound on it, for the walled blocked calls
        self._set_tuning(plan.Tuning.for_device(_gl.device_kind(ctx), self._hexagonal, self.params.inertia))
        self._kernels = {}                           # name -> water_kernels.Kernel, made on first use
        self._drain_slot = self._layout.size          # the ledger's slot of the volume taken by drains,
        self._kind_slot = self._drain_slot + 1        # then one a boundary kind: what faces booked under it,
        self._evaporation_slot = self._kind_slot + len(bnd.KINDS)     # then what evaporation took
        self._state = self._stats = self._brush_buffer = self._sampler = self._gauges = self._cycle = None
        self._last_points = None            # (dtype, shape, bytes, checked) of the points sampled last
        self._erosion = None                        # water_erosion.ErosionState, once asked for
        p = self.params
        if p.fixed_substep is not None and not p.depth_area and not stable(
                p.fixed_substep, self._coupling({"max_depth": 0.0}, 0.0), self.geometry, p):
            limit = max_stable_dt(self._coupling({"max_depth": 0.0}, 0.0), self.geometry, p)
            raise ValueError(f"fixed_substep: {p.fixed_substep} s is beyond the stable limit {limit:.4g} s of "
                             f"pipes of a constant area {p.pipe_area}; expected fixed_substep <= {limit:.4g}")
        self._state = WaterState(ctx, terrain, water, self._hexagonal, self.params, self.geometry, self._table,
                                 self._evaporation_slot + 1)
        self._state.sleep = Sleep(self._state, self._tuning.sleep_tile)
        self._state.set_open(self._table, self._layout)
        self._programs = {name: _gl.program(ctx, f"water/{name}.comp")
                          for name in ("dig", "add_water", "remove_water", "ledger_fold")}
        self._stats = StatsReduction(self._state, self._tuning)
        self._last_call = None                      # the water_plan.CallPlan of the last step() call
        self._dense_until = 0                       # the first call that may sleep again (_begin_call)
        self._released = False

        self._sim_time = 0.0
        self._carry = 0.0                           # fixed_substep: seconds asked for and not yet advanced
        self._iteration = 0                         # substeps advanced so far
        self._calls = 0                             # step() calls so far
        # step() plans from the stats of the call before the previous one ((ring record, calls then)),
        # or from those read at the last edit (_planned: (stats, calls then)); _sync_next: an edit since
        self._ends = []
        self._planned = None
        self._sync_next = True
        self._ledger_edits = {"brushes": 0.0, "assigned": 0.0}
        self._cycle_books = {"rain": 0.0, "sources": 0.0}     # what rain and springs added (water_cycle)
        self._stats.queue()
        self._initial_volume = self._read_stats()["volume"]
        self._seal()

    @property
    def kernel(self):
        """The kernel step() runs: None (chosen for the device and each call, hydro.water_plan), or
        "cells", "fused" or "blocked" (hydro.water_kernels; all give the same water to rounding).
        Settable between steps."""
        return self._kernel

    @kernel.setter
    def kernel(self, value):
        self._alive()
        self._kernel = check_kernel(value, self.params.inertia)

    @property
    def sleep(self) -> bool:
        """Whether step() skips the tiles where nothing moves (hydro.water_sleep): the same water and
        ledger as computing them. The cell-wise kernel sleeps tiles, on GPUs the blocked kernel (which then
        also takes the calls of one substep), and on GL 3.3-4.2 the fragment passes; every kernel computes
        every tile while erosion is on. Settable between steps."""
        return self._sleep

    @sleep.setter
    def sleep(self, value):
        self._alive()
        self._sleep = check_sleep(value)

    @property
    def awake(self) -> float:
        """The fraction of the grid's tiles the last step() call computed, over its substeps (1.0 before
        any); a diagnostic that reads a count back from the GPU, waiting for it."""
        self._alive()
        return self._state.awake_fraction()

    def _retune(self, tuning: plan.Tuning) -> None:
        """The test seam: plan this grid's calls from another water_plan.Tuning (other shapes and
        thresholds; benchmarks and tests only). The kernels are made again on next use."""
        self._alive()
        if not isinstance(tuning, plan.Tuning):
            raise TypeError(f"tuning: expected a hydro.water_plan.Tuning, got {type(tuning).__name__}")
        for made in self._kernels.values():
            made.release()
        self._kernels = {}
        if tuning.stats_rows != self._tuning.stats_rows or tuning.stats_records != self._tuning.stats_records:
            self._stats.release()
            self._stats = None
            self._stats = StatsReduction(self._state, tuning)
            self._stats.queue()
            self._sync_next, self._ends = True, []
        if tuning.sleep_tile != self._tuning.sleep_tile:
            self._state.sleep.release()
            self._state.sleep = None
            self._state.sleep = Sleep(self._state, tuning.sleep_tile)
            self._state.set_open(self._table, self._layout)
        self._set_tuning(tuning)

    def _set_tuning(self, tuning: plan.Tuning) -> None:
        """Plan calls from `tuning` (with the water cycle on, less the climb, which has no cycle); whether
        the blocked kernel's state fits a texture depends only on it and the grid, so it is found here,
        not every call."""
        self._base_tuning = tuning
        if getattr(self, "_state", None) is not None and self._state.defines["CYCLE"]:
            tuning = tuning.replace(climb_from=None, climb_walled_from=None, wide=())
        self._tuning = tuning
        if getattr(self, "_sampler", None) is not None:
            self._sampler.flush()
            self._sampler.fold = self._sampler.foldable = tuning.fold_samples
        self._state_fits = self._fits(tuning)
        # calls with erosion on: the blocked kernel's erosion where the tuning has it and its state fits
        eroding = plan.eroding(tuning)
        self._eroding_tuning = eroding if eroding is not None and self._fits(eroding) else None

    def _fits(self, tuning: plan.Tuning) -> bool:
        """Whether the blocked kernel's state of `tuning`'s launches fits the context's textures."""
        size, _ = plan.state_size(self.nx, self.ny, plan.state_shapes(tuning, self.nx, self.ny), tuning.reach)
        return max(size) <= (self.ctx.info.get("GL_MAX_TEXTURE_SIZE") or max(size))

    # ------------------------------------------------------------------------------------ state access

    @property
    def water_texture(self):
        """Water depth as an r32f (nx, ny) texture, world units, for a game's own shaders (texel (x, y)
        is cell [y, x]); the grid writes it in place, so one fetch serves every frame until release().
        Change the water through `water` or the brushes, which check it and book it in the ledger; a
        game's shader that writes this texture must keep every depth finite and >= 0 (the steps rely
        on it: a surface never lies below its bed) and its volume change is not in ledger()."""
        self._alive()
        return self._state.water

    @property
    def terrain_texture(self):
        """Terrain height as an r32f (nx, ny) texture, world units, as water_texture. Change the terrain
        through `terrain` or dig(), which keep the grid's bound on its lowest bed; a game's shader that
        writes this texture must keep every height above -1e30 (hydro.water_plan.WALLED_MIN_BED)."""
        self._alive()
        return self._state.terrain

    @property
    def shape(self) -> tuple[int, int]:
        """(ny, nx): the shape of terrain, water and every per-cell array."""
        return (self.ny, self.nx)

    @property
    def water(self) -> np.ndarray:
        """Water depth (ny, nx), world units; a NumPy copy."""
        self._alive()
        return np.frombuffer(self._state.water.read(), np.float32).reshape(self.shape).copy()

    @water.setter
    def water(self, depth):
        self._alive()
        depth = check.field("water", depth, self.shape, nonnegative=True)
        self._before_edit()
        old = self._read_stats()["volume"]
        self._state.water.write(depth.tobytes())
        self._ledger_edits["assigned"] += float(depth.astype(np.float64).sum()) * self.geometry.cell_area - old
        self._edited()

    @property
    def terrain(self) -> np.ndarray:
        """Terrain height (ny, nx), world units; a NumPy copy."""
        self._alive()
        return np.frombuffer(self._state.terrain.read(), np.float32).reshape(self.shape).copy()

    @terrain.setter
    def terrain(self, height):
        self._alive()
        height = check.field("terrain", height, self.shape)
        self._before_edit()
        self._state.terrain.write(height.tobytes())
        self._lowest_bed = float(height.min())
        self._edited()

    def set_terrain(self, heights, origin=(0, 0)) -> None:
        """Absolute terrain heights, an (h, w) array, for the rectangle of cells [y0 : y0 + h, x0 : x0 + w]
        with origin = (x0, y0), which must lie inside the grid: a floodgate closing, a building, a dam
        collapsing, in one upload. The water depths there are kept (the surface moves with the bed) and
        the ledger is unchanged; like every edit, the next step() plans from the water as it is then."""
        self._alive()
        heights, x0, y0 = check.rectangle(heights, origin, self.nx, self.ny)
        h, w = heights.shape
        self._before_edit()
        self._state.terrain.write(heights.tobytes(), viewport=(x0, y0, w, h))
        self._lowest_bed = min(self._lowest_bed, float(heights.min()))
        self._edited((x0, y0, w, h))

    def _flow(self, k):
        self._alive()
        return np.frombuffer(self._state.flows[k].read(), np.float32).reshape(self._state.flow_shapes[k]).copy()

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
        flow = check.field(name, flow, self._state.flow_shapes[k])
        self._before_edit()
        self._state.flows[k].write(flow.tobytes())
        self._state.wake()

    @property
    def flow_buffers(self) -> tuple:
        """The storage buffers holding flow_x, flow_y (hex: flow_z) now, float32 row-major, for a game's
        shaders. The grid swaps buffers as it steps: fetch them after each step(), do not keep them."""
        self._alive()
        return tuple(self._state.flows)

    @property
    def surface(self) -> np.ndarray:
        """Water surface height terrain + water (ny, nx)."""
        return self.terrain.astype(np.float64) + self.water

    def volume(self) -> float:
        """Total water volume (depth * cell area), world units^3, reduced on the GPU in fp64. Waits for
        the GPU to finish the work queued so far (a HUD can call it once a frame)."""
        self._alive()
        self._stats.queue()
        return self._read_stats()["volume"]

    def ledger(self) -> dict:
        """Where the water came from: the start volume, what crossed each kind of boundary (+ in,
        - out), what brushes, drains (remove_water and sources' drains) and assignments added, what rain
        and springs added and evaporation took; `expected` is their sum, which volume()
        matches to float precision. Also "sediment_out", apart from the water's: the sediment that crossed
        the sides (negative: carried out; material()). Reads the GPU's fp64 ledgers, waiting for the
        work queued so far."""
        self._alive()
        slots = np.frombuffer(self._state.ledger.read(), np.float64)
        faces, kinds, folded = slots[:self._drain_slot], self._table["kind"], slots[self._kind_slot:]
        totals = {kind: float(faces[kinds == code].sum()) + float(folded[code])
                  for kind, code in bnd.KINDS.items() if kind != "wall"}
        edits = {"brushes": self._ledger_edits["brushes"], "drains": float(slots[self._drain_slot]),
                 "assigned": self._ledger_edits["assigned"]}
        cycle = {"rain": self._cycle_books["rain"], "evaporation": float(slots[self._evaporation_slot]),
                 "sources": self._cycle_books["sources"]}
        out = {"initial": self._initial_volume, **totals, **edits, **cycle}
        out["expected"] = math.fsum(out.values())
        out["sediment_out"] = 0.0 if self._erosion is None else self._erosion.sediment_entered()
        return out

    # ------------------------------------------------------------------------------ asking the water

    def sample(self, points) -> np.ndarray:
        """The water at `points`, an (N, 2) array of grid coordinates (x, y) (integer (x, y) is the centre
        of cell [y, x]; axial on the hex lattice), each within half a cell of the cell centres: an (N, 4)
        float32 array of depth, surface (bed + depth), vx, vy (world units/s), bilinear between the four
        cells around each point; velocities as the renderer's (mean face flow / (depth * face width),
        0 where the water is no deeper than hydro.water_probes.SAMPLE_DRY_DEPTH cells). Reads back 16
        bytes a point, never the grid, but waits for the GPU to finish the work queued so far: a game
        loop asks with sample_async() and reads the answer next frame."""
        return self.sample_async(points).result()

    def sample_async(self, points) -> Sample:
        """sample(points) without waiting: a hydro.water_probes.Sample handle whose `ready` says whether
        its values are back and whose `result()` returns them (as sample() does), waiting only if the GPU
        has not got there yet. The values are of the water as it is now, whatever is stepped after."""
        self._alive()
        points = self._checked_points(points)
        if self._sampler is None:
            self._sampler = Sampler(self, self._state, self.params.cell_size, self._tuning.fold_samples)
        return self._sampler.queue(points)

    def _checked_points(self, points) -> np.ndarray:
        """check_points, skipped for the array of the same bytes as the last one checked: a game often asks at
        the same points every frame."""
        last = self._last_points
        if type(points) is np.ndarray:
            raw = points.tobytes()
            if last is not None and last[:2] == (points.dtype, points.shape) and last[2] == raw:
                return last[3]
            checked = check_points("points", points, self.nx, self.ny)
            self._last_points = (points.dtype, points.shape, raw, checked)
            return checked
        return check_points("points", points, self.nx, self.ny)

    def add_gauge(self, p0, p1) -> Gauge:
        """A gauge on the line from p0 = (x0, y0) to p1 = (x1, y1), grid coordinates within half a cell of
        the cell centres (as sample()'s points): what crosses it (a water wheel, a gate, a river's
        mouth) is summed on the GPU after every substep, in double precision, positive along the normal
        (y1 - y0, -(x1 - x0)): a line drawn toward +y counts flow toward +x. It counts the faces whose
        pipe (the segment between its two cells' centres) the line cuts (boundary faces too);
        `gauge.discharge` (m^3/s over a call) and `gauge.volume` (m^3 since added) are one step() call
        late, so reading them does not stall a frame (hydro.water_probes.Gauge). While a grid has
        gauges its calls are planned a substep a dispatch, each followed by the gauges' small pass (on
        GPUs the fused kernel, water_plan.plan_call's per_substep); remove them when not needed."""
        self._alive()
        line, faces = check_line(p0, p1, self.nx, self.ny, self._hexagonal)
        if self._gauges is not None and len(self._gauges.live) >= MAX_GAUGES:
            raise RuntimeError(f"{self._kind}: it has {MAX_GAUGES} gauges, the most a grid holds; remove one first")
        if self._gauges is None:
            self._gauges = Gauges(self, self._state)
        return self._gauges.add(line, faces)

    @property
    def gauges(self) -> tuple:
        """The grid's gauges (add_gauge), oldest first."""
        self._alive()
        return () if self._gauges is None else tuple(g for _, g in sorted(self._gauges.live.items()))

    # ------------------------------------------------------------------------------------- boundaries

    def set_boundary(self, side, kind, value=0.0, span=None) -> None:
        """Set what happens at one side of the grid, or at `span=(first, stop)` cells along it.

        side: "left" | "right" | "bottom" | "top".
        kind: "wall" (no flow; value unused), "inflow" / "outflow" (value = total discharge through
        the span in volume/s, spread evenly over its faces; inflow is exact, outflow is limited by the
        water present), "level" (value = height of an outside water surface, e.g. a sea).

        Cheap enough to call every frame (a tide, a wave generator): it uploads the table and reads
        nothing back; where the kinds of faces change, a pass on the GPU first adds what they booked to
        their old kinds' totals in the ledger.
        """
        self._alive()
        table = bnd.with_boundary(self._table, self._layout, side, kind, value, span)
        kinds = not np.array_equal(table["kind"], self._table["kind"])
        if kinds:                       # the next call's first pass stops the flow of faces that became walls
            self._before_edit()
            self._fold_ledger()
        self._table = table
        data = table.tobytes()
        self._state.boundary.orphan(len(data))      # a fresh store: a step still reading the old table keeps it
        self._state.boundary.write(data)
        self._note_boundary_bounds()
        if kinds:       # a face that is not a wall keeps its tiles awake; one that became a wall stops its flow
            self._state.set_kinds(table["kind"])
            self._state.set_open(table, self._layout)
            self._state.wake()

    @property
    def boundaries(self) -> dict:
        """Per side, runs of (kind, first cell, stop cell, value) as set_boundary takes them: the
        discharge of the run for inflow/outflow, the outside surface for level."""
        self._alive()
        return bnd.describe(self._table, self._layout)

    def _note_boundary_bounds(self):
        """What the boundaries add to the stable-substep bound, worked out once per set_boundary."""
        self._max_cell_inflow = bnd.max_cell_inflow(self._table, self._layout)
        self._all_walls = bool(np.all(self._table["kind"] == bnd.KINDS["wall"]))
        level = self._table["value"][self._table["kind"] == bnd.KINDS["level"]]
        self._max_level = float(level.max()) if level.size else None

    def _fold_ledger(self):
        """Before the table changes its faces' kinds: add what each face booked to its kind's total in the
        ledger and clear the face (ledger_fold.comp, on the GPU, nothing read back)."""
        b, prog = _gl.BINDINGS, self._programs["ledger_fold"]
        self._state.boundary.bind_to_storage_buffer(b["B_BOUNDARY"])
        self._state.ledger.bind_to_storage_buffer(b["B_LEDGER"])
        _gl.set_uniforms(prog, u_count=self._layout.size, u_totals=self._kind_slot)
        prog.run(1, 1, 1)
        self.ctx.memory_barrier()

    # ---------------------------------------------------------------------------------------- brushes

    def _brush(self, x, y, radius, normalise: bool):
        """The box of cells (x0, y0, width, height) a brush touches and its float32 weights there
        (hydro.lattice.brush_box; scaled to sum to about 1 where `normalise`), with the
        float64 sum of those float32 weights. Raises if it touches no cell."""
        x, y = check.real32("x", x), check.real32("y", y)
        radius = check.real32("radius", radius, low=0.0, low_open=True)
        box = lattice.brush_box((self.ny, self.nx), x, y, radius, self._hexagonal)
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
        self._before_edit()
        data = weights.tobytes()
        if self._brush_buffer is None:
            self._brush_buffer = self.ctx.buffer(data)
        else:                         # a fresh store: a pass still reading the last brush keeps its own
            self._brush_buffer.orphan(len(data))
            self._brush_buffer.write(data)
        self._brush_buffer.bind_to_storage_buffer(_gl.BINDINGS["B_BRUSH"])
        prog = self._programs[name]
        _gl.set_uniforms(prog, u_size=(self.nx, self.ny), u_origin=(x0, y0), u_box=(w, h), **uniforms)
        tex = self._state.terrain if name == "dig" else self._state.water
        tex.bind_to_image(_gl.BINDINGS["B_TERRAIN" if name == "dig" else "B_WATER"], read=True, write=True)
        if name == "remove_water":
            self._state.ledger.bind_to_storage_buffer(_gl.BINDINGS["B_LEDGER"])
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
        if depth > 0:                   # no cell went lower than this (a weight is at most its largest)
            self._lowest_bed -= depth * float(weights.max())
        self._edited(box)

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
        self._edited(box)

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
        self._edited(box)

    # ------------------------------------------------------------------------------------ water cycle

    @property
    def rain(self):
        """Rain: m/s of water over every cell (a float), or per cell (a float32 (ny, nx) array, a copy);
        0 stops it. Added on the GPU at every substep, with no per-frame calls, and booked in ledger()
        under "rain" as rate x area x time."""
        self._alive()
        rain = 0.0 if self._cycle is None else self._cycle.rain
        return rain.copy() if isinstance(rain, np.ndarray) else rain

    @rain.setter
    def rain(self, value):
        self._alive()
        if np.ndim(value) == 0:
            check.real32("rain", value, low=0.0)
        else:
            check.field("rain", value, self.shape, nonnegative=True)
        self._cycle_of().set_rain(value)
        self._cycle_changed()

    @property
    def evaporation(self) -> float:
        """m/s of water taken from every wet cell at every substep, never more than is there; booked in
        ledger() under "evaporation" (negative)."""
        self._alive()
        return 0.0 if self._cycle is None else self._cycle.evaporation

    @evaporation.setter
    def evaporation(self, value):
        self._alive()
        check.real32("evaporation", value, low=0.0)
        self._cycle_of().set_evaporation(value)
        self._cycle_changed()

    def add_source(self, x, y, radius, rate) -> Source:
        """A spring (rate > 0: adds `rate` m^3/s exactly) or a drain (rate < 0: takes up to |rate| m^3/s
        while water is there, never more) under a smooth round brush of `radius` cells around grid point
        (x, y) (as add_water); it works on the GPU at every substep until `source.remove()`, and
        `source.rate` may be changed at any time. Booked in ledger() under "sources" (springs) and
        "drains"."""
        self._alive()
        x, y = check.real32("x", x), check.real32("y", y)
        radius = check.real32("radius", radius, low=0.0, low_open=True)
        rate = check.real32("rate", rate)
        source = self._cycle_of().add(x, y, radius, rate)
        self._cycle_changed()
        return source

    @property
    def sources(self) -> tuple:
        """The live sources (add_source), oldest first."""
        self._alive()
        return () if self._cycle is None else tuple(self._cycle.sources.values())

    def _cycle_of(self) -> Cycle:
        """The grid's water cycle, made on first use; the stats pass then adds what it took to the ledger."""
        if self._cycle is None:
            self._cycle = Cycle(self, self._state)
            self._state.cycle = self._cycle
            self._stats.release()
            self._stats = None
            self._stats = StatsReduction(self._state, self._tuning)
            self._stats.queue()
            self._sync_next, self._ends = True, []
        return self._cycle

    def _cycle_changed(self) -> None:
        """The cycle's rates changed: where the kernels' programs change with them (the cycle on or off, a
        rain field, sources), they are made again on next use."""
        self._state.wake()                          # the new rates reach every cell
        defines = self._cycle.defines
        if all(self._state.defines.get(k) == v for k, v in defines.items()):
            return
        self._state.defines.update(defines)
        for made in self._kernels.values():
            made.release()
        self._kernels = {}
        self._set_tuning(self._base_tuning)

    # ---------------------------------------------------------------------------------------- erosion

    @property
    def erosion(self):
        """None (the terrain stays as it is), or a hydro.Erosion: after every substep the water carries
        sediment with its own face flows, dissolves the bed where it carries less than it can and drops
        it where it carries more, and beds steeper than the talus angle slump (hydro.water_erosion).
        Material (terrain + sediment, material()) only moves, and leaves through open sides (ledger()
        "sediment_out"). With erosion on, GPU calls of several substeps run the blocked kernel with
        erosion's phases after each substep (water_plan.eroding); calls of one, CPU rasterisers and
        `kernel="cells"` the cell-wise kernel with erosion's three passes after each substep; both give
        the same result."""
        self._alive()
        return None if self._erosion is None else self._erosion.params

    @erosion.setter
    def erosion(self, value):
        self._alive()
        if value is not None and not isinstance(value, Erosion):
            raise TypeError(f"erosion: expected a hydro.Erosion or None, got {type(value).__name__} {value!r}")
        if value is None and self._erosion is None:
            return
        self._erosion_of().params = value

    @property
    def sediment(self) -> np.ndarray:
        """(ny, nx) float32: the sediment the water carries, as the height it would settle to (world
        units). Settable (>= 0), like terrain: a game's own edit of the material."""
        self._alive()
        if self._erosion is None:
            return np.zeros(self.shape, np.float32)
        return self._read_texture(self._erosion.sediment)

    @sediment.setter
    def sediment(self, value):
        self._alive()
        value = check.field("sediment", value, self.shape, nonnegative=True)
        self._erosion_of().sediment.write(value.tobytes())

    @property
    def bedrock(self):
        """(ny, nx) float32 heights nothing erodes or slumps below, or None (no floor, the default)."""
        self._alive()
        if self._erosion is None or not self._erosion.has_bedrock:
            return None
        return self._read_texture(self._erosion.bedrock)

    @bedrock.setter
    def bedrock(self, value):
        self._alive()
        if value is None:
            if self._erosion is not None:
                fill_texture(self._erosion.bedrock, NO_FLOOR)
                self._erosion.has_bedrock = False
            return
        value = check.field("bedrock", value, self.shape)
        state = self._erosion_of()
        state.bedrock.write(value.tobytes())
        state.has_bedrock = True

    @property
    def sediment_texture(self):
        """The sediment as an r32f (nx, ny) texture, for a game's own shaders (fresh deposits); valid
        until release(). Made on first use."""
        self._alive()
        return self._erosion_of().sediment

    def material(self) -> float:
        """Sum of (terrain + sediment) x cell area, world units^3, in fp64 on the GPU (with what rounding
        owes each float32 bed: water_erosion). Erosion only moves material: it changes by what leaves
        through open sides (ledger()["sediment_out"]) and by the game's own edits. Waits for the GPU."""
        self._alive()
        return self._erosion_of().material()

    def _erosion_of(self) -> ErosionState:
        if self._erosion is None:
            self._erosion = ErosionState(self._state, self._layout.size)
        return self._erosion

    def _erosion_hook(self, hook, dt: float):
        """The cell-wise kernel's hook for a call of substeps of dt with erosion on: its passes after each
        substep, then `hook`'s; they read the flows through the kernel's views where it has them."""
        erosion = self._erosion
        views = self._kernel_object("cells").views is not None
        erosion.prepare(dt, images=self._tuning.erosion_images, views=views)

        def after_substep(dt, **kwargs):
            erosion.substep()
            if hook is not None:
                hook(dt, **kwargs)
        return after_substep

    def _read_texture(self, tex) -> np.ndarray:
        return np.frombuffer(tex.read(), np.float32).reshape(self.ny, self.nx).copy()

    # --------------------------------------------------------------------------------------- stepping

    def _coupling(self, stats, dt, margin=1.0) -> float:
        """hydro.params.coupling of the coming `dt` for this grid, from `stats`, the deepest water taken
        `margin` times deeper than measured."""
        return coupling(self.params, self.geometry, stats["max_depth"] * margin, dt,
                        max_cell_inflow=self._max_cell_inflow,
                        max_supply=0.0 if self._cycle is None else self._cycle.max_supply,
                        max_level=self._max_level, min_edge_bed=stats.get("min_terrain", 0.0))

    def _auto_substeps(self, stats, dt, lag=0) -> int:
        """Substeps for `dt` from stats taken `lag` step() calls before this one: the deepest water (and
        with inertia the fastest) may have grown by DEPTH_MARGIN in each of those calls and in this one."""
        margin = DEPTH_MARGIN ** (1 + lag)
        return auto_substeps(self.params, self.geometry, self._coupling(stats, dt, margin), dt,
                             stats.get("max_speed", 0.0) * margin)

    def max_stable_dt(self) -> float:
        """The largest substep (seconds; inf when dry) the next step(dt, substeps) takes: stable for the
        deepest water that call plans from (measured at the end of the call before the previous one, or
        at the last edit; step())."""
        self._alive()
        return max_stable_dt(self._coupling(self._planning_stats()[0], 0.0), self.geometry, self.params)

    def step(self, dt, substeps=None) -> int:
        """Advance the simulation by `dt` seconds; returns the number of substeps taken.

        Without `substeps`, stable substeps are chosen from the exact bound (hydro.params.stable) for the
        deepest water measured at the end of the call before the previous one, with a margin for two
        calls of growth (after an edit: as it is now, with a margin for this call; re-measured every
        hydro.water.MAX_CHUNK (64) substeps of a long call). With `substeps`, dt/substeps must be stable
        for the water so measured, or ValueError is raised before anything runs. Either way a pipe that
        gets deeper during the call than its substep is stable for is treated as that deep
        (params.stable_face_depth), so the step never goes unstable.
        """
        self._alive()
        dt = check.real32("dt", dt, low=0.0, low_open=True)
        if substeps is not None:
            substeps = check.integer("substeps", substeps, low=1, high=MAX_SUBSTEPS)
        if self.params.fixed_substep is not None:
            return self._step_fixed(dt, substeps)
        stats, lag = self._planning_stats()
        if substeps is not None:
            sub = checked_substep(dt, substeps, self._coupling(stats, dt), self.geometry, self.params, "measured")
            self._begin_call()
            self._run(sub, substeps, stats["max_depth"])
            done = substeps
        else:
            n = self._auto_substeps(stats, dt, lag)
            check_substep_count(n, dt, MAX_SUBSTEPS)   # decided before anything runs
            self._begin_call()
            done, remaining = 0, dt
            while True:
                sub = remaining / n
                chunk = min(n, MAX_CHUNK)
                self._run(sub, chunk, stats["max_depth"])
                done += chunk
                if chunk == n:
                    break
                remaining -= sub * chunk
                self._stats.queue()
                # re-plan for the water as it is now; past the cap the depth cap keeps longer substeps stable
                stats = self._read_stats()
                n = max(1, min(self._auto_substeps(stats, remaining), MAX_SUBSTEPS - done))
        self._sim_time += dt
        self._calls += 1
        self._end_gauges(dt)
        if self._sampler is not None:
            self._sampler.called()
        seq = self._stats.queue(push=True)
        if seq:
            self._ends = (self._ends + [(seq, self._calls)])[-2:]
        return done

    def _begin_call(self) -> None:
        """A step() call starts. It sleeps unless a sleeping call two calls back computed more than
        Tuning.sleep_dense_above of its tiles (sleep_climb_dense_above where it climbed them): from that
        record (waiting for it only if the GPU has not finished it), never from whichever the GPU happens to
        have finished, so the same calls plan the same kernels; sleeping is tried again after
        Tuning.sleep_retry calls."""
        for sleeper in self._state.all_sleepers():
            sleeper.push_call(self._calls - 1)
            fraction = sleeper.fraction_of(self._calls - 2)
            above = self._tuning.sleep_dense_above if sleeper.dense_above is None else sleeper.dense_above
            if fraction is not None and fraction > above:
                self._dense_until = self._calls + self._tuning.sleep_retry
        self._state.begin_call()

    def _step_fixed(self, dt: float, substeps) -> int:
        """step() with fixed_substep: the whole substeps of it that dt and the carried remainder hold."""
        fixed = self.params.fixed_substep
        n, carry = fixed_substeps(self._carry, dt, fixed, substeps, MAX_SUBSTEPS)
        self._begin_call()
        if n:
            if self._sync_next:                       # the water as the last edit left it
                self._sync_next = False
                self._planned = (self._read_stats(), self._calls)
            self._run(fixed, n, self._planned[0]["max_depth"])
        self._carry = carry
        self._sim_time += n * fixed
        self._calls += 1
        if self._sampler is not None:
            self._sampler.called()
        if n:
            self._end_gauges(n * fixed)
        self._stats.queue()
        return n

    def _run(self, sub: float, n: int, depth: float = 0.0) -> None:
        """Record n substeps of `sub` seconds with the kernel the planner picks, nothing read back; with
        inertia, de Almeida's weighting is scaled for water `depth` deep. Where the water cycle takes water
        (evaporation, drains), in runs of at most CYCLE_FOLD substeps, each followed by the stats pass, which adds what the cycle
        took (summed in float32 in each cell's record) to the ledger, so that sum stays short."""
        if not (self._state.defines["CYCLE"] and self._cycle.takes):
            self._run_chunk(sub, n, depth)
            return
        for first in range(0, n, CYCLE_FOLD):
            if first:
                self._stats.queue()
            self._run_chunk(sub, min(CYCLE_FOLD, n - first), depth)

    def _run_chunk(self, sub: float, n: int, depth: float) -> None:
        tuning, p = self._tuning, self.params
        walled = plan.walled(p.depth_area, self._all_walls, self._lowest_bed, p.inertia)
        fits = self._state_fits
        kernel = self._kernel
        if not fits and p.inertia:
            kernel = "cells"                          # the fused kernel, the blocked one's stand-in, has none
        smoothing = smoothing_weight(sub, depth, self.geometry, p) if p.inertia else 0.0
        hook = self._gauges.hook if self._gauges is not None and self._gauges.live else None
        eroding = self._erosion is not None and self._erosion.params is not None
        erode_blocked = self._eroding_tuning is not None and (
            kernel == "blocked" or kernel != "cells" and n >= self._eroding_tuning.many_from)
        if eroding and erode_blocked:
            # the blocked kernel with erosion's phases after each substep (water_plan.eroding); a call of
            # one substep pays less on the cell-wise kernel than for its pack and unpack
            tuning, kernel, walled, fits = self._eroding_tuning, "blocked", False, True
        elif eroding:
            # erosion's passes follow each substep of the cell-wise kernel, which leaves them its flows
            # and water as they are (water_erosion)
            kernel, hook = "cells", self._erosion_hook(hook, sub)
        # erosion changes beds where no water moves: it keeps every tile computed
        sleep = self._sleep and not eroding and self._calls >= self._dense_until
        sleep_blocked = sleep and plan.blocked_sleeps(tuning)
        if sleep_blocked and kernel is None and tuning.one == "fused" and fits:
            kernel = "blocked"                        # calls of one substep, and gauged ones, sleep too (GPUs)
        call = plan.plan_call(tuning, self.nx, self.ny, n, kernel=kernel, is_walled=walled, state_fits=fits,
                              per_substep=hook is not None, smoothing=smoothing, sleep=sleep,
                              sleep_blocked=sleep_blocked)
        # a sample waiting for this call: in the cell-wise kernel's first pass, else in its own first
        fold = self._sampler if self._sampler is not None and self._sampler.pending is not None else None
        if fold is not None and call.kernel != "cells":
            fold.flush()
            fold = None
        ran = self._kernel_object("eroding" if eroding and call.kernel == "blocked" else call.kernel)
        ran.run(sub, call, hook, **({"fold": fold} if fold else {}))
        self._state.ran(n, ran.sleep if call.sleep else None)
        self._last_call = call
        self._iteration += n
        if self._state.defines["CYCLE"]:              # the substeps of the float32 length the GPU takes
            seconds = float(np.float32(sub)) * n
            self._cycle_books["rain"] += seconds * self._cycle.rain_rate
            self._cycle_books["sources"] += seconds * self._cycle.spring_rate

    def _end_gauges(self, seconds: float) -> None:
        """A call advanced the water by `seconds`: the gauges record their sums (water_probes.Gauges)."""
        if self._gauges is not None and self._gauges.live:
            self._gauges.end_call(self._sim_time, seconds)

    def _kernel_object(self, name: str):
        """The water_kernels.Kernel of that name on this grid, made on first use."""
        if name not in self._kernels:
            if name == "eroding":
                made = ErodingBlocked(self._state, self._eroding_tuning, self._layout, self._erosion)
            else:
                made = KERNEL_CLASSES[name](self._state, self._tuning, self._layout)
            self._kernels[name] = made
        return self._kernels[name]

    def _before_edit(self) -> None:
        """The water, terrain, flows or a side's kinds change next, otherwise than by stepping: a sample
        waiting for the next call samples them as they are first (water_probes.Sampler.edited)."""
        if self._sampler is not None:
            self._sampler.edited()

    def _edited(self, box=None):
        """The water or terrain changed otherwise than by stepping, in the cells `box` (x0, y0, width,
        height) or anywhere: wake the tiles there, and queue its stats, from which the next step() plans
        (waiting for them)."""
        self._state.wake(box)
        self._stats.queue()
        self._sync_next = True

    def _read_stats(self) -> dict:
        """The stats last queued; waits for every pass queued so far."""
        return self._stats.read()

    def _planning_stats(self) -> tuple[dict, int]:
        """The stats a step() call plans from and how many calls before this one they were taken: after
        an edit, as the water is now (waiting for the GPU); else the newer of the record queued at the
        end of the call before the previous one (a fenced ring record, nearly always done by now) and
        the stats read at the last edit. Never the previous call's own record, whose readiness would
        depend on the GPU's timing; without a ring (GL < 4.4), the previous call's, read."""
        if self._sync_next or (self._stats.ring is None and self._planned[1] != self._calls):
            self._sync_next = False
            self._planned = (self._read_stats(), self._calls)
        if self._stats.ring is None:
            return self._planned[0], 0
        best = self._planned
        if len(self._ends) == 2 and self._ends[0][1] > best[1]:
            seq, calls = self._ends[0]
            best = (self._stats.record(seq), calls)
        return best[0], self._calls - best[1]

    # -------------------------------------------------------------------------------------- lifetime

    def _gpu_objects(self):
        objects = [] if getattr(self, "_state", None) is None else self._state.objects()
        for made in getattr(self, "_kernels", {}).values():
            objects.extend(made.objects())
        if getattr(self, "_stats", None) is not None:
            objects.extend(self._stats.objects())
        if getattr(self, "_brush_buffer", None) is not None:
            objects.append(self._brush_buffer)
        if getattr(self, "_cycle", None) is not None:
            objects.extend(self._cycle.objects())
        if getattr(self, "_erosion", None) is not None:
            objects.extend(self._erosion.objects())
        for probe in (getattr(self, "_sampler", None), getattr(self, "_gauges", None)):
            if probe is not None:
                objects.extend(probe.objects())
        return objects

    def _release_partial(self):
        """Free what a failed constructor made, and the context if the grid created it."""
        self._released = False
        self.release()

    def __repr__(self):
        state = "released" if self._released else f"t={self.sim_time:.3f}s"
        return f"{self._kind}({self.nx}x{self.ny}, cell_size={self.params.cell_size}, {state})"


# What the fragment backend runs: the classic model with pipes of the water's depth. Other arguments
# are refused, naming the argument, before anything is made.
def _fragment_grid(hexagonal, ctx, terrain=None, cell_size=1.0, gravity=9.81, friction=0.02, *, water=None,
                   kernel=None, sleep=True, **model):
    """WaterGrid / HexWaterGrid on a GL 3.3-4.2 context: hydro.water_fragment's grid of the lattice, with the
    same model arguments (pipe_area, manning, fixed_substep, inertia) and sleep; its passes are its one
    kernel."""
    from .water_fragment import FragmentHexWaterGrid, FragmentWaterGrid
    if kernel is not None:
        check_kernel(kernel)
        version = ctx.version_code
        raise ValueError(f"kernel: {kernel!r} needs compute shaders (OpenGL 4.3); this context is OpenGL "
                         f"{version // 100}.{version % 100 // 10}, on which the grid runs as fragment passes "
                         f"(hydro.water_fragment); expected kernel=None here")
    cls = FragmentHexWaterGrid if hexagonal else FragmentWaterGrid
    return cls(ctx, terrain, cell_size, gravity, friction, water=water, sleep=sleep, **model)


class WaterGrid(_PipeGrid):
    """Virtual-pipes water on a square grid. Cell [y, x] covers world [x, x+1] x [y, y+1] * cell_size.

    ctx: a moderngl.Context with GL >= 4.3 (a game window's), or None for a private standalone one.
    terrain: (ny, nx) heights in world units. cell_size, gravity, friction, pipe_area: see WaterParams.
    water: optional initial depths (ny, nx), >= 0.
    kernel: None (chosen for the device and each call: on GPUs "fused" for calls of one substep and
    "blocked" for longer ones, on CPU rasterisers "cells"), or one of them for every call
    (hydro.water_kernels); all give the same water to rounding.

    Attributes: ctx (the context it lives on), nx, ny, shape ((ny, nx)), params (WaterParams),
    geometry (cell area and pipe widths of the lattice), water_texture and terrain_texture (r32f
    (nx, ny) textures, depth and bed height in world units, for a game's own shaders; valid until
    release()).
    """

    # its own signature, so that a call missing an argument is told WaterGrid.__init__(), not the base's
    def __init__(self, ctx, terrain, cell_size=1.0, gravity=9.81, friction=0.02, *, pipe_area="depth",
                 water=None, kernel=None, manning=0.0, fixed_substep=None, inertia=False, sleep=True):
        super().__init__(ctx, terrain, cell_size, gravity, friction, pipe_area=pipe_area, water=water,
                         kernel=kernel, manning=manning, fixed_substep=fixed_substep, inertia=inertia, sleep=sleep)
