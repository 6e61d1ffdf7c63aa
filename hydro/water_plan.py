"""How a water step is scheduled: which kernel runs a call, and how the blocked kernel's launches tile
the grid. Plain functions of the grid's size, the call and a `Tuning`; no GL, so tests call them alone.

The kernels (hydro.water_kernels) are schedules of one model (shaders/common/model.glsl):
- "cells": two passes over the cells a substep and one over the boundary faces (CPU rasterisers);
- "fused": a whole substep in one dispatch on the grid's own textures (GPU calls of one substep);
- "blocked": several substeps a launch on a packed copy of the state, over tiles grown by a halo of
  two cells a substep (temporal blocking; GPU calls of two substeps and more). A launch runs the
  tile program (blocked_tile.comp) or, on square grids, the climb (blocked_climb.comp).
`Tuning` holds every shape and threshold, measured per device kind (docs/benchmarks.md); tests and
benchmarks give a grid another one through `grid._retune(tuning)`, the one test seam.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

KERNELS = ("cells", "fused", "blocked")

# The blocked kernel's ghost columns (pack.comp) stand on the largest float32, above every surface, so
# that a pipe into one has no cross-section and carries nothing, to the bit what a wall carries; that
# holds while every bed stays above WALLED_MIN_BED (GHOST_BED minus a surface must stay finite).
GHOST_BED = float(np.finfo(np.float32).max)
WALLED_MIN_BED = -1e30

Shape = tuple           # ((cells x, cells y), substeps a launch)


@dataclass(frozen=True)
class Tuning:
    """The shapes and thresholds the planner works from, for one device kind and lattice. The values of
    `for_device` are the fastest measured (docs/benchmarks.md; how each was found: the log)."""
    one: str                        # the kernel of calls of one substep
    many: str                       # the kernel of calls of `many_from` substeps and more
    many_from: int = 2
    # cells: cells an invocation walks up a column; flows read through buffer-texture views; the side
    # of a sleeping tile (a multiple of cell_rows; hydro.water_sleep)
    cell_rows: int = 16
    buffer_views: bool = False
    sleep_tile: int = 32
    # fused: (cells x, cells y, invocations) of the tile; smaller grids (fewer than min_tiles such
    # tiles) take small_tile, so more workgroups fill the GPU; loops unrolled (GPUs)
    fused_tile: tuple = (28, 28, 1024)
    small_tile: tuple = (12, 12, 256)
    min_tiles: int = 256
    unrolled: bool = True
    # blocked: its launches' shape, and a call's odd substep's
    blocked: Shape = ((24, 24), 2)
    odd: Shape = ((12, 12), 1)
    # grids of so many cells and more run the interior tiles through a program without boundary tests
    # and the ring of tiles around them through the general one; smaller ones every tile through the
    # general one
    split_from: int = 512 * 512
    # square grids of so many cells and more climb the interior tiles of `blocked`'s launches (in
    # walled calls: every tile) instead of settling them at once; None: never (hex: no climb)
    climb_from: int | None = 1536 * 1536
    climb_walled_from: int | None = 1024 * 1024
    # wider tiles, climbed several substeps a launch, for walled calls on grids of at least so many
    # cells (the last entry a grid reaches), and for calls with open sides from wide_open_from, the
    # ring along the edges through the climb's EDGES program
    wide: tuple = ((512 * 512, ((48, 12), 4)), (768 * 768, ((112, 24), 4)), (1024 * 1024, ((176, 24), 4)),
                   (1056 * 1056, ((112, 40), 4)), (1536 * 1536, ((112, 24), 4)))
    wide_open_from: int | None = 2048 * 2048
    # climb steps ahead of its use a climb loads a texel, for `blocked`'s shape and the wide ones
    climb_ahead: int = 2
    climb_ahead_wide: int = 1
    # cells a substep narrows the region a blocked workgroup works out correctly by, on each side: 2, or
    # 3 with inertia (a face also needs the faces beside it); its halo is reach times its substeps
    reach: int = 2
    ring_row: int = 4096            # workgroups per row of a ring dispatch
    # whether a blocked call (or, while they sleep, a fused one) sleeps tiles where the grid sleeps; a
    # sleeping call that computed more than sleep_dense_above of its tiles makes the calls from two
    # later run every tile, for sleep_retry calls (docs/design.md, "Sleeping tiles": where sleeping
    # costs what computing every tile does, and what trying again costs where every tile moves)
    sleep_blocked: bool = True
    # the shape of a sleeping blocked call's launches where it climbs (square grids whose dense calls climb:
    # walled calls from climb_walled_from, the others from climb_from or wide_open_from): square tiles,
    # each climbed as the dense climb climbs its own; None: the tile program on `blocked`'s tiles in every
    # sleeping call
    sleep_climb: Shape | None = ((48, 48), 4)
    sleep_dense_above: float = 0.4
    # sleep_dense_above of the calls that climb their tiles, which cost what dense ones do only where
    # nearly every tile moves (docs/benchmarks.md)
    sleep_climb_dense_above: float = 0.7
    sleep_retry: int = 128
    # the stats reduction: 0 a record per tile reduced in shared memory (GPUs), n a record per
    # invocation walking n cells (CPU rasterisers, where barriers are dear); at most so many records
    stats_rows: int = 0
    stats_records: int = 4096
    # a sample waits for the next call's first pass instead of a pass of its own (CPU rasterisers, where
    # a dispatch hands off to the rasteriser's threads; GPUs keep its pass, so its handle is ready a call
    # sooner: docs/design.md)
    fold_samples: bool = False
    # erosion's passes read their neighbours through image units (CPU rasterisers, where imageLoad runs
    # faster than texelFetch: docs/benchmarks.md) rather than texture units
    erosion_images: bool = False
    # the shape of the blocked kernel's launches with erosion on (eroding()); None: erosion's passes
    # follow the cell-wise kernel's substeps (CPU rasterisers)
    erosion_blocked: Shape | None = None

    @staticmethod
    def for_device(device: str, hexagonal: bool, inertia: bool = False) -> "Tuning":
        """The measured tuning of a device kind ("gpu" or "cpu", hydro._gl.device_kind), lattice and model:
        with inertia the fused kernel has none, so GPUs take the blocked kernel in every call, on tiles
        whose halo is three cells a substep: large square grids climb wide tiles, the rest run the tile
        program."""
        lattice = _HEX if hexagonal else {}
        if device == "cpu":       # the blocked kernel's tiles within a CPU rasteriser's shared memory
            return Tuning(one="cells", many="cells", buffer_views=True, unrolled=False, stats_rows=16,
                          fold_samples=True, erosion_images=True, sleep_blocked=False, sleep_dense_above=0.85,
                          **{**lattice, **(dict(_CPU_INERTIA) if inertia else {})})
        # the cell-wise kernel (sleeping tiles) walks 4-cell columns on GPUs (docs/benchmarks.md)
        # with erosion: a halo two cells wider a substep, tiles within 32 KiB of shared memory (GL's least)
        eroding = dict(erosion_blocked=_ERODING[hexagonal, inertia])
        if inertia:
            return Tuning(one="blocked", many="blocked", cell_rows=4,
                          **{**lattice, **(_HEX_INERTIA if hexagonal else _GPU_INERTIA), **eroding})
        return Tuning(one="fused", many="blocked", cell_rows=4, **lattice, **eroding)

    def replace(self, **changes) -> "Tuning":
        return dataclasses.replace(self, **changes)


# the hex lattice's shapes (no climb: its columns have z faces)
_HEX = dict(fused_tile=(28, 12, 512), odd=((12, 28), 1), climb_from=None, climb_walled_from=None, wide=(),
            wide_open_from=None)
# with inertia: one substep a launch (a halo of three cells); two grow the workgroup to 1024 invocations
# (hex: the shared memory's limit), which ran slower (docs/benchmarks.md); no climb
_INERTIA = dict(reach=3, blocked=((20, 20), 1), odd=((20, 20), 1), climb_from=None, climb_walled_from=None,
                wide=(), wide_open_from=None)
_HEX_INERTIA = dict(_INERTIA, blocked=((16, 16), 1), odd=((16, 16), 1))
# square GPUs: calls of two substeps and more on large grids climb tiles of four warps' columns two
# substeps a launch, loading texels two steps ahead, the ring through the climb's EDGES program (smaller
# grids keep the tile program); calls of an odd count end on `blocked`'s; sleeping calls climb tiles
# of two warps' columns, two substeps a launch (docs/benchmarks.md)
_GPU_INERTIA = dict(_INERTIA, wide=((2048 * 2048, ((116, 40), 2)),), wide_open_from=2048 * 2048,
                    climb_ahead_wide=2, sleep_climb=((52, 52), 2))
_CPU_INERTIA = dict(_INERTIA, blocked=((8, 8), 2), odd=((10, 10), 1))
# with erosion (hexagonal, inertia): one substep a launch; two ran slower (docs/benchmarks.md)
_ERODING = {(False, False): ((24, 24), 1), (True, False): ((16, 16), 1),
            (False, True): ((14, 14), 1), (True, True): ((10, 10), 1)}


def eroding(tuning: Tuning) -> Tuning | None:
    """The tuning of calls with erosion on: the blocked kernel's tile program with erosion's phases
    after each substep (blocked_tile.comp's EROSION), in launches of erosion_blocked's shape on a halo two
    cells a substep wider; no climb, wide tiles, ghost columns or sleeping (erosion changes beds where
    no water moves). None where the tuning has no such shape: erosion follows the cell-wise kernel."""
    shape = tuning.erosion_blocked
    if shape is None:
        return None
    return tuning.replace(reach=tuning.reach + 2, blocked=shape, odd=shape, climb_from=None,
                          climb_walled_from=None, wide=(), wide_open_from=None, sleep_blocked=False,
                          sleep_climb=None, erosion_blocked=None)


def call_kernel(tuning: Tuning, substeps: int) -> str:
    """The kernel of a call of `substeps` substeps."""
    return tuning.many if substeps >= tuning.many_from else tuning.one


def fused_tile(tuning: Tuning, nx: int, ny: int) -> tuple:
    """The fused kernel's tile for an nx x ny grid, (cells x, cells y, invocations)."""
    tile = tuning.fused_tile
    if -(-nx // tile[0]) * -(-ny // tile[1]) < tuning.min_tiles:
        tile = tuning.small_tile
    return tile


def walled(pipe_area_depth: bool, all_walls: bool, lowest_bed: float, inertia: bool = False) -> bool:
    """Whether a blocked call runs every tile through the interior program against ghost columns: walls
    all round, pipes of the water's depth, every bed above WALLED_MIN_BED, and no inertia (a ghost's face
    would take momentum from the faces beside it)."""
    return pipe_area_depth and all_walls and lowest_bed > WALLED_MIN_BED and not inertia


def wide_shape(tuning: Tuning, nx: int, ny: int):
    """The wide shape of an nx x ny grid, or None."""
    shapes = [shape for least, shape in tuning.wide if nx * ny >= least]
    return shapes[-1] if shapes else None


def launches(tuning: Tuning, nx: int, ny: int, substeps: int, is_walled: bool) -> list:
    """The shapes of the launches of a blocked call: the wide shape where the grid takes it (walled calls,
    and calls with open sides from wide_open_from), the rest in launches of `blocked`'s, and a launch of
    `odd`'s for what is left: with three substeps a launch against two, 3 + 3 + 2 for 8, 3 + 2 + 2 for 7."""
    main, odd = tuning.blocked, tuning.odd
    wide = wide_shape(tuning, nx, ny)
    if not is_walled and (tuning.wide_open_from is None or nx * ny < tuning.wide_open_from):
        wide = None
    if wide is None or wide == main:
        return [main] * (substeps // main[1]) + [odd] * (substeps % main[1])
    q, r = divmod(substeps, wide[1])
    if r % main[1] and q and (r + wide[1]) % main[1] == 0:
        q, r = q - 1, r + wide[1]           # one wide launch fewer, its substeps in main's
    return [wide] * q + [main] * (r // main[1]) + [odd] * (r % main[1])


def _sleeps_on(shape: Shape, reach: int) -> bool:
    """Whether tiles of `shape` can sleep: square, at least as wide as their halo (a launch then reads
    only the tiles beside each)."""
    (tx, ty), steps = shape
    return tx == ty and reach * steps <= tx


def blocked_sleeps(tuning: Tuning) -> bool:
    """Whether the tuning's blocked calls may sleep: asked to, on tiles that can (_sleeps_on)."""
    return tuning.sleep_blocked and _sleeps_on(tuning.blocked, tuning.reach)


def sleep_climbs(tuning: Tuning, nx: int, ny: int, is_walled: bool) -> bool:
    """Whether a sleeping blocked call climbs its tiles (Tuning.sleep_climb): on grids whose dense calls
    climb (walled calls every tile, the others their interior ones or, from wide_open_from, wide tiles)."""
    climb = tuning.sleep_climb
    least = tuning.climb_walled_from if is_walled else tuning.climb_from
    if not is_walled and tuning.wide_open_from is not None and wide_shape(tuning, nx, ny) is not None:
        least = tuning.wide_open_from if least is None else min(least, tuning.wide_open_from)
    return (climb is not None and least is not None and nx * ny >= least and 1 <= climb[1] <= 6
            and _sleeps_on(climb, tuning.reach))


def sleeping_odd(tuning: Tuning) -> Shape:
    """The shape of a sleeping blocked call's launches of one substep on the tile program: `blocked`'s
    tiles, whose flags every launch of the call shares (hydro.water_sleep)."""
    return tuning.blocked[0], 1


def sleeping_launches(tuning: Tuning, substeps: int, per_substep: bool, climbs: bool = False) -> list:
    """The shapes of a sleeping blocked call's launches: `blocked`'s, and one of a substep for what is left;
    climbing (sleep_climbs), sleep_climb's and one launch of what is left; every substep apart where
    something reads the state after each."""
    if climbs:
        tile, steps = tuning.sleep_climb
        if per_substep:
            return [(tile, 1)] * substeps
        return [(tile, steps)] * (substeps // steps) + [(tile, substeps % steps)] * (substeps % steps > 0)
    main, odd = tuning.blocked, sleeping_odd(tuning)
    if per_substep:
        return [odd] * substeps
    return [main] * (substeps // main[1]) + [odd] * (substeps % main[1])


def state_shapes(tuning: Tuning, nx: int, ny: int) -> list:
    """Every shape the blocked kernel's launches on an nx x ny grid can take."""
    shapes = [tuning.blocked, tuning.odd, sleeping_odd(tuning)]
    wide = wide_shape(tuning, nx, ny)
    if sleep_climbs(tuning, nx, ny, True) or sleep_climbs(tuning, nx, ny, False):
        shapes.append(tuning.sleep_climb)
    return list(dict.fromkeys(shapes + [wide] * (wide is not None)))


def state_size(nx: int, ny: int, shapes, reach: int = 2) -> tuple[tuple[int, int], int]:
    """Texels (x, y) of the blocked kernel's state of an nx x ny grid whose launches take `shapes`, and
    its margin: every tile of each with its halo of `reach` cells a substep lies in it."""
    margin = reach * max(steps for _, steps in shapes)
    size = tuple(margin + max(-(-(n + 1) // tile[axis]) * tile[axis] + reach * steps for tile, steps in shapes)
                 for axis, n in enumerate((nx, ny)))
    return size, margin


@dataclass(frozen=True)
class TileLayout:
    """Where the tiles of one launch shape lie on an nx x ny grid, and which programs run them."""
    shape: Shape
    tiles: tuple            # (columns, rows) of tiles covering the (nx + 1) x (ny + 1) texels
    first: tuple            # the interior rectangle's first tile (column, row)
    inner: tuple            # its tiles (columns, rows); (0, 0) or less where there is none
    ring: int               # tiles in the ring around it (every tile where there is no rectangle)
    ring_x: tuple           # common/ring.glsl's u_ring_x: (tiles per row, first, last interior column)
    ring_y: tuple           # its u_ring_y: (first, last interior row, tiles in the ring)
    ring_groups: tuple      # the ring dispatch's workgroups (x, y)
    wide: bool              # climbed, the ring through the climb's EDGES program
    climbs: bool            # the interior rectangle climbed (calls with open sides)
    climbs_walled: bool     # every tile climbed (walled calls)
    ahead: int              # climb steps ahead a texel is loaded


def tile_layout(tuning: Tuning, nx: int, ny: int, shape: Shape) -> TileLayout:
    """The layout of `shape`'s launches: a tile is interior when its halo lies in the grid, b t >= halo
    and b t + t + halo <= n; grids below split_from run every tile through the general program."""
    (tx, ty), steps = shape
    halo = tuning.reach * steps
    tiles, first, last = [], [], []
    for n, t in ((nx, tx), (ny, ty)):
        tiles.append(-(-(n + 1) // t))
        first.append(-(-halo // t))
        last.append((n - t - halo) // t)
    if nx * ny < tuning.split_from or last[0] < first[0] or last[1] < first[1]:
        first, last = [0, tiles[1]], [-1, tiles[1] - 1]            # no rectangle: the ring is every tile
    inner = (last[0] - first[0] + 1, last[1] - first[1] + 1)
    ring = tiles[0] * tiles[1] - max(inner[0], 0) * max(inner[1], 0)
    wide = shape == wide_shape(tuning, nx, ny) and shape != tuning.blocked

    def climbs(least, tiles_in):
        return steps == tuning.blocked[1] and least is not None and nx * ny >= least and tiles_in > 0

    return TileLayout(
        shape=shape, tiles=(tiles[0], tiles[1]), first=(first[0], first[1]), inner=inner, ring=ring,
        ring_x=(tiles[0], first[0], last[0]), ring_y=(first[1], last[1], ring),
        ring_groups=(min(ring, tuning.ring_row), -(-ring // tuning.ring_row)), wide=wide,
        climbs=wide or climbs(tuning.climb_from, inner[0]),
        climbs_walled=wide or climbs(tuning.climb_walled_from, tiles[0]),
        ahead=tuning.climb_ahead_wide if wide else tuning.climb_ahead)


@dataclass(frozen=True)
class CallPlan:
    """What a step() call ran: its kernel, substeps and (blocked) whether it was walled and its launches;
    `per_substep`: the flows were read after every substep (the grid's gauges); with inertia, de
    Almeida's smoothing weight of its substeps; `sleep`: the kernel computed only the tiles where something
    could change (hydro.water_sleep)."""
    kernel: str
    substeps: int
    walled: bool = False
    launches: tuple = ()
    per_substep: bool = False
    smoothing: float = 0.0
    sleep: bool = False


@functools.lru_cache(maxsize=256)          # a game's calls repeat a few plans; each is a frozen value
def plan_call(tuning: Tuning, nx: int, ny: int, substeps: int, *, kernel: str | None = None,
              is_walled: bool = False, state_fits: bool = True, per_substep: bool = False,
              smoothing: float = 0.0, sleep: bool = False, sleep_blocked: bool = False) -> CallPlan:
    """The plan of a call of `substeps` substeps: `kernel` where given, else the tuning's; the blocked
    kernel gives way to the fused one where its state would not fit the context's textures.
    `per_substep`: something reads the flows after every substep (gauges), so where no kernel is given
    the call takes the tuning's kernel of one-substep calls (a substep a dispatch, nothing to pack),
    and a blocked call launches one substep at a time (its `odd` shape), each launch's state read.
    `sleep`: the call skips the tiles where nothing can change (hydro.water_sleep) on the cell-wise kernel;
    `sleep_blocked`: on the blocked kernel, in launches of its `blocked` tiles or, where it climbs
    (sleep_climbs), of sleep_climb's (no wide tiles)."""
    chosen = kernel or (tuning.one if per_substep else call_kernel(tuning, substeps))
    if chosen == "blocked" and not state_fits:
        chosen = "fused"
    if chosen != "blocked":
        return CallPlan(chosen, substeps, per_substep=per_substep, smoothing=smoothing,
                        sleep=sleep and chosen == "cells")
    if sleep_blocked:
        shapes = sleeping_launches(tuning, substeps, per_substep, sleep_climbs(tuning, nx, ny, is_walled))
    elif per_substep:
        shapes = [tuning.odd] * substeps
    else:
        shapes = launches(tuning, nx, ny, substeps, is_walled)
    return CallPlan(chosen, substeps, is_walled, tuple(shapes), per_substep, smoothing, sleep_blocked)
