"""FragmentWaterGrid and FragmentHexWaterGrid: hydro.water's model (square grid and triangular lattice;
pipes of the water's depth or of a constant area, Manning's friction, inertia, fixed substeps) as
render-to-texture passes, for OpenGL 3.3 to 4.2 core contexts (macOS: 4.1), which have no compute
shaders, storage buffers or image stores.

The arithmetic is shaders/common/model.glsl's, as the compute kernels run it (docs/design.md, "The
model"); only the schedule differs. A substep is four fragment passes, each reading the textures
it needs with texelFetch (shaders/fragment/): the boundary faces accelerated by their table entry into
a texture of a row a side (accelerate_edges.frag), each cell's faces accelerated and its outflow scale
K, a texel each (accelerate.frag; with inertia an interior face from its stencil of every axis's
flows, fragment/inertia.glsl), each cell's faces scaled by their upwind cell's K and its column moved,
the depth and the scaled faces written side by side (move.frag), and what crossed each boundary face
booked (on a grid walled all round, where no face carries anything, the middle two alone). Water and
flows ping-pong between two textures (flows: two sets of a texture an axis); the water, the flows and
the cycle's records are (nx + 1, ny + 1) texels, so one framebuffer holds them all; the boundary table
is an rg32i texture of the table's bytes (common/boundary_table.glsl under FRAGMENT).

The model's options are compile-time defines of the passes (PIPE_AREA_DEPTH, MANNING, INERTIA), as the
compute kernels' are. The ledger keeps per boundary face an unevaluated float sum
hi + lo on the GPU (book.frag), folded into float64 on the CPU when ledger() is asked or before
set_boundary() changes a face's kind.

Erosion (docs/design.md, "Erosion"): `erosion`, `sediment`, `bedrock`, `sediment_texture` and
`material()` are WaterGrid's own; _FragmentErosion runs hydro.water_erosion's passes after each substep
as fragment passes (erode_mix.frag, erode.frag, slump.frag: common/erosion.glsl's arithmetic), the
sediment crossing each boundary face booked as float pairs (book_sediment.frag), folded when ledger()
asks; material() sums the float32 textures read back in float64.

The water cycle (docs/design.md, "The water cycle"): `rain`, `evaporation`, `add_source()` and `sources`
are WaterGrid's own (hydro.water_cycle's Cycle and Source hold the rates, the rain-field and sources
textures and what rain and springs add, booked as rate x area x time of the float32 rates). With it on,
the move pass (variant CYCLE, fragment/cycle.glsl) runs common/model.glsl's cycled() on each
column after its move, owed what the move lost to rounding (moved_error()), and writes the cell's record
(what evaporation and drains took, what the column is owed) to a second render target, an rgba32f
texture that ping-pongs like the water. The stats passes (TAKEN) sum what was taken as float pairs with
the planning record, and book_cycle.frag adds the sum to a texel of the cycle's ledger, at the end of
every call and every CYCLE_FOLD substeps where something takes water; the move pass then starts the
taken amounts again from 0. The same water as WaterGrid's cell-wise kernel, to the bit in the test
context, and the same ledger; nothing of the grid is read back.

step() plans as WaterGrid does (docs/design.md, "Planning a call"), from a record of the water reduced
on the GPU (fragment/stats.glsl: the sum of the depths as a float pair, the deepest water, the lowest
bed on the edge; with inertia the fastest water, in a render target of its own), level by level down
to one texel, of which 16 bytes (with inertia 20) are read back, never the water:
- a call plans from the record queued at the end of the call before the previous one, copied into a
  pixel buffer (one of two, by the call's parity), so the GPU has nearly always finished it and which
  record a call reads never depends on the GPU's timing;
- after an edit (a brush, the water or terrain setters) the next call reduces the water as it is and
  waits for it; a call of more than MAX_CHUNK substeps does so after each MAX_CHUNK.
volume() reduces the water as it is and waits for it. With fixed_substep, step(dt) advances whole
substeps of that length and carries the remainder, planning de Almeida's weighting from the water at
the last edit (as WaterGrid's).

Sleeping tiles (docs/design.md, "Sleeping tiles"): with `sleep` (the default) a substep computes only the
tiles of 32 x 32 cells where it or a tile beside it changed in the substep before, that hold a cell beside
a side that is not a wall, or that an edit woke, as WaterGrid's cell-wise kernel does, in passes a
GL 3.3 context has (_FragmentSleep): a texel a tile says which are awake, the accelerate and move passes
draw rectangles over those instead of the whole target, and a pass at a texel a block of cells compares
the textures before and after the substep (where every tile moves, in one substep of SLEEP_CHECK). A
sleeping call's count of tiles computed, summed to a texel and copied into a fenced pixel buffer, is
read two calls later: above SLEEP_DENSE_ABOVE of the tiles, the calls compute every tile for SLEEP_RETRY
calls. `awake` reads the last call's count when asked. Calls with erosion compute every tile.

sample() and sample_async() (docs/design.md, "Asking the water between frames"): common/sample.glsl's
sample_point() in a pass of one texel a point (fragment/sample.frag), whose values are packed into a
fenced pixel buffer that the handle reads later (_FragmentSampler, _PixelRing). Gauges (add_gauge):
hydro.water_probes's Gauge handles and bookkeeping, what crossed each gauge's faces summed after every
substep by fragment/gauge.frag into float pairs, a texel a gauge, whose row each call's end copies into
a fenced pixel buffer; a gauge reads the record of the call before the latest (_FragmentGauges).
"""
from __future__ import annotations

import math
import struct
import sys

import moderngl
import numpy as np

from . import _gl, _native, _owner, lattice
from . import _validate as check
from . import boundary as bnd
from ._validate import FLOAT32_MAX
from .params import (DEPTH_MARGIN, Geometry, WaterParams, auto_substeps, check_substep_count, checked_substep, coupling,
                     fixed_substeps, max_stable_dt, model_uniforms, smoothing_weight, stable)
from .water import CYCLE_FOLD, MAX_CHUNK, MAX_SUBSTEPS   # planned as WaterGrid plans
from .hex import HexWaterGrid
from .water import _PipeGrid, check_sleep
from .water_cycle import Cycle
from .water_erosion import NO_FLOOR, erode_uniforms, erosion_uniforms, fill_texture
from .water_probes import MAX_GAUGES, SAMPLE_DRY_DEPTH, Gauge, Gauges, Sample, check_line
from .water_sleep import WAKE_RECTS, CallCounts, Wakes, open_cells

__all__ = ["FragmentWaterGrid", "FragmentHexWaterGrid"]

REQUIRED_VERSION = _gl.FRAGMENT_VERSION    # GL 3.3 core; macOS gives 4.1
SLEEP_TILE = 32             # cells a side of a sleeping tile (_FragmentSleep): a power of two, at least 8
SLEEP_BLOCK = 4             # cells a side of a block whose changes sleep_changed.frag flags in a texel
SLEEP_CHECK = 8             # while every tile is awake, one substep in so many compares the water (_FragmentSleep)
# a sleeping call that computed more than this fraction of its tiles makes the calls from two later compute
# every tile, for SLEEP_RETRY calls (as WaterGrid's Tuning.sleep_dense_above and sleep_retry)
SLEEP_DENSE_ABOVE = 0.85
SLEEP_RETRY = 32
# the defines every model pass takes (and HEX); each grid sets PIPE_AREA_DEPTH, MANNING and INERTIA by its
# parameters (_model_variant); the move pass's variants turn CYCLE on (common/cycle.glsl's rates and
# arithmetic, fragment/cycle.glsl's record texture)
MODEL_DEFINES = {"FRAGMENT": True, "PIPE_AREA_DEPTH": True, "MANNING": False, "INERTIA": False, "CYCLE": False}
MODEL_PASSES = ("accelerate_edges", "accelerate", "move", "book", "gauge")
EROSION_PASSES = ("erode_mix", "erode", "slump", "book_sediment")     # _FragmentErosion's, after each substep
# the passes whose code differs by lattice (HEX)
LATTICE_PASSES = MODEL_PASSES + EROSION_PASSES + ("sample", "stats_cells", "sleep_changed")
STATS_BLOCK = 8             # each texel of a stats level combines this many squared of the level before
# each pass's defines where it takes any (HEX too, for the lattice's passes)
PASS_DEFINES = {**{name: MODEL_DEFINES for name in MODEL_PASSES + EROSION_PASSES + ("book_cycle",)}, "sample": {},
                **{name: {**MODEL_DEFINES, "STATS_BLOCK": STATS_BLOCK, "SPEED": False}
                   for name in ("stats_cells", "stats_levels")},
                # _FragmentSleep's
                "sleep_changed": {"HEX": False, "CYCLE": False, "GATHER": 1, "FACES": False, "BLOCK": SLEEP_BLOCK},
                "sleep_reduce": {"FACTOR": 4, "MASK": False, "SUM": False}, "sleep_plan": {"WAKE_RECTS": WAKE_RECTS},
                "sleep_rects": {"SETTLED": False}, "sleep_record": {"CYCLE": True},
                # on a grid walled all round (WALLED) every boundary face is 0, read from no texture
                "accelerate": {**MODEL_DEFINES, "WALLED": False}}
TILE_PASSES = ("sleep_reduce", "sleep_plan", "sleep_rects", "sleep_record")     # alike on both lattices
# the variants of the passes that have them, as (define, value) pairs, sorted: the move pass with the water
# cycle or without (common/model.glsl's cycled() after the move; fragment/cycle.glsl), the stats passes
# adding what the cycle took or not (and with inertia the fastest water, SPEED)
NO_CYCLE = (("CYCLE", False), ("RAIN_FIELD", False), ("SOURCES", False))
NO_TAKEN = (("SPEED", False), ("TAKEN", False))
DEFAULT_VARIANTS = {"move": NO_CYCLE, "stats_cells": NO_TAKEN, "stats_levels": NO_TAKEN}
WALLED_VARIANT = (("WALLED", True),)     # accelerate.frag's on a grid walled all round
RECORD_BYTES = 16           # a stats record, rgba32f: sum hi, sum lo, deepest water, lowest edge bed
SPEED_BYTES = 4             # with inertia, after it: the fastest water, r32f
SAMPLE_ROW = 1024           # texels a row of the sample pass's points and values
GAUGE_ROW = 4096            # texels a row of the gauges' faces
_PAIRS = struct.Struct("=4f")   # a gauge slot's texel: (since added hi, lo, over the call hi, lo)
PASS_VERT = "fragment/pass.vert"        # one triangle over the target
TILES_VERT = "fragment/tiles.vert"      # a quad an awake tile


def _program(ctx, name: str, hexagonal: bool, variant: tuple = (), vertex: str = PASS_VERT):
    """The program of shaders/fragment/<name>.frag in `variant` ((define, value) pairs) and lattice, after
    the vertex shader `vertex` (a triangle over the target, or the awake tiles' quads), compiled once per
    context (hydro._gl.program)."""
    defines = PASS_DEFINES.get(name)
    if defines is not None:
        defines = {**defines, **({} if name in TILE_PASSES else {"HEX": hexagonal and name in LATTICE_PASSES}),
                   **dict(variant)}
    return _gl.program(ctx, vertex, fragment=f"fragment/{name}.frag", fragment_defines=defines)


def _texel_texture(ctx, size, components, data, dtype):
    """A texture the passes read texel by texel: nearest, not repeated."""
    tex = ctx.texture(size, components, data, dtype=dtype)
    tex.filter = (moderngl.NEAREST, moderngl.NEAREST)     # integer textures are complete only so
    tex.repeat_x = tex.repeat_y = False
    return tex


def _standalone_context():
    """A standalone context of GL >= 3.3 (EGL first on Linux)."""
    attempts = ["egl", None] if sys.platform.startswith("linux") else [None]
    errors = []
    for backend in attempts:
        try:
            return moderngl.create_standalone_context(require=REQUIRED_VERSION,
                                                      **({"backend": backend} if backend else {}))
        except Exception as exc:  # noqa: BLE001 - every backend failure is reported below
            errors.append(f"{backend or 'default'}: {exc}")
    raise _gl.HydroGLError("could not create an OpenGL 3.3 context: " + "; ".join(errors))


class FragmentWaterGrid(_owner.Simulation):
    """Virtual-pipes water on a square grid (as hydro.WaterGrid) as fragment-shader passes,
    for GL 3.3 to 4.2 core contexts. Cell [y, x] covers world [x, x+1] x [y, y+1] * cell_size.

    ctx: a moderngl.Context with GL >= 3.3, or None for a private standalone one.
    terrain: (ny, nx) heights in world units; cell_size, gravity, friction, pipe_area, manning, inertia,
    fixed_substep: see hydro.params.WaterParams. water: optional initial depths (ny, nx), >= 0.
    The water cycle as WaterGrid's: `rain` (m/s, a number or an (ny, nx) field), `evaporation` (m/s),
    `add_source(x, y, radius, rate)` (springs and drains, `source.rate`, `source.remove()`) and
    `sources`, run on the GPU at every substep and booked in ledger() under "rain", "sources",
    "evaporation" and "drains" (module docstring).
    sleep: skip the tiles where nothing moves (as WaterGrid's; settable): the same water, flows and
    ledger as computing every tile; `awake` says what fraction of tiles the last step() computed.
    The passes render into the grid's own framebuffers with the context's other state as it is: keep
    blending off while step() runs (moderngl's default). The framebuffer and viewport of the context
    before a call are restored after it; texture units from 0 up (ten at most, with erosion) are left
    bound to the grid's textures.
    """

    _kind = "FragmentWaterGrid"
    _hexagonal = False
    backend = "fragment"        # hydro.WaterGrid's is "compute"

    def __init__(self, ctx, terrain, cell_size=1.0, gravity=9.81, friction=0.02, *, pipe_area="depth",
                 water=None, manning=0.0, fixed_substep=None, inertia=False, sleep=True):
        self._released = True                     # until every resource exists
        owns_ctx = ctx is None
        if not owns_ctx:
            if not isinstance(ctx, moderngl.Context):
                raise TypeError(f"ctx: expected a moderngl.Context or None, got {type(ctx).__name__}")
            if ctx.version_code < REQUIRED_VERSION:
                raise _gl.HydroGLError(f"ctx: FragmentWaterGrid needs OpenGL 3.3; this context is OpenGL "
                                       f"{ctx.version_code // 100}.{ctx.version_code % 100 // 10}")
        self.params = WaterParams(cell_size, gravity, friction, pipe_area, manning, fixed_substep, inertia)
        self._sleep = check_sleep(sleep)
        terrain = check.field("terrain", terrain)
        if terrain.ndim != 2 or min(terrain.shape) < 1:
            raise ValueError(f"terrain: expected a 2D array (ny, nx) with ny, nx >= 1, got shape {terrain.shape}")
        self.ny, self.nx = terrain.shape
        water = (np.zeros_like(terrain) if water is None
                 else check.field("water", water, terrain.shape, nonnegative=True))
        ctx = _standalone_context() if owns_ctx else ctx
        self.ctx, self._owns_ctx = ctx, owns_ctx
        self._made = []
        try:
            self._create(terrain, water)
        except BaseException:
            self._released = False
            self.release()
            raise

    # ------------------------------------------------------------------------------------ resources

    def _texture(self, size, components, data=None, dtype="f4"):
        tex = _texel_texture(self.ctx, size, components, data, dtype)
        self._made.append(tex)
        return tex

    def _target(self, size, components=1, data=None):
        """An f32 texture the passes render into, and its framebuffer."""
        tex = self._texture(size, components, data)
        fbo = self.ctx.framebuffer(color_attachments=[tex])
        self._made.append(fbo)
        return [tex, fbo]

    def _framebuffer(self, *textures):
        """The framebuffer drawing into `textures`, in order (made on first use)."""
        key = tuple(tex.glo for tex in textures)
        fbo = self._framebuffers.get(key)
        if fbo is None:
            fbo = self._framebuffers[key] = self.ctx.framebuffer(color_attachments=list(textures))
            self._made.append(fbo)
        return fbo

    @property
    def _flows_now(self) -> tuple:
        """The current scaled flow texture of each axis."""
        return self._flow_sets[0][0]

    def _flow_inputs(self) -> dict:
        """The current flows as fragment/flows.glsl's uniforms (name -> texture; read, not changed)."""
        return self._flow_sets[0][1]

    def _create(self, terrain, water):
        ctx, nx, ny = self.ctx, self.nx, self.ny
        side = ctx.info.get("GL_MAX_TEXTURE_SIZE") or 0
        if side and max(nx, ny) + 1 > side:
            raise ValueError(f"terrain: shape {(ny, nx)} is too large for this context: its textures need "
                             f"{max(nx, ny) + 1} texels a side and GL_MAX_TEXTURE_SIZE is {side}")
        p = self.params
        self.geometry = (Geometry.hexagonal if self._hexagonal else Geometry.square)(p.cell_size)
        if p.fixed_substep is not None and not p.depth_area:
            bound = coupling(p, self.geometry, 0.0, 0.0)      # a constant area's pipes: whatever the water
            if not stable(p.fixed_substep, bound, self.geometry, p):
                limit = max_stable_dt(bound, self.geometry, p)
                raise ValueError(f"fixed_substep: {p.fixed_substep} s is beyond the stable limit {limit:.4g} s of "
                                 f"pipes of a constant area {p.pipe_area}; expected fixed_substep <= {limit:.4g}")
        # the model's defines for every model pass (MODEL_DEFINES), as the compute kernels set them
        self._model_variant = (("INERTIA", p.inertia), ("MANNING", p.manning > 0.0),
                               ("PIPE_AREA_DEPTH", p.depth_area))
        self._layout = bnd.layout(nx, ny, self._hexagonal)
        self._table = bnd.new_table(self._layout)
        count = self._layout.size
        width = min(count, side or count)
        self._table_size = (width, -(-count // width))
        zeros = np.zeros(self._table_size[0] * self._table_size[1], bnd.TABLE_DTYPE)
        zeros[:count] = self._table
        self._table_texture = self._texture(self._table_size, 2, zeros.tobytes(), dtype="i4")
        places = np.zeros((len(zeros), 4), "<i4")
        places[:count, :3] = np.stack([self._layout.array, self._layout.i, self._layout.j], axis=1)
        self._places = self._texture(self._table_size, 4, places.tobytes(), dtype="i4")
        self._framebuffers = {}                     # _framebuffer()'s, by their textures
        # the water, the flows and the cycle's records are (nx + 1, ny + 1) texels, cell or face (x, y) at
        # texel (x, y), so that the move pass writes them all at once (a framebuffer's attachments are drawn
        # where they all are); the texels of no cell or face hold 0
        faces = (nx + 1, ny + 1)
        self._terrain = [self._target((nx, ny), data=terrain.tobytes()), self._target((nx, ny))]
        padded = np.zeros((ny + 1, nx + 1), np.float32)
        padded[:ny, :nx] = water
        self._water = [self._target(faces, data=padded.tobytes()), self._target(faces, data=bytes(padded.nbytes))]
        # per axis: the (rows, columns) of its flows, as WaterGrid's flow_x, flow_y (and flow_z); the scaled
        # flows in two sets (current first) of a texture an axis, each with them by fragment/flows.glsl's
        # uniform names (what the passes bind)
        self._flow_shapes = [(ny, nx + 1), (ny + 1, nx)] + [(ny + 1, nx + 1)] * self._hexagonal
        blank = bytes(4 * faces[0] * faces[1])
        self._flow_sets = []
        for _ in range(2):
            textures = tuple(self._texture(faces, 1, blank) for _ in self._flow_shapes)
            self._flow_sets.append((textures, dict(zip(("u_flow_x", "u_flow_y", "u_flow_z"), textures))))
        # accelerate_edges.frag's boundary faces (fragment/lattice.glsl's edges layout: a row a side and axis),
        # then accelerate.frag's accelerated flows of every axis and each cell's outflow scale K, a texel
        self._edges = self._target((max(nx, ny) + 1, 8 if self._hexagonal else 4))
        self._accelerated = self._target(faces, 4)
        self._ledger = [self._target(self._table_size, 2), self._target(self._table_size, 2)]
        self._clear_ledger()
        # the stats levels (rgba32f), each STATS_BLOCK times smaller a side, the last one texel, with inertia
        # each with an r32f texture of the fastest water as a second render target (_speed); the records
        # queued at the ends of step() calls go into two pixel buffers, by the call's parity
        self._levels, self._speed, size = [], [], (nx, ny)
        while not self._levels or size != (1, 1):
            size = (-(-size[0] // STATS_BLOCK), -(-size[1] // STATS_BLOCK))
            level = self._texture(size, 4)
            if p.inertia:
                self._speed.append(self._texture(size, 1))
            fbo = ctx.framebuffer(color_attachments=[level, *self._speed[-1:]])
            self._made.append(fbo)
            self._levels.append([level, fbo])
        self._records = []
        for _ in range(2):
            self._records.append(ctx.buffer(reserve=RECORD_BYTES + SPEED_BYTES * p.inertia))
            self._made.append(self._records[-1])
        self._passes = {}                           # (name, variant) -> (program, vertex array), made on first use
        for name in MODEL_PASSES + ("brush", "stats_cells", "stats_levels"):
            self._pass(name, self._stats_variant(False) if name.startswith("stats") else DEFAULT_VARIANTS.get(name, ()))
        self._brush_weights = None
        # the water cycle (_cycle_of), made on first use: its rates and sources (a water_cycle.Cycle), each
        # cell's record as two rgba32f textures the move pass ping-pongs (_cycle_records, current first), what
        # the stats passes sum of the records per level (_taken) and the ledger of what evaporation and drains
        # took, a texel of float pairs (_cycle_ledger, current first)
        self._cycle = None
        self._cycle_records, self._taken, self._cycle_ledger = None, None, None
        self._sampler, self._last_points = None, None     # sample_async's pass and ring, made on first use
        self._gauges = None                         # add_gauge's pass and ring (_FragmentGauges), made on first use
        self._erosion = None                        # _FragmentErosion, once asked for
        self._move_variant = NO_CYCLE
        self._fresh = False                         # the records' taken amounts were added to the ledger since
        self._unfolded = False                      # a substep of the cycle ran since they were last added
        self._cycle_books = {"rain": 0.0, "sources": 0.0}     # what rain and springs added (as WaterGrid's)
        self._released = False

        self._sim_time = 0.0
        self._carry = 0.0                           # fixed_substep: seconds asked for and not yet advanced
        self._last_smoothing = 0.0
        self._iteration = 0
        self._calls = 0                             # step() calls so far
        # step() plans from the record queued at the end of the call before the previous one (_ends: the
        # calls whose ends the two buffers hold, newest last; _ring: (calls, stats) last read of them) or
        # from the stats reduced at the first call after an edit (_planned: (stats, calls then));
        # _sync_next: an edit since
        self._ends, self._ring, self._planned, self._sync_next = [], None, None, True
        self._booked = {kind: 0.0 for kind in bnd.KINDS if kind != "wall"}
        self._edits = {"brushes": 0.0, "drains": 0.0, "assigned": 0.0}
        self._sleeping = _FragmentSleep(self, SLEEP_TILE)
        self._note_boundary_bounds()
        self._initial_volume = self.volume()
        self._seal()

    def _set_sleep_tile(self, tile: int) -> None:
        """The test seam: sleeping tiles of `tile` x `tile` cells (a power of two, at least 8) from now
        on; the next substep computes every tile."""
        self._alive()
        old, self._sleeping = self._sleeping, _FragmentSleep(self, tile)
        old.release()

    def _gpu_objects(self):
        cycle = getattr(self, "_cycle", None)
        probes = [probe for probe in (getattr(self, "_sampler", None), getattr(self, "_gauges", None))
                  if probe is not None]
        sleeping = getattr(self, "_sleeping", None)
        return (list(getattr(self, "_made", [])) + ([] if cycle is None else cycle.objects()) + probes
                + ([] if sleeping is None else sleeping.objects()))

    def _pass(self, name: str, variant: tuple = (), vertex: str = PASS_VERT):
        """The program and vertex array of pass `name` in `variant` (and a model pass in the grid's model,
        _model_variant) after the vertex shader `vertex`, made on first use."""
        if "INERTIA" in PASS_DEFINES.get(name, {}):
            variant = self._model_variant + variant
        made = self._passes.get((name, variant, vertex))
        if made is None:
            prog = _program(self.ctx, name, self._hexagonal, variant, vertex)
            vao = self.ctx.vertex_array(prog, [])
            self._made.append(vao)
            made = self._passes[name, variant, vertex] = (prog, vao)
        return made

    def _clear_ledger(self):
        zeros = np.zeros(2 * self._table_size[0] * self._table_size[1], np.float32).tobytes()
        for tex, _ in self._ledger:
            tex.write(zeros)

    # ------------------------------------------------------------------------------------ state access

    @property
    def shape(self) -> tuple[int, int]:
        """(ny, nx): the shape of terrain, water and every per-cell array."""
        return (self.ny, self.nx)

    sleep = _PipeGrid.sleep             # WaterGrid's, over _FragmentSleep's passes
    surface = _PipeGrid.surface         # terrain + water, read back

    @property
    def awake(self) -> float:
        """The fraction of the grid's tiles the last step() call computed, over its substeps (1.0 before
        any); a diagnostic that reads a texel a tile back, waiting for the GPU."""
        self._alive()
        return self._sleeping.awake_fraction()

    @property
    def water_texture(self):
        """Water depth as an r32f texture, world units, for a game's own shaders (texel (x, y) is cell [y, x];
        it is (nx + 1, ny + 1) texels, the last row and column 0): the same texture until release(),
        holding the water as each call leaves it."""
        self._alive()
        return self._water[0][0]

    @property
    def terrain_texture(self):
        """Terrain height as an r32f (nx, ny) texture, world units, as water_texture."""
        self._alive()
        return self._terrain[0][0]

    def _read(self, tex, shape) -> np.ndarray:
        """The (rows, columns) = shape first texels of r32f texture `tex`, read back."""
        width, height = tex.size
        return np.frombuffer(tex.read(), np.float32).reshape(height, width)[:shape[0], :shape[1]].copy()

    @property
    def water(self) -> np.ndarray:
        """Water depth (ny, nx), world units; a NumPy copy. Settable (>= 0); booked in ledger() as
        "assigned"."""
        self._alive()
        return self._read(self._water[0][0], self.shape)

    @water.setter
    def water(self, depth):
        self._alive()
        depth = check.field("water", depth, self.shape, nonnegative=True)
        old = self.volume()
        self._water[0][0].write(depth.tobytes(), viewport=(0, 0, self.nx, self.ny))
        self._edited(None)
        self._edits["assigned"] += float(depth.astype(np.float64).sum()) * self.geometry.cell_area - old

    @property
    def terrain(self) -> np.ndarray:
        """Terrain height (ny, nx), world units; a NumPy copy. Settable; the water depths are kept."""
        self._alive()
        return self._read(self._terrain[0][0], self.shape)

    @terrain.setter
    def terrain(self, height):
        self._alive()
        height = check.field("terrain", height, self.shape)
        self._terrain[0][0].write(height.tobytes())
        self._edited(None)

    def set_terrain(self, heights, origin=(0, 0)) -> None:
        """Absolute terrain heights, an (h, w) array, for the rectangle of cells [y0 : y0 + h, x0 : x0 + w]
        with origin = (x0, y0) inside the grid, in one upload (as WaterGrid.set_terrain); the water
        depths there are kept."""
        self._alive()
        heights, x0, y0 = check.rectangle(heights, origin, self.nx, self.ny)
        h, w = heights.shape
        self._terrain[0][0].write(heights.tobytes(), viewport=(x0, y0, w, h))
        self._edited((x0, y0, w, h))

    def _flow(self, k) -> np.ndarray:
        self._alive()
        return self._read(self._flows_now[k], self._flow_shapes[k])

    # WaterGrid's flow properties, on this grid's _flow and _set_flow
    flow_x = _PipeGrid.flow_x
    flow_y = _PipeGrid.flow_y

    @property
    def flow_textures(self) -> tuple:
        """The r32f textures holding flow_x, flow_y (hex: flow_z) now, texel (x, y) of face [y, x], for a
        game's shaders (the compute grids' flow_buffers); each is (nx + 1, ny + 1) texels, those of no
        face 0. The grid swaps textures as it steps: fetch them after each step(), do not keep them."""
        self._alive()
        return self._flows_now

    def _set_flow(self, k, name, flow):
        """Flows are state too (a saved game restores them); they move water only through step()."""
        self._alive()
        flow = check.field(name, flow, self._flow_shapes[k])
        rows, cols = self._flow_shapes[k]
        self._flows_now[k].write(flow.tobytes(), viewport=(0, 0, cols, rows))
        self._sleeping.wake()

    def volume(self) -> float:
        """Total water volume (depth * cell area), world units^3: the depths summed on the GPU as float
        pairs (fragment/pairs.glsl; within 1e-14 of the float64 sum), one texel read back. Waits for the GPU to
        finish the work queued so far."""
        self._alive()
        return self._measure()["volume"]

    # ------------------------------------------------------------------------------ asking the water

    sample = _PipeGrid.sample
    _checked_points = _PipeGrid._checked_points     # check_points, skipped for the same array as the last

    def sample_async(self, points) -> Sample:
        """sample(points) without waiting, as WaterGrid.sample_async: a hydro.water_probes.Sample handle
        whose `ready` says whether its values are back and whose `result()` returns them. With no
        persistent mapping on GL 4.1, the values go into a pixel buffer read later: the pass and the
        copy are queued and fenced now, `ready` asks the fence and `result()` reads the buffer, waiting
        only if the GPU has not got there yet (where the context gives no fences, the values are read at
        once). The values are of the water as it is now, whatever is stepped after."""
        self._alive()
        points = self._checked_points(points)
        if self._sampler is None:
            self._sampler = _FragmentSampler(self)
        return self._sampler.queue(points)

    def _sample_pass(self, points, target, box) -> None:
        """fragment/sample.frag over `box` (x, y, w, h) of framebuffer `target`, the points texture's
        texels there: one point a texel."""
        inputs = {"u_water": self._water[0][0], "u_terrain": self._terrain[0][0],
                  **self._flow_inputs(), "u_points": points}
        target.viewport = box
        with self._bound():
            self._draw("sample", target, inputs, u_size=(self.nx, self.ny),
                       u_sample_face_width=float(self.geometry.face_width),
                       u_sample_min_depth=SAMPLE_DRY_DEPTH * self.params.cell_size)

    def add_gauge(self, p0, p1) -> Gauge:
        """A gauge on the line from p0 = (x0, y0) to p1 = (x1, y1), as WaterGrid.add_gauge: what crosses
        the faces whose pipes the line cuts, positive along (y1 - y0, -(x1 - x0)), summed after every
        substep (fragment/gauge.frag, as float pairs hi + lo). `gauge.discharge` (m^3/s over a call),
        `gauge.volume` (m^3 since added) and `gauge.sim_time` are of the step() call before the latest
        one, read from a fenced pixel buffer that call's end filled (hydro.water_probes.Gauge), so
        reading them does not stall a frame. Each substep of a grid with gauges runs one small pass more;
        remove them when not needed."""
        self._alive()
        line, faces = check_line(p0, p1, self.nx, self.ny, self._hexagonal)
        if self._gauges is not None and len(self._gauges.live) >= MAX_GAUGES:
            raise RuntimeError(f"{self._kind}: it has {MAX_GAUGES} gauges, the most a grid holds; remove one first")
        if self._gauges is None:
            self._gauges = _FragmentGauges(self)
        return self._gauges.add(line, faces)

    gauges = _PipeGrid.gauges

    # ------------------------------------------------------------------------------------- boundaries

    def set_boundary(self, side, kind, value=0.0, span=None) -> None:
        """Set what happens at one side of the grid, or at `span=(first, stop)` cells along it, as
        WaterGrid.set_boundary: "wall", "inflow" / "outflow" (value: total discharge of the span,
        volume/s), "level" (value: the outside surface height)."""
        self._alive()
        table = bnd.with_boundary(self._table, self._layout, side, kind, value, span)
        kinds = not np.array_equal(table["kind"], self._table["kind"])
        if kinds:
            self._fold_ledger()
        self._table = table
        width, height = self._table_size
        data = np.zeros(width * height, bnd.TABLE_DTYPE)
        data[:len(table)] = table
        self._table_texture.write(data.tobytes())
        if kinds:       # a face that is not a wall keeps its tiles awake
            self._sleeping.set_open(table, self._layout)
            self._sleeping.wake()
        self._note_boundary_bounds()

    @property
    def boundaries(self) -> dict:
        """Per side, runs of (kind, first cell, stop cell, value) as set_boundary takes them."""
        self._alive()
        return bnd.describe(self._table, self._layout)

    _note_boundary_bounds = _PipeGrid._note_boundary_bounds     # and whether every side is a wall

    def _fold_ledger(self):
        """Add what each boundary face booked on the GPU since the last fold (hi + lo, in float64) to its
        kind's total, and clear the GPU's sums."""
        sums = np.frombuffer(self._ledger[0][0].read(), np.float32).reshape(-1, 2)[:self._layout.size]
        faces = sums[:, 0].astype(np.float64) + sums[:, 1].astype(np.float64)
        kinds = self._table["kind"]
        for kind, code in bnd.KINDS.items():
            if kind != "wall":
                self._booked[kind] += math.fsum(faces[kinds == code])
        self._clear_ledger()

    def ledger(self) -> dict:
        """Where the water came from, as WaterGrid.ledger(): the start volume, what crossed each kind of
        boundary (+ in, - out), what brushes, drains (remove_water and sources' drains) and assignments
        added, what rain and springs added and evaporation took; `expected` is their sum, which volume()
        matches to float precision. Also "sediment_out" (WaterGrid's), apart from the water's. Reads the GPU's per-face sums and the cycle's texel back."""
        self._alive()
        self._fold_ledger()
        evaporated, drained = self._cycle_taken()
        out = {"initial": self._initial_volume, **self._booked, "brushes": self._edits["brushes"],
               "drains": self._edits["drains"] - drained, "assigned": self._edits["assigned"],
               "rain": self._cycle_books["rain"], "evaporation": -evaporated, "sources": self._cycle_books["sources"]}
        out["expected"] = math.fsum(out.values())
        # the sediment that crossed the sides, as WaterGrid's
        out["sediment_out"] = 0.0 if self._erosion is None else self._erosion.sediment_entered()
        return out

    def _cycle_taken(self) -> tuple[float, float]:
        """What evaporation and drains took so far (volume, float64), from the cycle's ledger texel (the
        stats passes add the records to it at the end of every call, so nothing is left out)."""
        if self._cycle_ledger is None:
            return 0.0, 0.0
        e_hi, e_lo, d_hi, d_lo = np.frombuffer(self._cycle_ledger[0][0].read(), np.float32).astype(np.float64)
        area = self.geometry.cell_area
        return (e_hi + e_lo) * area, (d_hi + d_lo) * area

    # ------------------------------------------------------------------------------------ water cycle
    # The API is WaterGrid's own (hydro.water), its methods and properties taken as they are: they work
    # through _cycle_of() and _cycle_changed(), which this grid has.

    rain = _PipeGrid.rain
    evaporation = _PipeGrid.evaporation
    add_source = _PipeGrid.add_source
    sources = _PipeGrid.sources

    def _cycle_of(self) -> "_FragmentCycle":
        """The grid's water cycle, made on first use, with the records' textures and framebuffers; the next
        step() measures the water as it is (as WaterGrid's, whose stats pass is made anew then)."""
        if self._cycle is None:
            size = (self.nx + 1, self.ny + 1)
            zeros = bytes(16 * size[0] * size[1])
            self._cycle_records = [self._texture(size, 4, zeros), self._texture(size, 4, zeros)]
            self._taken = []
            for k, level in enumerate(self._levels):
                tex = self._texture(level[0].size, 4)
                fbo = self.ctx.framebuffer(color_attachments=[level[0], tex, *self._speed[k:k + 1]])
                self._made.append(fbo)
                self._taken.append([tex, fbo])
            self._cycle_ledger = [self._target((1, 1), 4, bytes(16)), self._target((1, 1), 4, bytes(16))]
            self._cycle = _FragmentCycle(self)
            self._sync_next, self._ends = True, []
        return self._cycle

    def _cycle_changed(self) -> None:
        """The cycle's rates changed: the move pass's variant follows them (the cycle on or off, a rain
        field, sources), made on first use."""
        defines = self._cycle.defines
        self._move_variant = (("CYCLE", defines["CYCLE"]), ("RAIN_FIELD", defines["RAIN_FIELD"]),
                              ("SOURCES", defines["SOURCES"]))
        self._sleeping.wake()                       # the new rates reach every cell

    @property
    def _cycle_on(self) -> bool:
        return dict(self._move_variant)["CYCLE"]

    # ---------------------------------------------------------------------------------------- erosion
    # WaterGrid's API (hydro.water), its properties and methods taken as they are: they work through
    # _erosion_of() and _read_texture(), which this grid has.

    erosion = _PipeGrid.erosion
    sediment = _PipeGrid.sediment
    bedrock = _PipeGrid.bedrock
    sediment_texture = _PipeGrid.sediment_texture
    material = _PipeGrid.material

    def _erosion_of(self) -> "_FragmentErosion":
        if self._erosion is None:
            self._erosion = _FragmentErosion(self)
        return self._erosion

    def _read_texture(self, tex) -> np.ndarray:
        return self._read(tex, self.shape)

    # ---------------------------------------------------------------------------------------- brushes

    def _brush(self, x, y, radius, normalise: bool):
        """The box origin a brush touches, its float32 weights there (hydro.lattice.brush_box; scaled to
        sum to about 1 where `normalise`) and their float64 sum. Raises if it touches no cell."""
        x, y = check.real32("x", x), check.real32("y", y)
        radius = check.real32("radius", radius, low=0.0, low_open=True)
        box = lattice.brush_box(self.shape, x, y, radius, self._hexagonal)
        if box is None:
            raise ValueError(f"x, y: a brush of radius {radius} at ({x}, {y}) reaches no cell of the "
                             f"{self.nx} x {self.ny} grid: its centre is off the grid (cells are at "
                             f"x = 0 .. {self.nx - 1}, y = 0 .. {self.ny - 1}) and it reaches no cell centre")
        x0, y0, weights = box
        if normalise:
            weights = weights / weights.sum()
        weights = weights.astype(np.float32)
        return (x0, y0), weights, float(weights.sum(dtype=np.float64))

    def dig(self, x, y, radius, depth) -> None:
        """Lower the terrain by `depth` (world units) at the centre of a smooth round brush of `radius`
        cells around grid point (x, y) (the centre of cell [y, x]); a negative depth raises it. Water
        depth is kept. A brush that reaches no cell centre acts on the cell nearest (x, y)."""
        self._alive()
        origin, weights, _ = self._brush(x, y, radius, normalise=False)
        depth = check.real32("depth", depth)
        self._draw_brush(self._terrain, origin, weights, -depth, (-3.0e38, 3.0e38))
        self._edited((*origin, weights.shape[1], weights.shape[0]))

    def add_water(self, x, y, radius, volume) -> None:
        """Add exactly `volume` (world units^3, >= 0; to float32 rounding) of water under a smooth round
        brush of `radius` cells around grid point (x, y) (as dig); booked in ledger() as "brushes"."""
        self._alive()
        origin, weights, total = self._brush(x, y, radius, normalise=True)
        volume = check.real32("volume", volume, low=0.0)
        amount = check.real32("volume", volume / (total * self.geometry.cell_area))   # a float32 depth
        self._draw_brush(self._water, origin, weights, amount, (-FLOAT32_MAX, FLOAT32_MAX))
        self._edited((*origin, weights.shape[1], weights.shape[0]))
        self._edits["brushes"] += volume

    def remove_water(self, x, y, radius, volume) -> None:
        """Take up to `volume` (world units^3, >= 0) of water under a smooth round brush of `radius` cells
        around grid point (x, y), as add_water (a drain). Cells give at most what they hold, so less may
        be taken; what was taken is booked in ledger() under "drains" (read back over the brush's box:
        the float32 depths before and after, whose differences float64 holds exactly)."""
        self._alive()
        origin, weights, total = self._brush(x, y, radius, normalise=True)
        volume = check.real32("volume", volume, low=0.0)
        amount = check.real32("volume", volume / (total * self.geometry.cell_area))
        box = (*origin, weights.shape[1], weights.shape[0])
        before = self._read_box(box)
        self._draw_brush(self._water, origin, weights, -amount, (0.0, FLOAT32_MAX))
        taken = before - self._read_box(box)
        self._edited(box)
        self._edits["drains"] -= math.fsum(taken.ravel()) * self.geometry.cell_area

    def _read_box(self, box) -> np.ndarray:
        """The water over box (x0, y0, w, h), float64 of the float32 depths."""
        data = self._water[0][1].read(viewport=box, components=1, dtype="f4")
        return np.frombuffer(data, np.float32).astype(np.float64)

    def _draw_brush(self, field, origin, weights, amount, bounds):
        """field (a ping-pong pair) plus amount * weights over the box at origin, rendered into the spare
        texture and copied back, so the field's texture stays the one water_texture / terrain_texture
        hand out."""
        if self._brush_weights is not None:
            self._made.remove(self._brush_weights)
            self._brush_weights.release()
            self._brush_weights = None
        self._brush_weights = self._texture((weights.shape[1], weights.shape[0]), 1, weights.tobytes())
        with self._bound():
            self._draw("brush", field[1][1], {"u_field": field[0][0], "u_weights": self._brush_weights},
                       u_size=(self.nx, self.ny), u_origin=origin, u_amount=amount, u_bounds=bounds)
            self.ctx.copy_framebuffer(field[0][1], field[1][1])

    # --------------------------------------------------------------------------------------- stepping

    def _edited(self, box) -> None:
        """The water or terrain changed otherwise than by stepping, in the cells `box` (x0, y0, width,
        height) or anywhere (None): the tiles there wake, and the next step() plans from them as they are
        then."""
        self._sleeping.wake(box)
        self._sync_next = True

    def _reduce(self) -> None:
        """Queue the reduction of the water and terrain as they are into the last stats level (one texel);
        nothing waits. Where a substep of the water cycle ran since the last one, the passes also sum what
        evaporation and drains took (the cells' records, TAKEN) and book_cycle.frag adds it to the cycle's
        ledger texel, after which the move pass starts those amounts again from 0 (_fresh)."""
        levels, taken, speed = self._levels, self._unfolded, self.params.inertia
        variant = self._stats_variant(taken)
        targets = [pair[1] for pair in (self._taken if taken else levels)]
        cells = {"u_water": self._water[0][0], "u_terrain": self._terrain[0][0]}
        if taken:
            cells["u_record"] = self._cycle_records[0]
        extra = {}
        if speed:
            cells.update(self._flow_inputs())
            extra["u_face_width"] = self.geometry.face_width
        with self._bound():
            self._draw("stats_cells", targets[0], cells, variant, u_size=(self.nx, self.ny), **extra)
            for k in range(1, len(levels)):
                inputs = {"u_level": levels[k - 1][0]}
                if taken:
                    inputs["u_taken_level"] = self._taken[k - 1][0]
                if speed:
                    inputs["u_speed_level"] = self._speed[k - 1]
                self._draw("stats_levels", targets[k], inputs, variant)
            if taken:
                books = self._cycle_ledger
                self._draw("book_cycle", books[1][1], {"u_books": books[0][0], "u_taken": self._taken[-1][0]})
                books.reverse()
                self._unfolded, self._fresh = False, True

    def _stats_variant(self, taken: bool) -> tuple:
        """The stats passes' variant: with inertia the fastest water too (SPEED), adding what the cycle
        took or not (TAKEN)."""
        return (("SPEED", self.params.inertia), ("TAKEN", taken))

    def _record(self, data) -> dict:
        """The stats of a record's bytes: volume (the pair's sum in float64, times the cell area), the
        deepest water, the lowest bed on the grid's edge and, with inertia, the fastest water."""
        values = np.frombuffer(data, np.float32)
        hi, lo, deepest, lowest = values[:4]
        return {"volume": (float(hi) + float(lo)) * self.geometry.cell_area, "max_depth": float(deepest),
                "min_terrain": float(lowest), "max_speed": float(values[4]) if len(values) > 4 else 0.0}

    def _measure(self) -> dict:
        """The stats of the water as it is now (reduced, then its one texel read: waits for the GPU)."""
        self._reduce()
        return self._record(self._levels[-1][0].read() + (self._speed[-1].read() if self._speed else b""))

    def _queue_end(self) -> None:
        """At the end of a step() call: its record, copied into the pixel buffer of the call's parity,
        not waited for."""
        self._reduce()
        self._levels[-1][1].read_into(self._records[self._calls % 2], components=4, dtype="f4")
        if self._speed:
            self._levels[-1][1].read_into(self._records[self._calls % 2], components=1, attachment=1, dtype="f4",
                                          write_offset=RECORD_BYTES)
        self._ends = (self._ends + [self._calls])[-2:]

    def _planning_stats(self) -> tuple[dict, int]:
        """The stats a step() call plans from and how many calls before this one they were taken (as
        WaterGrid's): after an edit, the water as it is now (waiting for the GPU); else the newer of those
        and the record queued at the end of the call before the previous one, read from its buffer
        (waiting only for the work queued before it, nearly always done). Never the previous call's
        record, whose readiness would depend on the GPU's timing."""
        if self._sync_next:
            self._sync_next = False
            self._planned = (self._measure(), self._calls)
        best = self._planned
        if len(self._ends) == 2 and self._ends[0] > best[1]:
            calls = self._ends[0]
            if self._ring is None or self._ring[0] != calls:
                self._ring = (calls, self._record(self._records[calls % 2].read()))
            best = (self._ring[1], calls)
        return best[0], self._calls - best[1]

    def _coupling(self, stats, dt, margin=1.0) -> float:
        """hydro.params.coupling of the coming `dt` for this grid (as WaterGrid's), the deepest water
        taken `margin` times deeper than measured."""
        return coupling(self.params, self.geometry, stats["max_depth"] * margin, dt,
                        max_cell_inflow=self._max_cell_inflow,
                        max_supply=0.0 if self._cycle is None else self._cycle.max_supply,
                        max_level=self._max_level, min_edge_bed=stats.get("min_terrain", 0.0))

    def _auto_substeps(self, stats, dt, lag=0) -> int:
        """Substeps for `dt` from stats taken `lag` step() calls before this one: the deepest water (and
        with inertia the fastest) may have grown by DEPTH_MARGIN in each of those calls and in this one
        (as WaterGrid's)."""
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
        """Advance the simulation by `dt` seconds; returns the number of substeps taken. Without
        `substeps`, stable substeps are chosen from the exact bound (hydro.params.stable) for the deepest
        water measured at the end of the call before the previous one, with a margin for two calls of
        growth (after an edit: as it is now, with a margin for this call; re-measured every MAX_CHUNK
        substeps); with `substeps`, dt/substeps must be stable for the water so measured, or ValueError
        is raised before anything runs. A pipe deeper than its substep is stable for is treated as that
        deep. With inertia the substeps keep the fastest water within half a cell each too, and de
        Almeida's weighting is scaled for the deepest water measured. With fixed_substep, whole substeps
        of it (module docstring). Nothing of the water is read back (module docstring)."""
        self._alive()
        dt = check.real32("dt", dt, low=0.0, low_open=True)
        if substeps is not None:
            substeps = check.integer("substeps", substeps, low=1, high=MAX_SUBSTEPS)
        if self.params.fixed_substep is not None:
            return self._step_fixed(dt, substeps)
        stats, lag = self._planning_stats()
        self._sleeping.begin_call(self._calls)
        if substeps is not None:
            sub = checked_substep(dt, substeps, self._coupling(stats, dt), self.geometry, self.params, "measured")
            self._run(sub, substeps, stats["max_depth"])
            done = substeps
        else:
            n = self._auto_substeps(stats, dt, lag)
            check_substep_count(n, dt, MAX_SUBSTEPS)
            done, remaining = 0, dt
            while True:
                sub = remaining / n
                chunk = min(n, MAX_CHUNK)
                self._run(sub, chunk, stats["max_depth"])
                done += chunk
                if chunk == n:
                    break
                remaining -= sub * chunk
                stats = self._measure()
                n = max(1, min(self._auto_substeps(stats, remaining), MAX_SUBSTEPS - done))
        self._sim_time += dt
        self._calls += 1
        self._end_gauges(dt)
        self._queue_end()
        return done

    def _step_fixed(self, dt: float, substeps) -> int:
        """step() with fixed_substep: the whole substeps of it that dt and the carried remainder hold (as
        WaterGrid's), de Almeida's weighting scaled for the water at the last edit."""
        fixed = self.params.fixed_substep
        n, carry = fixed_substeps(self._carry, dt, fixed, substeps, MAX_SUBSTEPS)
        self._sleeping.begin_call(self._calls)
        if n:
            if self._sync_next:                       # the water as the last edit left it
                self._sync_next = False
                self._planned = (self._measure(), self._calls)
            self._run(fixed, n, self._planned[0]["max_depth"])
        self._carry = carry
        self._sim_time += n * fixed
        self._calls += 1
        if n:
            self._end_gauges(n * fixed)
        self._queue_end()
        return n

    def _end_gauges(self, seconds: float) -> None:
        """A call advanced the water by `seconds`: the gauges record their sums (as WaterGrid's)."""
        if self._gauges is not None and self._gauges.live:
            self._gauges.end_call(self._sim_time, seconds)

    def _uniforms(self, dt: float, smoothing: float = 0.0) -> dict:
        """common/model.glsl's uniforms for a substep of dt (params.model_uniforms)."""
        return model_uniforms(self.params, self.geometry, (self.nx, self.ny), dt, smoothing, self._hexagonal)

    def _run(self, sub: float, n: int, depth: float = 0.0) -> None:
        """n substeps of `sub` seconds, nothing read back; with inertia, de Almeida's weighting is scaled
        for water `depth` deep. Where the water cycle takes water (evaporation, drains), in runs of at
        most CYCLE_FOLD substeps, each followed by the stats passes, which add what it took (summed in
        float32 in each cell's record) to the ledger, so that sum stays short (as WaterGrid's)."""
        if not (self._cycle_on and self._cycle.takes):
            self._run_chunk(sub, n, depth)
            return
        for first in range(0, n, CYCLE_FOLD):
            if first:
                self._reduce()
            self._run_chunk(sub, min(CYCLE_FOLD, n - first), depth)

    def _run_chunk(self, sub: float, n: int, depth: float) -> None:
        p = self.params
        # de Almeida's weight of the call's substeps, kept for the tests' reference (WaterGrid's _last_call)
        self._last_smoothing = smoothing_weight(sub, depth, self.geometry, p) if p.inertia else 0.0
        uniforms = self._uniforms(sub, self._last_smoothing)
        cycle = None
        if self._cycle_on:
            cycle = {"u_rain": 0.0 if isinstance(self._cycle.rain, np.ndarray) else self._cycle.rain,
                     "u_evaporation": self._cycle.evaporation}
        hook = self._gauges.hook if self._gauges is not None and self._gauges.live else None
        erosion = self._erosion if self._erosion is not None and self._erosion.params is not None else None
        if erosion is not None:
            eroding = erosion.uniforms(uniforms, sub)
        # erosion changes beds where no water moves: it keeps every tile computed
        sleep = self._sleeping if self._sleep and erosion is None and self._sleeping.sleeps(self._calls) else None
        with self._bound():
            if sleep is None:
                self._sleeping.dense(n)
            elif self._fresh:           # what the records took was booked: cleared in both textures
                self._sleeping.clear_taken()
                self._fresh = False
            for _ in range(n):
                self._substep(uniforms, cycle, sleep)
                if erosion is not None:         # after the substep, from its scaled flows and water
                    erosion.substep(eroding)
                if hook is not None:
                    hook(sub)
            if n % 2:                   # the water back in the texture water_texture hands out
                self.ctx.copy_framebuffer(self._water[1][1], self._water[0][1])
                self._water.reverse()
                if erosion is not None:
                    erosion.settle()
        self._iteration += n
        if cycle is not None:           # the substeps of the float32 length the GPU takes (as WaterGrid's)
            seconds = float(np.float32(sub)) * n
            self._cycle_books["rain"] += seconds * self._cycle.rain_rate
            self._cycle_books["sources"] += seconds * self._cycle.spring_rate

    def _substep(self, u: dict, cycle: dict | None = None, sleep: "_FragmentSleep | None" = None) -> None:
        """One substep; with `sleep` over the tiles its plan wakes, flagging those it changes."""
        if sleep is not None:
            sleep.plan()
        columns = {"u_terrain": self._terrain[0][0], "u_water": self._water[0][0], **self._flow_inputs(),
                   "u_boundary_table": self._table_texture}
        walled = self._all_walls          # no face carries anything: no boundary or ledger pass
        if not walled:
            self._draw("accelerate_edges", self._edges[1], columns, **u)
        cells = None if sleep is None else sleep.cells
        self._draw("accelerate", self._accelerated[1], {**columns, "u_edges": self._edges[0]},
                   WALLED_VARIANT if walled else (), tiles=cells, **u)
        inputs = {"u_water": columns["u_water"], "u_accelerated": self._accelerated[0]}
        targets = [self._water[1][0], *self._flow_sets[1][0]]
        if cycle is None:
            self._draw("move", self._framebuffer(*targets), inputs, NO_CYCLE, tiles=cells, **u)
        else:
            records = self._cycle_records
            inputs["u_record"] = records[0]
            if self._cycle.rain_texture is not None and isinstance(self._cycle.rain, np.ndarray):
                inputs["u_rain_field"] = self._cycle.rain_texture
            if self._cycle.sources:
                inputs["u_sources"] = self._cycle.sources_texture
            self._draw("move", self._framebuffer(*targets, records[1]), inputs, self._move_variant, tiles=cells,
                       u_fresh=self._fresh, **cycle, **u)
            records.reverse()
            self._fresh, self._unfolded = False, True
        self._water.reverse()
        self._flow_sets.reverse()
        if sleep is not None:
            sleep.flag(cycle is not None)
        if not walled:
            self._draw("book", self._ledger[1][1], {"u_ledger": self._ledger[0][0], "u_places": self._places,
                                                    **self._flow_inputs()}, u_count=self._layout.size, **u)
            self._ledger.reverse()

    def _draw(self, name, target, textures: dict, variant: tuple | None = None, tiles: dict | None = None,
              **uniforms) -> None:
        """Run pass `name` (in `variant`, else its default one) over every texel of framebuffer `target`, or
        over the awake tiles' texels (`tiles`: _FragmentSleep.quads()' rectangles and tiles.vert's
        uniforms), reading `textures` (uniform name -> texture, given units in order)."""
        variant = DEFAULT_VARIANTS.get(name, ()) if variant is None else variant
        if tiles is not None:
            textures = {**textures, "u_rects": tiles["u_rects"]}
            uniforms.update(tiles["uniforms"])
        prog, vao = self._pass(name, variant, PASS_VERT if tiles is None else TILES_VERT)
        for unit, (uniform, tex) in enumerate(textures.items()):
            tex.use(unit)
            uniforms[uniform] = unit
        _gl.set_uniforms(prog, **uniforms)
        target.use()
        if tiles is None:
            vao.render(moderngl.TRIANGLES, vertices=3)
        else:
            vao.render(moderngl.TRIANGLE_STRIP, vertices=4, instances=tiles["count"])

    class _Bound:
        """Binds back the framebuffer and viewport the context had before the passes ran: the one
        moderngl knows as ctx.fbo, or where it knows none (a standalone context) the one GL had bound,
        so that no deleted framebuffer of a released grid is left bound."""

        def __init__(self, ctx):
            self.ctx, self.fbo, self.viewport = ctx, ctx.fbo, ctx.viewport
            self.bound = ctx.detect_framebuffer() if ctx.fbo is None else None

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            (self.fbo or self.bound).use()
            self.ctx.fbo = self.fbo
            self.ctx.viewport = self.viewport

    def _bound(self):
        return self._Bound(self.ctx)

    def __repr__(self):
        state = "released" if self._released else f"t={self.sim_time:.3f}s"
        return f"{self._kind}({self.nx}x{self.ny}, cell_size={self.params.cell_size}, {state})"


class _PixelRing:
    """`slots` pixel buffers of `size` bytes, each filled by a copy out of a framebuffer and fenced
    (glFenceSync: GL 3.2): push(fbo, seq, viewport) queues the copy of the viewport's rgba32f texels into
    buffer seq % slots; done(seq) asks its fence without waiting; record(seq, size) reads the buffer,
    waiting only for that copy if the GPU has not got there yet. create() returns None where moderngl
    gives no function loader (no fences): the caller then reads at once."""

    @classmethod
    def create(cls, ctx, size: int, slots: int):
        gl = _native.gl_functions(ctx, _native.FENCE_SIGNATURES)
        return None if gl is None else cls(ctx, gl, size, slots)

    def __init__(self, ctx, gl, size: int, slots: int):
        self.slots, self.fences, self.buffers = slots, _native.Fences(gl, slots), []
        try:
            self.buffers = [ctx.buffer(reserve=size) for _ in range(slots)]
        except BaseException:
            self.release()
            raise

    def push(self, fbo, seq: int, viewport, components: int = 4, attachment: int = 0) -> None:
        slot = seq % self.slots
        fbo.read_into(self.buffers[slot], viewport, components, attachment=attachment, dtype="f4")
        self.fences.set(slot)

    def done(self, seq: int) -> bool:
        """Whether record `seq` is in its buffer; never waits (flushes, so it gets there)."""
        return self.fences.done(seq % self.slots)

    def record(self, seq: int, size: int = -1) -> bytes:
        return self.buffers[seq % self.slots].read(size)

    def release(self) -> None:
        """Free the buffers and fences (idempotent)."""
        self.fences.release()
        for buffer in self.buffers:
            buffer.release()
        self.buffers = []


class _FragmentSampler:
    """A fragment grid's samples (as hydro.water_probes.Sampler, whose Sample handles it gives): the
    points an rg32f texture and the values an rgba32f target, SAMPLE_ROW texels a row, point i at texel
    (i % SAMPLE_ROW, i // SAMPLE_ROW); each request's texels are packed into a pixel buffer of a ring of
    SLOTS behind a fence (_PixelRing), and read when its handle asks. Made on the first sample; a request
    of more points than the textures hold makes them again, after taking those on their way."""

    SLOTS = 8                   # requests that can be on their way at once; the next takes the oldest

    def __init__(self, grid):
        self.grid, self.ctx = grid, grid.ctx
        self.capacity, self.points, self.target, self.ring = 0, None, None, None
        self.sent = None                    # the points in the texture (bytes)
        self.seq = 0
        self.waiting = {}                   # seq -> Sample whose values are in a pixel buffer, not yet read

    def _grow(self, count: int) -> None:
        for handle in list(self.waiting.values()):
            self.take(handle)
        self.release()
        self.capacity = max(64, 1 << (count - 1).bit_length())
        width = min(self.capacity, SAMPLE_ROW)
        size = (width, self.capacity // width)
        self.points = self.ctx.texture(size, 2, dtype="f4")
        values = self.ctx.texture(size, 4, dtype="f4")
        self.target = (values, self.ctx.framebuffer(color_attachments=[values]))
        for tex in (self.points, values):
            tex.filter = (moderngl.NEAREST, moderngl.NEAREST)
        self.ring = _PixelRing.create(self.ctx, 16 * self.capacity, self.SLOTS)   # None: values read at once

    def queue(self, points: np.ndarray) -> Sample:
        """Queue the pass for `points` (checked (N, 2) float32) and the copy of its values."""
        count = len(points)
        if count > self.capacity:
            self._grow(count)
        width = self.points.size[0]
        box = (0, 0, width, -(-count // width))
        data = points.tobytes()
        if data != self.sent:               # a game often asks at the same points: they are there already
            rows = np.zeros((box[2] * box[3], 2), np.float32)
            rows[:count] = points
            self.points.write(rows.tobytes(), viewport=box)
            self.sent = data
        self.grid._sample_pass(self.points, self.target[1], box)
        if self.ring is None:
            return Sample(self, 0, count, self._values(self.target[1].read(box, 4, dtype="f4"), count))
        self.seq += 1
        overwritten = self.waiting.get(self.seq - self.SLOTS)
        if overwritten is not None:         # its buffer is taken next: read it first
            self.take(overwritten)
        self.ring.push(self.target[1], self.seq, box)
        handle = self.waiting[self.seq] = Sample(self, self.seq, count)
        return handle

    def done(self, handle: Sample) -> bool:
        """Whether the request's values are in its buffer; never waits."""
        self.grid._alive()
        return self.ring.done(handle._seq)

    def take(self, handle: Sample) -> None:
        """Read a request's values out of its buffer, waiting for the GPU if it is not done."""
        self.grid._alive()
        handle._values = self._values(self.ring.record(handle._seq, 16 * handle._count), handle._count)
        del self.waiting[handle._seq]

    @staticmethod
    def _values(data: bytes, count: int) -> np.ndarray:
        return np.frombuffer(data, np.float32, 4 * count).reshape(count, 4)

    def release(self) -> None:
        """Free the textures, buffers and fences (the grid's release(); idempotent)."""
        for obj in (self.points, *(self.target or ()), self.ring):
            if obj is not None:
                obj.release()
        self.points, self.target, self.ring, self.waiting = None, None, None, {}


class _FragmentGauges(Gauges):
    """A fragment grid's gauges: hydro.water_probes.Gauges's bookkeeping and Gauge handles (add, remove,
    read: one call late), its GPU side as fragment passes. Per gauge slot a texel of an rgba32f target,
    (volume since added, volume over the call) as float pairs hi + lo, which fragment/gauge.frag adds
    to after every substep (hook), ping-ponging; its faces (an rgba32i texture, GAUGE_ROW texels a row)
    and each slot's range of them (an rg32i texture) uploaded at each add and remove. At the end of every
    call that advanced the water the row is copied into a pixel buffer of a ring of SLOTS behind a fence
    (_PixelRing; without fences it is read then), and a gauge reads the record before the newest."""

    held = ("ranges", "faces", "ring")

    def __init__(self, grid):        # Gauges' bookkeeping; its compute programs and buffers are not made
        self.owner, self.ctx = grid, grid.ctx
        self.live, self.count, self.first = {}, 0, True
        self.seq, self.kept, self.last = 0, {}, None
        self.sums, self.ranges, self.faces, self.ring = [], None, None, None
        try:
            for _ in range(2):
                tex = self.ctx.texture((MAX_GAUGES, 1), 4, bytes(16 * MAX_GAUGES), dtype="f4")
                self.sums.append([tex, None])
                tex.filter = (moderngl.NEAREST, moderngl.NEAREST)
                self.sums[-1][1] = self.ctx.framebuffer(color_attachments=[tex])
            self.ranges = self._integer_texture((MAX_GAUGES, 1), 2, bytes(8 * MAX_GAUGES))
            self.faces = self._integer_texture((1, 1), 4, bytes(16))
            self.ring = _PixelRing.create(self.ctx, 16 * MAX_GAUGES, self.SLOTS)
        except BaseException:
            self.release()
            raise

    def _integer_texture(self, size, components, data):
        tex = self.ctx.texture(size, components, data, dtype="i4")
        tex.filter = (moderngl.NEAREST, moderngl.NEAREST)     # integer textures are complete only so
        return tex

    def objects(self) -> list:
        return super().objects() + [obj for pair in self.sums for obj in pair if obj is not None]

    def release(self) -> None:
        super().release()
        self.sums = []

    def _start(self, slot: int) -> None:
        self.sums[0][0].write(bytes(16), viewport=(slot, 0, 1, 1))

    def _upload(self) -> None:
        """Every live gauge's faces, in slot order, and each slot's (first, count) of them."""
        ranges, faces = self._table()
        first = len(faces)
        width = min(max(first, 1), GAUGE_ROW)
        table = np.zeros((-(-max(first, 1) // width) * width, 4), np.int32)
        table[:first] = faces
        made = self._integer_texture((width, len(table) // width), 4, table.tobytes())
        self.faces.release()
        self.faces = made
        self.ranges.write(ranges.tobytes())
        self.count = max(self.live) + 1 if self.live else 0

    def hook(self, dt: float) -> None:
        """After each substep (FragmentWaterGrid._run_chunk): add what crossed every gauge in it, from the
        scaled flows the substep left."""
        flows = self.owner._flow_inputs()
        self.owner._draw("gauge", self.sums[1][1], {"u_sums": self.sums[0][0], "u_ranges": self.ranges,
                                                    "u_faces": self.faces, **flows}, u_dt=dt, u_first=self.first)
        self.sums.reverse()
        self.first = False

    def _keep(self, seq: int) -> tuple:
        if self.ring is not None:
            self.ring.push(self.sums[0][1], seq, (0, 0, MAX_GAUGES, 1))
            return ()
        return (self.sums[0][1].read(components=4, dtype="f4"),)

    @staticmethod
    def _sums(data: bytes, slot: int) -> tuple[float, float]:
        since_hi, since_lo, call_hi, call_lo = _PAIRS.unpack_from(data, 16 * slot)
        return call_hi + call_lo, since_hi + since_lo


class _FragmentCycle(Cycle):
    """hydro.water_cycle.Cycle for a fragment grid: the same rates, sources, rain-field and sources textures
    and books; each cell's record is the grid's pair of textures instead of Cycle's storage buffers."""

    def __init__(self, grid):
        super().__init__(grid, grid, records=False)     # the grid has the ctx, nx, ny and geometry Cycle reads


class _FragmentErosion:
    """A fragment grid's erosion (hydro.water_erosion.ErosionState's state and passes): the sediment,
    the bedrock and what rounding owes each bed, as textures; after each substep erode_mix.frag (each
    cell's concentration), erode.frag (the sediment carried, the exchange with the bed: a scratch bed, the
    sediment and what is owed, three render targets), slump.frag (the terrain and what is owed) and
    book_sediment.frag (what crossed each boundary face, float pairs hi + lo per table entry, folded into
    float64 when asked). Terrain and sediment ping-pong once a substep, the owed twice; an odd count of
    substeps is copied back (settle()), so terrain_texture and sediment_texture stay the same textures."""

    def __init__(self, grid):
        self.grid, self.params, self.has_bedrock = grid, None, False
        size = (grid.nx, grid.ny)
        self._sediment = [grid._target(size), grid._target(size)]
        self._owed = [grid._target(size), grid._target(size)]
        self._concentration, self._eroded = grid._target(size), grid._target(size)
        self.bedrock = grid._texture(size, 1)
        for texture, _ in self._sediment + self._owed:
            fill_texture(texture, 0.0)
        fill_texture(self.bedrock, NO_FLOOR)
        table = grid._table_size
        blank = np.zeros(2 * table[0] * table[1], np.float32).tobytes()
        self._ledger = [grid._target(table, 2, blank), grid._target(table, 2, blank)]
        self._entered = 0.0                 # folded from the ledger's pairs so far

    @property
    def sediment(self):
        """The sediment's texture now (the one sediment_texture hands out between calls)."""
        return self._sediment[0][0]

    def uniforms(self, model: dict, dt: float) -> dict:
        """The passes' uniforms for a call's substeps of dt: the model's and common/erosion.glsl's."""
        return dict(model, **erosion_uniforms(self.params, self.grid.geometry, dt))

    def substep(self, u: dict) -> None:
        """The three passes and the booking after a substep, whose scaled flows and water are the grid's
        current textures."""
        g = self.grid
        water, terrain, sediment, owed = g._water[0][0], g._terrain[0][0], self._sediment[0][0], self._owed[0][0]
        flows = g._flow_inputs()
        g._draw("erode_mix", self._concentration[1], {"u_water": water, "u_sediment": sediment, **flows}, **u)
        g._draw("erode", g._framebuffer(self._eroded[0], self._sediment[1][0], self._owed[1][0]),
                {"u_water": water, **flows, "u_terrain": terrain, "u_sediment": sediment, "u_owed": owed,
                 "u_concentration": self._concentration[0], "u_bedrock": self.bedrock},
                **u, **erode_uniforms(g.geometry, g.params.cell_size))
        g._draw("book_sediment", self._ledger[1][1], {"u_ledger": self._ledger[0][0], "u_places": g._places,
                                                      "u_concentration": self._concentration[0], **flows},
                u_count=g._layout.size, **u)
        self._sediment.reverse()
        self._ledger.reverse()
        g._draw("slump", g._framebuffer(g._terrain[1][0], self._owed[0][0]),
                {"u_eroded": self._eroded[0], "u_bedrock": self.bedrock, "u_owed": self._owed[1][0]}, **u)
        g._terrain.reverse()

    def settle(self) -> None:
        """After an odd count of substeps: terrain and sediment back in the textures handed out."""
        for pair in (self.grid._terrain, self._sediment):
            self.grid.ctx.copy_framebuffer(pair[1][1], pair[0][1])
            pair.reverse()

    def material(self) -> float:
        """(bed + sediment + what rounding owes the bed) x cell area, in float64 of the float32 textures
        read back (each column summed, then the columns exactly, as material.comp's); waits."""
        g = self.grid
        total = sum(g._read(tex, g.shape).astype(np.float64)
                    for tex in (g._terrain[0][0], self._sediment[0][0], self._owed[0][0]))
        return math.fsum(total.sum(axis=0)) * g.geometry.cell_area

    def sediment_entered(self) -> float:
        """The sediment volume that crossed the sides into the grid (negative: out), the GPU's pairs
        folded into float64 and cleared; waits."""
        pairs = np.frombuffer(self._ledger[0][0].read(), np.float32).astype(np.float64)
        self._entered += math.fsum(pairs[:2 * self.grid._layout.size])
        self._ledger[0][0].write(np.zeros(len(pairs), np.float32).tobytes())
        return self._entered


class _FragmentSleep(Wakes):
    """A fragment grid's sleeping tiles (as hydro.water_sleep's for the cell-wise kernel; docs/design.md,
    "Sleeping tiles"): a tile of `tile` x `tile` cells is computed in a substep only where it or a tile
    beside it changed in the substep before, where it holds a cell beside a side that is not a wall, or
    where an edit woke it. Per substep, nothing read back: sleep_plan.frag writes a texel a tile,
    whether it is awake (and adds it to the call's count), and sleep_rects.frag the awake tiles as a few
    rectangles, which the accelerate and move passes draw (tiles.vert) instead of the whole target; then
    sleep_changed.frag flags the blocks of the awake tiles whose water changed, and in the awake tiles
    where none did, those whose stored faces or records changed, and sleep_reduce.frag reduces the flags
    to a texel a tile for the next plan. Where every tile is awake, not by an edit that woke them all,
    the water is compared in one substep of SLEEP_CHECK only (`unchecked`: tiles.vert draws no block,
    sleep_rects.frag no settled tile) and the plan after each of the others wakes every tile. Where most
    tiles move, calls compute every tile (begin_call: a call's count, read two calls later).

    Why the same bits: a tile sleeps in substep j where nothing in it or beside it changed in substep j - 1,
    so its substep would work out the same numbers from the same numbers; what the passes read of it (its
    accelerated faces and K, last written when it was computed) lies within one tile of it, where nothing
    changed since, so they are what computing it now would give. The move pass's targets ping-pong: a tile
    left out of substep j keeps, in the texture j writes, its state after the last substep k of j's parity
    that computed it, and each of k + 2, ..., j left it out, so the substep before each changed nothing in
    it and it changed nothing itself: its state after k is its state after j. An edit writes the texture
    the next substep reads (a brush both) and wakes the tiles it reaches, which that substep computes.
    A tile flagged changed that did not change is only computed once more than it needs."""

    def __init__(self, grid, tile: int):
        if tile < 8 or tile & (tile - 1):
            raise ValueError(f"tile: expected a power of two >= 8, got {tile}")
        super().__init__((grid.nx, grid.ny), tile)
        self.grid, self.ctx = grid, grid.ctx
        self._objects = []
        try:
            self.awake_texture = self._texture(self.tiles, "f1")
            self.open_texture = self._texture(self.tiles, "f1")
            # the awake tiles as rectangles (sleep_rects.frag), the far corner at each one's first tile; and
            # those of them whose water the substep did not change
            self.rects, self.settled = [], []
            for pair in (self.rects, self.settled):
                pair.append(self._texture(self.tiles, "f4", 2))
                pair.append(self._framebuffer(pair[0]))
            # the tiles computed in the call so far: the plan reads one and writes the other, beside the
            # awake flags (_plan_targets)
            self.counts = [self._texture(self.tiles, "f4") for _ in range(2)]
            self._plan_targets = [self._framebuffer(self.awake_texture, count) for count in self.counts[::-1]]
            # the blocks' changed flags (sleep_changed.frag), then levels each `factor` times fewer a side down
            # to a texel a tile: (texture, framebuffer, factor)
            size = (-(-grid.nx // SLEEP_BLOCK), -(-grid.ny // SLEEP_BLOCK))
            tex = self._texture(size, "f1")
            self.levels = [(tex, self._framebuffer(tex), SLEEP_BLOCK)] + self._levels(size, tile // SLEEP_BLOCK, "f1")
            # the call's count summed to one texel (the dense policy, begin_call), and the fenced pixel
            # buffers it is copied into, each read two calls later without a wait
            self.sums = self._levels(self.tiles, max(self.tiles), "f4")
            self.ring = _PixelRing.create(self.ctx, 4, 4)
        except BaseException:
            self.release()
            raise
        # tiles.vert's rectangles over the grid passes' texels (the cells, and the faces beyond the right
        # and top edges) and over the blocks
        self.cells = self.quads((grid.nx + 1, grid.ny + 1), tile)
        blocks = self.levels[0][0].size
        self.blocks = self.quads(blocks, tile // SLEEP_BLOCK)
        self.settled_blocks = dict(self.blocks, u_rects=self.settled[0])
        self.unchecked_blocks = dict(self.blocks, uniforms={**self.blocks["uniforms"], "u_unchecked": True})
        # sleep_changed.frag's GATHER: GLSL 4.10's textureGather, the extension's below, else texelFetch
        self.gather = (1 if self.ctx.version_code >= _gl.PRECISE_VERSION
                       else 2 if "GL_ARB_texture_gather" in self.ctx.extensions else 0)
        self.set_open(grid._table, grid._layout)
        self.computed = 0               # substeps of the last step() call computed with every tile
        self.substeps = 0               # substeps of the last step() call
        self.first = True               # no substep of the call has counted its tiles yet
        self.woken = True               # whether an edit woke every tile for the substep planned last
        self.planned = 0                # substeps planned since the grid was made, for SLEEP_CHECK
        self.unchecked = False          # whether the last substep compared no water where every tile woke
        self.call_counts = CallCounts()  # each call's count of tiles computed, for begin_call
        self.call_planned = 0           # substeps the current call planned
        self.call_woken = False         # whether its first plan woke every tile
        self.dense_until = 0            # the first call that may sleep again
        self.dense_above, self.retry = SLEEP_DENSE_ABOVE, SLEEP_RETRY

    def _levels(self, size, side: int, dtype) -> list:
        """The levels of a reduction of a texture of `size` texels by `side` a side: each up to 8 times
        fewer texels a side than the one before, as (texture, framebuffer, factor)."""
        levels = []
        while side > 1:
            factor = min(side, 8)
            side = -(-side // factor)
            size = (-(-size[0] // factor), -(-size[1] // factor))
            tex = self._texture(size, dtype)
            levels.append((tex, self._framebuffer(tex), factor))
        return levels

    def _texture(self, size, dtype, components=1):
        texel = components * (1 if dtype == "f1" else 4)
        tex = _texel_texture(self.ctx, size, components, bytes(size[0] * size[1] * texel), dtype)
        self._objects.append(tex)
        return tex

    def _framebuffer(self, *textures):
        fbo = self.ctx.framebuffer(color_attachments=list(textures))
        self._objects.append(fbo)
        return fbo

    def objects(self) -> list:
        """What release() frees: its textures and framebuffers, and the ring of counts."""
        ring = getattr(self, "ring", None)
        return list(self._objects) + ([] if ring is None else [ring])

    def release(self) -> None:
        for obj in self.objects():
            obj.release()
        self._objects, self.ring = [], None

    def set_open(self, table, layout) -> None:
        """The tiles holding a cell beside a face that is not a wall stay awake (hydro.boundary's table
        and layout)."""
        tiles = self.tiles_of_cells(open_cells(table, layout, self.grid.nx, self.grid.ny))
        self.any_open = bool(tiles.any())
        self.open_texture.write((tiles * 255).astype(np.uint8).tobytes())

    def begin_call(self, call: int) -> None:
        """Step() call number `call` starts: its count starts from zero. Where the sleeping call two back
        computed more than `dense_above` (SLEEP_DENSE_ABOVE) of its tiles, this call and the next `retry`
        (SLEEP_RETRY) - 1 compute every tile (sleeps()); from that call's count, never from whichever the
        GPU has finished (as WaterGrid's)."""
        self._push_call(call - 1)
        # a count left in the ring waits only where the GPU has not got there
        record = self.call_counts.take(call - 2, lambda c: float(np.frombuffer(self.ring.record(c, 4), np.float32)[0]))
        if record is not None:
            substeps, listed = record
            if listed > self.dense_above * substeps * self.count:
                self.dense_until = call + self.retry
        self.computed = self.substeps = self.call_planned = 0
        self.first = True

    def _push_call(self, call: int) -> None:
        """The step() call numbered `call` has ended: where it slept (and did not start with every tile
        woken, which says nothing of the world), queue its count of tiles computed for begin_call."""
        if self.first or self.call_woken:
            return
        level, target = self.counts[0], self._plan_targets[1]     # the last plan's count (its second attachment)
        attachment = 1
        with self.grid._bound():
            for tex, fbo, factor in self.sums:
                self.grid._draw("sleep_reduce", fbo, {"u_changed": level}, (("FACTOR", factor), ("SUM", True)))
                level, target, attachment = tex, fbo, 0
            if self.ring is not None:
                self.ring.push(target, call, (0, 0, 1, 1), components=1, attachment=attachment)
                listed = None
            else:
                listed = float(np.frombuffer(level.read(), np.float32)[0])
        self.call_counts.keep(call, self.call_planned, listed)

    def sleeps(self, call: int) -> bool:
        """Whether step() call number `call` may sleep (begin_call)."""
        return call >= self.dense_until

    def dense(self, substeps: int) -> None:
        """A call's substeps computed every tile (sleep off, or erosion on) and flagged none: the next
        sleeping substep computes every tile."""
        self.computed += substeps
        self.substeps += substeps
        self.unchecked = False
        self.wake()

    def quads(self, target_size, tile: int) -> dict:
        """_draw's `tiles` for a render target of `target_size` texels, a tile `tile` texels a side, the
        last ones reaching to its far edges: the rectangles, their count and tiles.vert's uniforms."""
        return {"u_rects": self.rects[0], "count": self.count,
                "uniforms": {"u_tiles": self.tiles, "u_tile": tile, "u_target": target_size, "u_unchecked": False}}

    def plan(self) -> None:
        """The coming substep's awake tiles (sleep_plan.frag), from the last level of the flags the
        substep before left, the open tiles and the edits since."""
        g = self.grid
        prog, _ = g._pass("sleep_plan")
        self.woken = self.all_woken
        if self.first:
            self.call_woken = self.woken
        g._draw("sleep_plan", self._plan_targets[0],
                {"u_changed": self.levels[-1][0], "u_open": self.open_texture, "u_count": self.counts[0],
                 "u_rects": self.rects[0]},
                u_tiles=self.tiles, u_any_open=self.any_open, u_first=self.first, u_unchecked=self.unchecked,
                **self.take_wakes(prog))
        g._draw("sleep_rects", self.rects[1], {"u_awake": self.awake_texture}, (("SETTLED", False),),
                u_tiles=self.tiles)
        self.counts.reverse()
        self._plan_targets.reverse()
        self.first = False
        self.substeps += 1
        self.call_planned += 1
        self.planned += 1

    def flag(self, cycle: bool) -> None:
        """After the substep's move (the grid's textures swapped): flag the blocks of cells whose water it
        changed in the awake tiles, then those whose faces or records it changed in the awake tiles where
        no water changed (sleep_changed.frag), each reduced to a texel a tile (sleep_reduce.frag)."""
        g = self.grid
        self.unchecked = not self.woken and self.planned % SLEEP_CHECK != 0
        variant = (("BLOCK", SLEEP_BLOCK), ("CYCLE", cycle), ("FACES", False), ("GATHER", self.gather))
        g._draw("sleep_changed", self.levels[0][1], {"u_water": g._water[0][0], "u_water_before": g._water[1][0]},
                variant, tiles=self.unchecked_blocks if self.unchecked else self.blocks, u_size=(g.nx, g.ny))
        self._reduce()
        g._draw("sleep_rects", self.settled[1], {"u_awake": self.awake_texture, "u_changed": self.levels[-1][0],
                                                 "u_rects": self.rects[0]},
                (("SETTLED", True),), u_tiles=self.tiles, u_unchecked=self.unchecked)
        textures = {}
        for name, after, before in zip(("u_flow_x", "u_flow_y", "u_flow_z"), g._flow_sets[0][0], g._flow_sets[1][0]):
            textures[name], textures[name + "_before"] = after, before
        if cycle:
            textures["u_record"], textures["u_record_before"] = g._cycle_records
        variant = (("BLOCK", SLEEP_BLOCK), ("CYCLE", cycle), ("FACES", True), ("GATHER", self.gather))
        g._draw("sleep_changed", self.levels[0][1], textures, variant, tiles=self.settled_blocks, u_size=(g.nx, g.ny))
        self._reduce()

    def _reduce(self) -> None:
        """The blocks' flags to a texel a tile (sleep_reduce.frag's levels)."""
        g = self.grid
        for k in range(1, len(self.levels)):
            tex, fbo, factor = self.levels[k]
            inputs = {"u_changed": self.levels[k - 1][0]}
            mask = {}
            if k == 1:          # the blocks of the tiles left out hold an earlier substep's flags
                inputs["u_awake"] = self.awake_texture
                mask["u_tile_texels"] = self.tile // SLEEP_BLOCK // factor
            g._draw("sleep_reduce", fbo, inputs, (("FACTOR", factor), ("MASK", k == 1)), **mask)

    def clear_taken(self) -> None:
        """What the records took was added to the ledger: cleared in both record textures (sleep_record.frag),
        the move pass's u_fresh for the tiles it leaves out."""
        g = self.grid
        records = g._cycle_records
        target = g._framebuffer(records[1])
        g._draw("sleep_record", target, {"u_record": records[0]}, u_fresh=True)
        self.ctx.copy_framebuffer(g._framebuffer(records[0]), target)

    def awake_fraction(self) -> float:
        """The fraction of tiles the last step() call computed, over its substeps (1.0 where it ran none);
        reads the count back, waiting for the GPU."""
        if not self.substeps:
            return 1.0
        listed = 0.0 if self.first else float(np.frombuffer(self.counts[0].read(), np.float32).sum(dtype=np.float64))
        return (listed + self.computed * self.count) / (self.substeps * self.count)


class FragmentHexWaterGrid(FragmentWaterGrid):
    """Virtual-pipes water on a triangular lattice (as hydro.HexWaterGrid) as fragment-shader
    passes, for GL 3.3 to 4.2 core contexts; the same API as FragmentWaterGrid plus `flow_z`. terrain: (ny, nx)
    heights at the lattice vertices, indexed [y, x] in axial coordinates; cell_size: the lattice spacing.
    """

    _kind = "FragmentHexWaterGrid"
    _hexagonal = True

    flow_z = HexWaterGrid.flow_z         # HexWaterGrid's, on this grid's _flow and _set_flow
    grid_to_world = HexWaterGrid.grid_to_world
    world_to_grid = HexWaterGrid.world_to_grid
