"""How WaterGrid's substeps run on the GPU: the three passes of the model and the kernels that do the
same arithmetic in fewer dispatches, one chosen per device by what measured fastest (docs/benchmarks-log.md).

- passes=3: `_accelerate` (surface-height differences accelerate the flow in every pipe, friction
  (1 - f)^dt, boundary faces re-imposed), `_scale_outflow` (no cell sends out more than it holds; Mei et
  al. 2007) and `_move` (columns change by the net flow; flux form, so water is conserved), one dispatch
  each, a shader file each named after the method (shaders/water/).
- passes=1, GPUs: `_step_fused` does a substep in one dispatch (step_fused.comp: a shared-memory tile
  with a two-cell halo, the move applied lazily), which moves half the bytes; in calls of
  PACKED_MIN_SUBSTEPS substeps and more `_step_packed` does it on a packed copy of the state, one rgba32f
  texel per cell (step_packed.comp, the same tile kernel on texels GL moves at twice the rate, two
  substeps a launch, interior tiles of grids from 512^2 through a program of their own, which on square
  grids from STREAM_MIN_CELLS climbs each tile a row at a time, step_stream.comp; on grids walled on
  every side, every tile through that program, against ghost columns around the grid
  (GHOST_BED); walled calls on square grids from 512^2 climb wider tiles four substeps a launch
  (WIDE_SHAPE), and so do calls with open sides from WIDE_OPEN_MIN_CELLS, the ring of tiles along the
  edges through the climb's EDGES program; pack.comp packs the state at the start of the call and
  unpacks it at the end).
- passes=2, CPU rasterisers: the cell-wise step does it in two passes over the cells
  (`_accelerate_cells`: each cell accelerates all its faces and works out its outflow scale;
  `_scale_and_move`: each cell scales its faces and moves its column), each invocation walking a column
  of CELL_ROWS cells, with the boundary faces handled apart before and after (`_boundary_faces`);
  llvmpipe runs it 1.5-2x as fast as the three passes (fewer, longer invocations; no barriers; cheap
  image loads instead of storage-buffer loads where it can, the input flows too, through r32f
  buffer-texture views of their buffers, _native.BufferViews: 1.2x more at 256^2).
All give the same result to rounding, which the tests check (tests/test_water_reference.py).

_Passes is a mixin of hydro.water._PipeGrid: it reads the grid's context, size, parameters, lattice,
textures, flow buffers and boundary table, and makes and owns the programs and scratch resources of
the step.
"""
from __future__ import annotations

import numpy as np

from . import _gl, _native
from .params import stable_face_depth

# Step implementation, by what measured fastest (docs/benchmarks-log.md): 1 = the fused tile kernels
# (step_fused.comp; step_packed.comp in calls of PACKED_MIN_SUBSTEPS and more) on GPUs, 2 = the
# cell-wise step on CPU rasterisers (llvmpipe); 3 = accelerate, scale_outflow, move, one dispatch each.
AUTO_PASSES = {"gpu": 1, "cpu": 2}
CELL_ROWS = 16             # cells one invocation of the cell-wise passes (passes=2) walks up a column
# The tile kernel (step_fused.comp): cells per tile (x, y) and invocations per workgroup, by lattice;
# measured best on the H200 (docs/benchmarks-log.md) on grids of MIN_TILES such tiles and more: one
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
# (docs/benchmarks-log.md): PACKED_SHAPE (cells x, cells y, substeps a launch), one invocation per texel of
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
# The same for walled calls (every tile through the interior program, one dispatch a launch) of
# PACKED_SHAPE's tiles: a call's launches of two substeps on grids that take WIDE_SHAPE's.
STREAM_MIN_CELLS_WALLED = {"square": 1024 * 1024, "hex": None}
# Calls on square grids of at least so many cells climb tiles of (cells x, cells y, substeps a
# launch), the last such entry: rows of 64 or 128 invocations (two or four warps) that advance four
# substeps a launch, so a launch a substep costs a quarter, for about the same halo a cell. Walled
# calls climb every tile through the interior program; the others, from WIDE_OPEN_MIN_CELLS, their
# interior rectangle through it and the ring of tiles around it through step_stream.comp's EDGES
# program (boundary faces, booked). A stage of
# the climb works only at the steps whose rows something needs (step_stream.comp), which takes a fifth
# off a four-substep climb and makes the wider, shorter tiles pay. Which shape is fastest at a size
# goes much by how many workgroups fill the GPU's SMs at once (128-invocation rows of four substeps: 3
# an SM on the H100). H100, 2026-12-05 16:26-16:33 UTC, us a substep in one process against 52x40x3
# (the shape before, its climb without idle stages in brackets): 512^2 48x12x4 4.13 against 48x24x4's
# 4.87 (4.68); 768^2 112x24x4 5.74-5.88 against 8.22; 1024^2 112x40x4 8.85-9.08 against 9.83-10.05
# (9.29-9.48), 108x40x5 8.62-8.86, 104x40x6 8.59-8.85, 116x24x3 8.87-9.06, 112x24x4 11.81; 1152^2
# 112x40x4 11.86 against 13.08; 1280^2 13.25 against 16.04; 1536^2 112x24x4 18.71 against 23.11;
# 2048^2 30.60 against 32.56 (104x40x6 30.18); 3072^2 59.83 against 66.65; 4096^2 100.38 against
# 111.41 (112x40x4 102.25); the rest of the shapes tried in docs/benchmarks-log.md.
# Rows of six and seven warps (2026-12-06 03:28 UTC, H100, us a substep in one process, two rounds):
# 1024^2 176x24x4 8.00 / 8.02 against 112x40x4's 8.53 / 8.51 (6 columns of tiles fill 1024 with 6 %
# to spare against 10 columns' 9 %; 208x40x4 8.62 / 8.32, 176x47x4 9.0, 272x32x4 9.3, 208x48x4 9.5,
# 212x40x3 9.3, 108x40x5 8.12), CuPy's step 15.9 in the same process; at 4096^2 no wider row paid
# (112x24x4 98.5 against 176x24x4 107.2, 208x40x4 128.2, 208x24x4 138.7). 176x24x4 is measured at
# 1024^2 only: its columns of tiles fit as well up to 1056 cells a side, past which 112x40x4's
# measured figures hold.
WIDE_SHAPE = {"square": ((512 * 512, (48, 12, 4)), (768 * 768, (112, 24, 4)), (1024 * 1024, (176, 24, 4)),
                           (1056 * 1056, (112, 40, 4)), (1536 * 1536, (112, 24, 4))), "hex": ()}
# How many climb steps ahead of its use step_stream.comp loads a texel (AHEAD), for PACKED_SHAPE's
# climbs and WIDE_SHAPE's. H100, 2026-12-05 15:22 UTC, us a substep in one process, 1 / 2 / 0 ahead:
# 52x40x3 at 1024^2 10.16 / 10.80 / 12.97, 2048^2 33.53 / 40.94 / 37.17, 4096^2 112.97 / 136.34 /
# 127.77 (4 and 6 ahead: 20.9 and 25.0 at 1024^2); 48x24x4 at 512^2 5.44 / 5.75 / 7.17 (15:29);
# 24x24x2 at 2048^2 57.58 / 48.43 / 61.29, 4096^2 210.10 / 156.25 / 210.88 (1024^2: 13.58 / 14.19).
# Rechecked with the texels held in named registers and the four-substep shapes (16:21-16:37 UTC),
# 2 against 1 ahead: 112x40x4 at 1024^2 9.02 / 9.13, 112x24x4 at 4096^2 101.14 / 100.11, 48x12x4 at
# 512^2 4.18 / 4.17; 52x40x3 three ahead 117.37 against 112.65 at 4096^2; 24x24x2 two ahead still best.
CLIMB_AHEAD = {"packed": 2, "wide": 1}
# Calls with a side open take WIDE_SHAPE's tiles, their ring climbed by step_stream.comp's EDGES
# program, on square grids of at least so many cells; smaller ones keep PACKED_SHAPE's launches, the
# ring through step_packed.comp's general program, where the EDGES climbs along the edges (a few long
# workgroups, each climbing its tile with the boundary tests) finish after the interior's and cost
# more than the wider tiles save. H100, 2026-12-06 03:29 UTC, us a substep in one process, two
# rounds, the EDGES climb as it is (the boundary table read once into shared memory) against
# PACKED_SHAPE's ring (walls): 512^2 10.88 / 10.82 against 7.08 / 7.08 (3.9); 1024^2 23.4 / 22.9
# against 14.2 / 14.2 (8.8); 2048^2 38.4 / 39.0 against 50.2 / 50.6 (29.6). The first version, which
# read the table at every step (2026-12-05 19:24 UTC): 512^2 11.98, 1024^2 26.8, 2048^2 37.6, 4096^2
# 115.4 against 161.2. None: no such program (hex).
WIDE_OPEN_MIN_CELLS = {"square": 2048 * 2048, "hex": None}
# Walled calls: on a grid whose every boundary face is a wall (and pipe_area="depth"), the
# packed kernel's tiles all go through the interior program, in one dispatch a launch with no ring: the
# packed state's margin and what lies past the grid are ghost columns (pack.comp) with no water and a
# bed at GHOST_BED, the largest float32, above every surface, so a pipe into one has no cross-section
# and carries nothing, to the bit what a wall carries. That holds while every surface stays above
# WALLED_MIN_BED (GHOST_BED minus a surface must stay finite): the grid tracks a bound on its lowest
# bed (dig() lowers it) and takes the ring where it falls below. The hex lattice, whose texel holds a
# flow in place of the bed, reads the beds from a texture laid out as the state (pack.comp).
GHOST_BED = float(np.finfo(np.float32).max)
WALLED_MIN_BED = -1e30
# its loops unrolled (constant trip counts) on GPUs, plain on CPU rasterisers (2.5x faster on llvmpipe)
UNROLLED_TILE_LOOPS = {"gpu": True, "cpu": False}
# The cell-wise passes read the flows through r32f buffer-texture views (_native.BufferViews) where that
# measured faster: llvmpipe, 256^2 square, docs/benchmarks-log.md (storage buffers on GPUs)
BUFFER_VIEWS = {"gpu": False, "cpu": True}
# boundary_faces.comp's programs by (book, accelerate)
BOUNDARY_PROGRAMS = {(False, True): "boundary_accelerate", (True, False): "boundary_book",
                     (True, True): "boundary_book_accelerate"}


def packed_state_size(nx: int, ny: int, shapes) -> tuple[tuple[int, int], int]:
    """Texels (x, y) of the packed state of an nx x ny grid whose launches take the tile shapes
    `shapes`, ((cells x, cells y), substeps a launch) each, and its margin: every tile of each with its
    halo of two cells a substep lies in it."""
    margin = 2 * max(steps for _, steps in shapes)
    size = tuple(margin + max(-(-(n + 1) // tile[axis]) * tile[axis] + 2 * steps for tile, steps in shapes)
                 for axis, n in enumerate((nx, ny)))
    return size, margin


def check_passes(passes, alternatives=""):
    if isinstance(passes, bool) or not isinstance(passes, int) or passes not in (1, 2, 3):
        raise ValueError(f"passes: expected 1 (fused), 2 (cell-wise), 3 (accelerate, scale_outflow, move)"
                         f"{' ' + alternatives if alternatives else ''}, got {passes!r}")
    return passes

class _Passes:
    """The step implementations of a pipe grid (hydro.water._PipeGrid)."""

    def _create_passes(self, device: str, passes) -> None:
        """The programs and scratch resources of every step implementation, `passes` (1, 2, 3 or None:
        the device's fastest) the one step() runs; the grid's textures, flows and boundary table exist
        already. The packed kernel's are made on first use."""
        ctx = self.ctx
        self._passes = AUTO_PASSES[device] if passes is None else passes    # measured: docs/benchmarks-log.md
        self._unrolled = UNROLLED_TILE_LOOPS[device]
        hexa = {"HEX": self._hexagonal}
        pipes = {**hexa, "PIPE_AREA_DEPTH": self.params.depth_area}
        self._pipe_defines = pipes                  # the tile kernels, compiled later
        self._programs.update({key: _gl.program(ctx, f"water/{name}.comp", defs) for key, name, defs in (
            ("accelerate", "accelerate", pipes), ("scale_outflow", "scale_outflow", hexa),
            ("move", "move", {**hexa, "SEPARATE_OUTPUT": False}),
            ("settle", "move", {**hexa, "SEPARATE_OUTPUT": True}),
            ("boundary_accelerate", "boundary_faces", {**pipes, "BOOK": False, "ACCELERATE": True}),
            ("boundary_book", "boundary_faces", {**pipes, "BOOK": True, "ACCELERATE": False}),
            ("boundary_book_accelerate", "boundary_faces", {**pipes, "BOOK": True, "ACCELERATE": True}))})
        size = (self.nx, self.ny)
        # the fused step ping-pongs depth through two scratch textures, then settles into water_texture
        self._scratch = [ctx.texture(size, 1, dtype="f4") for _ in range(2)]
        # the cell-wise step passes each cell's outflow scale from its first cell pass to the second
        self._outflow_scale = ctx.texture(size, 1, dtype="f4")
        for tex in (*self._scratch, self._outflow_scale):
            tex.repeat_x = tex.repeat_y = False
        units = _gl.BINDINGS["B_FLOW_Z_TMP_VIEW"] + 1
        self._views = (_native.BufferViews.create(ctx, self._flows + self._flows_tmp, units)
                       if BUFFER_VIEWS[device] else None)
        views = {"BUFFER_VIEWS": self._views is not None, "CELL_ROWS": CELL_ROWS}
        self._programs["accelerate_cells"] = _gl.program(ctx, "water/accelerate_cells.comp", {**pipes, **views})
        self._programs["scale_and_move"] = _gl.program(ctx, "water/scale_and_move.comp", {**hexa, **views})
        lay = self._layout                            # the cell-wise step's boundary passes find faces here
        self._places = ctx.buffer(np.stack([lay.array, lay.i, lay.j], axis=1).astype("<i4").tobytes())
        self._state = []                            # the packed kernel's two states, made on first use
        self._state_margin = 0                      # texels around the grid's in them (_make_states)
        self._packed_bed = None                     # hex: the beds laid out as the states
        self._walled_call = False                   # whether this call's launches are walled (_walled)
        self._launches = []                         # and their tile shapes (_launch_plan)
        self._booked = None                         # and its booked boundary flows,
        self._book_slots = 0                        # a slot a face for each substep of a launch
        tile = FUSED_TILE[self._lattice]
        if -(-self.nx // tile[0]) * -(-self.ny // tile[1]) < MIN_TILES:
            tile = SMALL_TILE
        self._compile_tile(tile)
        # the tile kernel on the packed state: for calls of PACKED_MIN_SUBSTEPS and more (None), in
        # every call (True) or none (False); its tile; its programs and states are made on first use
        self._packed_use = None
        shape = PACKED_SHAPE[self._lattice]
        self._set_packed_shape(shape[:2], shape[2], walled=True)

    def _bind_step(self):
        self._terrain_tex.bind_to_image(_gl.BINDINGS["B_TERRAIN"], read=True, write=False)
        self._water_tex.bind_to_image(_gl.BINDINGS["B_WATER"], read=True, write=True)
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
        a launch) for every call, walled calls too; (cells x, cells y) means one substep a launch. A
        call's remainder (n % substeps a launch) runs one substep a launch on PACKED_TILE's tile
        whatever the shape. Walled calls on square grids from 512^2 take WIDE_SHAPE's tiles unless a
        shape is set, and calls with open sides from WIDE_OPEN_MIN_CELLS (_launch_plan)."""
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
        walled = on is None or isinstance(on, bool)
        if (shape, walled) != ((*self._packed_tile, self._packed_steps), self._wide_shape is not None):
            self._set_packed_shape(shape[:2], shape[2], walled)
        self._packed_use = True if on is not None and not isinstance(on, bool) else on

    def _set_packed_shape(self, tile, steps: int, walled: bool) -> None:
        """The packed kernel's tile and substeps a launch, and with `walled` (the default shape) WIDE_SHAPE's
        tiles where the grid is large enough; its programs and states are made again on next
        use. Also whether its state, with its margin, fits the context's textures (_packed_fits)."""
        self._packed_tile, self._packed_steps, self._packed_ready = tuple(tile), steps, False
        shapes = [shape for least, shape in WIDE_SHAPE[self._lattice] if self.nx * self.ny >= least]
        self._wide_shape = (tuple(shapes[-1][:2]), shapes[-1][2]) if walled and shapes else None
        size, _ = packed_state_size(self.nx, self.ny, self._state_shapes)
        self._packed_fits = max(size) <= (self.ctx.info.get("GL_MAX_TEXTURE_SIZE") or max(size))

    @property
    def _state_shapes(self) -> list:
        """The tile shapes, ((cells x, cells y), substeps a launch), the packed kernel's launches take:
        its own, PACKED_TILE's of one substep (a call's remainder) and WIDE_SHAPE's where the grid
        takes it."""
        shapes = [self._main_shape, (PACKED_TILE[self._lattice], 1)]
        return shapes + [self._wide_shape] * (self._wide_shape is not None)

    def _takes_packed(self, n: int) -> bool:
        """Whether a call of n substeps (passes=1) runs step_packed.comp: not where its state, with its
        margin, would be larger than the context's textures can be (the tile kernel runs instead)."""
        if not self._packed_fits:
            return False
        return self._packed_use if self._packed_use is not None else n >= PACKED_MIN_SUBSTEPS

    def _ready_packed(self, shapes) -> None:
        """The packed kernel's states, its booked boundary flows (a slot a boundary face for each
        substep of the longest launch) and the programs of the tile shapes a call launches, `shapes`
        (_launch_plan), with where their tiles lie, made on first use: interior tiles and the ring
        around them."""
        if not self._packed_ready:
            self._make_states()
            # what the ring's owners of boundary faces book at each substep of a launch, a slot each,
            # until the next launch or the unpack adds it to the ledger (common/booked.glsl); zeros
            # between calls
            if self._booked is not None:
                self._booked.release()
            self._book_slots = max(steps for _, steps in self._state_shapes)
            self._booked = self.ctx.buffer(reserve=4 * self._book_slots * self._layout.size)
            self._booked.clear()
            hexa = {"HEX": self._hexagonal, "MARGIN": self._state_margin}
            for key, defs in (("pack", {**hexa, "UNPACK": False}),
                              ("unpack", {**hexa, "UNPACK": True, "BOOK_SLOTS": self._book_slots})):
                self._programs[key] = _gl.program(self.ctx, "water/pack.comp", defs)
            self._packed_sets = {}
            self._packed_ready = True
        for shape in shapes:
            if shape not in self._packed_sets:
                wide = shape == self._wide_shape and shape != self._main_shape
                self._packed_sets[shape] = self._packed_set(*shape, wide)

    @property
    def _main_shape(self) -> tuple:
        """The packed kernel's own tile shape, ((cells x, cells y), substeps a launch)."""
        return self._packed_tile, self._packed_steps

    def _launch_plan(self, n: int, walled: bool = True) -> list:
        """The tile shapes, ((cells x, cells y), substeps a launch), of the launches of a call of n
        substeps: _packed's, the rest one substep a launch on PACKED_TILE's tile. Grids that take
        WIDE_SHAPE (square grids from 512^2) take its launches in `walled` calls, and in the others
        from WIDE_OPEN_MIN_CELLS, with the rest in launches of _packed's where they fit: with three
        substeps a launch against two, 3 + 3 + 2 for 8 and 3 + 2 + 2 for 7."""
        main, one = self._main_shape, (PACKED_TILE[self._lattice], 1)
        wide, least = self._wide_shape, WIDE_OPEN_MIN_CELLS[self._lattice]
        if not walled and (least is None or self.nx * self.ny < least):
            wide = None
        if wide is None or wide == main:
            return [main] * (n // main[1]) + [one] * (n % main[1])
        q, r = divmod(n, wide[1])
        if r % main[1] and q and (r + wide[1]) % main[1] == 0:
            q, r = q - 1, r + wide[1]           # one launch of the wide shape fewer, its substeps in main's
        return [wide] * q + [main] * (r // main[1]) + [one] * (r % main[1])

    def _make_states(self) -> None:
        """The packed kernel's two states, (depth, flow_x, flow_y, bed or flow_z) per cell and outer face
        (texel (x, y) at (x, y) + margin), each reaching past the grid so that every tile of every
        shape its launches take (_state_shapes) lies in it with its halo; made again where the
        shapes changed. Texels outside the (nx + 1) x (ny + 1) the pack fills hold ghost columns."""
        size, margin = packed_state_size(self.nx, self.ny, self._state_shapes)
        if self._state and self._state[0].size == size and self._state_margin == margin:
            return
        for tex in self._state + ([self._packed_bed] if self._packed_bed is not None else []):
            tex.release()
        self._state, self._state_margin, self._packed_bed = [], margin, None
        (w, h), m, (cw, ch) = size, margin, (self.nx + 1, self.ny + 1)
        # below, above, left of and right of the texels the pack fills, (x, y, width, height)
        strips = [(0, 0, w, m), (0, m + ch, w, h - m - ch), (0, m, m, ch), (m + cw, m, w - m - cw, ch)]
        ghost = np.array([0.0, 0.0, 0.0, 0.0 if self._hexagonal else GHOST_BED], np.float32)
        textures = [(4, ghost), (4, ghost)] + [(1, np.float32([GHOST_BED]))] * self._hexagonal
        for k, (components, value) in enumerate(textures):
            tex = self.ctx.texture((w, h), components, dtype="f4")
            if k < 2:
                self._state.append(tex)
            else:                       # hex: the beds, laid out as the state (pack.comp)
                self._packed_bed = tex
            for x, y, sw, sh in strips:
                if sw > 0 and sh > 0:
                    tex.write(np.tile(value, sw * sh).tobytes(), viewport=(x, y, sw, sh))

    def _walled(self) -> bool:
        """Whether a packed call runs every tile through the interior program (WALLED_MIN_BED)."""
        return self.params.depth_area and self._all_walls and self._lowest_bed > WALLED_MIN_BED

    def _packed_set(self, tile, steps: int, wide: bool = False) -> dict:
        """The packed kernel's programs for tiles of tile = (cells x, cells y) advanced `steps`
        substeps a launch, and where their tiles lie: the ring's, the interior's and the walled calls';
        with `wide` (WIDE_SHAPE's) every one climbed, the ring's through
        step_stream.comp's EDGES program."""
        tx, ty = tile
        halo = 2 * steps
        defines = {**self._pipe_defines, "TILE_X": tx, "TILE_Y": ty, "STEPS": steps,
                   "GROUP_X": tx + 2 * halo, "GROUP_Y": ty + 2 * halo, "MARGIN": self._state_margin}
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
        # the interior tiles climbed a row at a time (step_stream.comp) or settled at once, in calls
        # with a ring and in walled calls (every tile)
        def climbs(least, tiles_in):
            return (steps == self._packed_steps and least is not None and self.nx * self.ny >= least
                    and tiles_in > 0)
        climbed = ("water/step_stream.comp", {**{k: v for k, v in defines.items() if k != "GROUP_Y"},
                                              "AHEAD": CLIMB_AHEAD["wide" if wide else "packed"], "EDGES": False})
        if wide:                        # the interior climb serves walled calls too (u_first_tile 0)
            inside = _gl.program(self.ctx, *climbed)
            programs = [_gl.program(self.ctx, climbed[0], {**climbed[1], "EDGES": True,
                                                           "BOOK_SLOTS": self._book_slots}),
                        inside, inside]
            ring_climbs = walled_climbs = True
        else:
            settled = ("water/step_packed.comp", {**defines, "INTERIOR": True})
            general = ("water/step_packed.comp", {**defines, "INTERIOR": False, "BOOK_SLOTS": self._book_slots})
            ring_climbs = climbs(STREAM_MIN_CELLS[self._lattice], inner[0])
            walled_climbs = climbs(STREAM_MIN_CELLS_WALLED[self._lattice], tiles[0])
            programs = [_gl.program(self.ctx, *prog) for prog in (general, climbed if ring_climbs else settled,
                                                                  climbed if walled_climbs else settled)]
        return {"ring": programs[0], "interior": programs[1], "walled": programs[2], "climbs": ring_climbs,
                "walled_climbs": walled_climbs,
                "ring_x": (tiles[0], first[0], last[0]), "ring_y": (first[1], last[1], ring),
                "first_tile": (first[0], first[1]), "inner": inner, "tiles": (tiles[0], tiles[1]),
                "ring_groups": (min(ring, RING_ROW), -(-ring // RING_ROW))}

    @property
    def _packed_layout(self) -> dict:
        """Where the packed kernel's tiles lie (its launches of _packed_steps substeps)."""
        return self._packed_sets[self._main_shape]

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
                self._walled_call = self._walled()
                self._launches = self._launch_plan(n, self._walled_call)
                shapes = set(self._launches)        # a long call launches a few shapes many times
                self._ready_packed(shapes)
                pipes, moves = [], []
                _gl.set_uniforms(self._programs["pack"], u_size=size)
                _gl.set_uniforms(self._programs["unpack"], u_size=size, u_dt=h)
            else:
                pipes, moves = ["step_fused"], ["settle"]
        elif self.passes == 2:
            pipes, moves = ["accelerate_cells", *BOUNDARY_PROGRAMS.values()], ["scale_and_move"]
        else:
            pipes, moves = ["accelerate"], ["scale_outflow", "move"]
        # the pipe equation's constants in one factor, multiplied in float64: dt g / l times the width
        # (depth mode) or the constant area
        gain = h * p.gravity / geo.pipe_length * (geo.face_width if p.depth_area else float(p.pipe_area))
        pipe = dict(u_size=size, u_dt=h, u_friction_factor=p.friction_factor(h), u_flow_gain=gain,
                    u_cell_area=geo.cell_area, u_max_face_depth=stable_face_depth(h, geo, p))
        for key in pipes:
            _gl.set_uniforms(self._programs[key], **pipe)
        if packed:                      # the programs this call launches
            for lay in (self._packed_sets[shape] for shape in shapes):
                if not self._walled_call:
                    _gl.set_uniforms(lay["ring"], **pipe, u_ring_x=lay["ring_x"], u_ring_y=lay["ring_y"])
                _gl.set_uniforms(lay["walled" if self._walled_call else "interior"], **pipe,
                                 u_first_tile=(0, 0) if self._walled_call else lay["first_tile"])
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
        depth_in = self._water_tex
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
        self._water_tex.bind_to_image(_gl.BINDINGS["B_OUT_IMAGE"], read=False, write=True)
        self._bind_flows()
        _gl.dispatch(self.ctx, self._programs["settle"], self.nx, self.ny)

    def _step_packed(self, n: int):
        """n substeps of the tile kernel on the packed state: pack the grid into state 0, launches
        read one state and write the other (the two swap image units between launches), each
        advancing the substeps of its shape (_launch_plan; the ring's owners of boundary faces
        store what crossed them in _booked, and add what the launch before stored to the ledger),
        unpack the last state into the grid (its depth is settled: this kernel moves every substep)
        and the last launch's booked flows into the ledger."""
        b = _gl.BINDINGS
        self._state[0].bind_to_image(b["B_PACKED_OUT"], read=False, write=True)
        if self._packed_bed is not None:        # hex: the beds too, read by the launches at B_TERRAIN
            self._packed_bed.bind_to_image(b["B_OUT_IMAGE"], read=False, write=True)
        _gl.dispatch(self.ctx, self._programs["pack"], self.nx + 1, self.ny + 1)
        if self._packed_bed is not None:
            self._packed_bed.bind_to_image(b["B_TERRAIN"], read=True, write=False)
        self._booked.bind_to_storage_buffer(b["B_BOOKED"])
        launches = self._launches
        # Walled calls: every tile through the interior program. Else the ring and the interior
        # rectangle, which write different texels: one barrier after both. The ring goes first, so its
        # few workgroups run beside the interior's rather than after them (1-9 % a substep on the H200).
        # Launch k reads state k % 2 and writes the other: the two states swap image units between
        # launches, and every launch runs the same program. Alternating two programs, one for each
        # direction, cost 1.2 us a launch on the GPU against 0.35 for the rebinding (H100, 1024^2
        # walled, 2026-12-06, docs/benchmarks-log.md).
        for k, shape in enumerate(launches):
            self._state[k % 2].bind_to_image(b["B_PACKED_IN"], read=True, write=False)
            self._state[1 - k % 2].bind_to_image(b["B_PACKED_OUT"], read=False, write=True)
            lay = self._packed_sets[shape]
            if self._walled_call:
                lay["walled"].run(*lay["tiles"], 1)
            else:
                inner = lay["inner"]
                lay["ring"].run(*lay["ring_groups"], 1)
                if inner[0] > 0:            # (0, 0) where there is no interior rectangle
                    lay["interior"].run(*inner, 1)
            self.ctx.memory_barrier()
            if k == 0:
                # hand the pack and the first launch to the GPU now, so it works while Python queues
                # the rest (the driver may hold them until its buffer fills or the call's end): calls
                # of 2-8 substeps 7-12 % faster at 512^2 and 1024^2, 1-2 % at 4096^2 (H100,
                # 2026-12-06 05:41 UTC, docs/benchmarks-log.md)
                _native.flush(self.ctx)
        self._state[len(launches) % 2].bind_to_image(b["B_PACKED_IN"], read=True, write=False)
        self._water_tex.bind_to_image(b["B_WATER"], read=False, write=True)
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
