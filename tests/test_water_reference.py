"""Every water kernel on the GPU against the NumPy float64 statement of the model, on random non-square
inputs with boundaries of every kind active, in both pipe-area modes; and the kernels against each
other, to the bit on CPU rasterisers, however the planner tiles a grid (hydro.water_plan.Tuning, through
the grids' test seam)."""
import numpy as np
import pytest

from hydro import _gl
from hydro import boundary as bnd
from hydro import water_plan
from hydro.reference import water as ref
from water_cases import (GRIDS, assert_same_bits, assert_same_ledger, blocked_shape, gpu_flows, random_state,
                         retune, set_boundary_both, twins)

MODES = ["depth", 0.35]


def _boundaries(g, s):
    set_boundary_both(g, s, "left", "inflow", 0.8, span=(2, 7))
    set_boundary_both(g, s, "right", "outflow", 0.5)
    set_boundary_both(g, s, "bottom", "level", 0.9)
    set_boundary_both(g, s, "top", "level", 0.2, span=(0, 5))
    set_boundary_both(g, s, "top", "outflow", 0.3, span=(9, 14))


def _close(a, b, scale, rtol=2e-5):
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * max(scale, 1e-3))


def _step_both(g, s, calls, dt, substeps, rtol):
    """`calls` step() calls of dt in `substeps` on the GPU grid and its reference twin; then the same
    water and flows to rtol of their largest."""
    for _ in range(calls):
        g.step(dt, substeps=substeps)
        ref.step(s, dt, substeps=substeps)
    _close(g.water, s.water, s.water.max(), rtol=rtol)
    for a, b in zip(gpu_flows(g), s.flows()):
        _close(a, b, np.abs(b).max(), rtol=rtol)


@pytest.mark.parametrize("hexagonal", [False, True], ids=["square", "hex"])
def test_reference_boundary_faces_are_the_tables_order(hexagonal):
    """The reference finds the boundary faces by their ends; the grids' table (hydro.boundary) lists
    them side by side: the same faces in the same order, on grids of every small shape."""
    for ny, nx in [(1, 1), (1, 5), (4, 1), (3, 4), (6, 5)]:
        lay = bnd.layout(nx, ny, hexagonal)
        a, i, j = ref.boundary_faces(nx, ny, hexagonal)
        assert a.tolist() == lay.array.tolist() and i.tolist() == lay.i.tolist() and j.tolist() == lay.j.tolist()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_brushes_of_any_radius_match_reference_and_add_their_volume(ctx, rng, kind):
    """Brushes whose rim grazes a cell centre (weights down to float64's cancellation), brushes too
    small to reach any centre (the nearest cell takes it all), brushes over the edge and large ones:
    the GPU adds the reference's weights, and every add_water adds its volume to float32 rounding."""
    terrain, water = random_state(rng, (12, 14))
    g, s = twins(ctx, kind, terrain, water)
    hexagonal = kind == "hex"
    brushes = [(5.5, 5.5, 0.5), (5.5, 5.5, 0.7071069), (6.0, 3.0, 1.0 + 1e-7), (0.2, 11.3, 0.3),
               (-0.4, 4.0, 0.1), (13.4, 6.0, 2.0), (6.0, 6.0, 30.0)]
    brushes += [(rng.uniform(-0.4, 13.4), rng.uniform(-0.4, 11.4), rng.choice([0.3, 0.6, 1.0])) for _ in range(24)]
    for k, (x, y, radius) in enumerate(brushes):
        if k % 3 == 2:
            g.dig(x, y, radius, 0.3)
            ref.dig(s, x, y, radius, 0.3)
        else:
            before = g.volume()
            g.add_water(x, y, radius, 2.0)
            ref.add_water(s, x, y, radius, 2.0)
            assert g.volume() - before == pytest.approx(2.0, rel=0, abs=2e-6 * g.volume())
    _close(g.terrain, s.terrain, np.abs(s.terrain).max(), rtol=1e-6)
    _close(g.water, s.water, s.water.max(), rtol=1e-6)
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
    weights = ref.brush_weights(s.water.shape, 5.5, 5.5, 0.5, hexagonal)   # between centres: one cell
    assert np.count_nonzero(weights) == 1 and weights.max() == 1.0
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
@pytest.mark.parametrize("pipe_area", MODES)
def test_many_steps_match_reference(ctx, rng, kind, pipe_area):
    terrain, water = random_state(rng, (10, 15))
    g, s = twins(ctx, kind, terrain, water, pipe_area=pipe_area, friction=0.1)
    _boundaries(g, s)
    g.dig(4.0, 6.0, 3.0, 0.4)
    ref.dig(s, 4.0, 6.0, 3.0, 0.4)
    g.add_water(6.5, 3.2, 2.5, 3.0)
    ref.add_water(s, 6.5, 3.2, 2.5, 3.0)
    _close(g.terrain, s.terrain, 1.0, rtol=1e-6)
    _close(g.water, s.water, s.water.max(), rtol=1e-6)
    _step_both(g, s, 5, 0.2, 4, rtol=2e-4)
    assert g.iteration == 20
    assert g.sim_time == pytest.approx(1.0)
    g.release()


@pytest.mark.parametrize("shape", [(1, 23), (19, 1), (1, 1)], ids=["one-row", "one-column", "one-cell"])
@pytest.mark.parametrize("kernel", [None, "cells", "fused", "blocked"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_grids_one_cell_thin_match_reference(ctx, rng, kind, kernel, shape):
    """A channel one cell wide (a flume, a pipe between two maps) is a grid like any other: every
    kernel against the reference, with a boundary of each kind on its ends and sides, and a brush."""
    terrain, water = random_state(rng, shape, dry_fraction=0.2)
    g, s = twins(ctx, kind, terrain, water, friction=0.1, kernel=kernel)
    if kernel == "blocked":
        blocked_shape(g, ((5, 3), 2))                   # the blocked kernel's small tiles, whatever the size
    set_boundary_both(g, s, "left", "inflow", 0.4)
    set_boundary_both(g, s, "right", "level", 0.9)
    set_boundary_both(g, s, "bottom", "outflow", 0.05)
    set_boundary_both(g, s, "top", "level", 0.3)
    g.add_water(0.0, 0.0, 1.5, 0.5)
    ref.add_water(s, 0.0, 0.0, 1.5, 0.5)
    _step_both(g, s, 4, 0.1, 4, rtol=1e-4)
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-5)
    assert not np.allclose(g.water, water.astype(np.float32)), "the water did not move"
    g.release()


def _kernel_pair(ctx, kind, terrain, water, kernel="fused", boundaries=True, **params):
    """A grid running `kernel` and one running the cell-wise kernel (the comparison's), same state."""
    grids = []
    for name in (kernel, "cells"):
        g, s = twins(ctx, kind, terrain, water, kernel=name, **params)
        if boundaries:
            _boundaries(g, s)
        grids.append(g)
    return grids


def _same_bits_and_ledger(a, b, what=""):
    assert_same_bits(a.water, b.water, err_msg=f"{what} water")
    for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
        assert_same_bits(fa, fb, err_msg=f"{what} flows")
    assert_same_ledger(a.ledger(), b.ledger(), what)
    assert a.volume() == pytest.approx(a.ledger()["expected"], rel=1e-6)


# The fused kernel in its tile shapes: the large ones of GPUs and the small one (one invocation per cell
# of the tile and its two-cell halo, unrolled as GPUs run them), smaller ones, and an odd one (tiles that
# are not a multiple of the workgroup, 100 invocations), plain and unrolled.
FUSED_TILES = {"as-sized": None, "16x16x256": (16, 16, 256), "28x28x1024-unrolled": (28, 28, 1024, True),
               "28x12x512-unrolled": (28, 12, 512, True), "12x12x256-unrolled": (12, 12, 256, True),
               "24x7x100": (24, 7, 100), "24x7x100-unrolled": (24, 7, 100, True)}


@pytest.mark.parametrize("tile", list(FUSED_TILES))
@pytest.mark.parametrize("kind", list(GRIDS))
def test_fused_kernel_gives_the_cell_wise_bits(ctx, rng, kind, tile):
    """The fused kernel does the cell-wise kernel's arithmetic (the move applied lazily): the same
    water, flows and ledger, with every boundary kind, brushes and 1 to 5 substeps a call."""
    terrain, water = random_state(rng, (45, 53))          # several tiles, ragged edges, interior tiles
    a, b = _kernel_pair(ctx, kind, terrain, water, "fused", friction=0.2)
    if FUSED_TILES[tile]:
        tx, ty, threads, *unrolled = FUSED_TILES[tile]
        retune(a, fused_tile=(tx, ty, threads), min_tiles=0, unrolled=bool(unrolled))
    for g in (a, b):
        for i in range(6):
            g.step(0.15, substeps=1 + i % 5)
            if i == 2:
                g.add_water(20.0, 18.0, 5.0, 9.0)
                g.dig(10.0, 30.0, 4.0, 0.5)
    assert a._last_call.kernel == "fused" and b._last_call.kernel == "cells"
    if FUSED_TILES[tile]:
        assert a._kernel_object("fused").tile == FUSED_TILES[tile][:3]
    _same_bits_and_ledger(a, b, tile)
    for g in (a, b):
        g.release()


# How the blocked kernel's launches run a grid: split (interior tiles through one program, the ring of
# tiles around them, with every boundary test, through the general one) or not (every tile through
# the general one, as on small grids); split interior tiles settled at once (blocked_tile.comp) or, on
# the square lattice, climbed a row at a time (blocked_climb.comp, large grids).
# (lattice, split_from, climb_from)
LAYOUTS = {"square-split-tiles": ("square", 0, None), "square-split-climbed": ("square", 0, 0),
           "square-one-program": ("square", 10 ** 9, 0), "hex-split": ("hex", 0, None),
           "hex-one-program": ("hex", 10 ** 9, None)}


def _laid_out(g, layout):
    _, split, climb = LAYOUTS[layout]
    return retune(g, split_from=split, climb_from=climb, climb_walled_from=climb)


@pytest.mark.parametrize("steps", [1, 2, 3], ids=["1-step", "2-steps", "3-steps"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_blocked_kernel_gives_the_cell_wise_bits(ctx, rng, layout, steps):
    """The blocked kernel's programs give the cell-wise kernel's water, flows and ledger to the bit on
    llvmpipe, however a grid's tiles run (LAYOUTS)."""
    kind = LAYOUTS[layout][0]
    terrain, water = random_state(rng, (45, 53))
    a, b = _kernel_pair(ctx, kind, terrain, water, "blocked", friction=0.2)
    _laid_out(blocked_shape(a, ((5, 3), steps)), layout)
    for g in (a, b):
        g.step(0.15, substeps=5)             # with 2 or 3 a launch, a launch of 1 for the rest
    lay = a._kernel_object("blocked")._layout(((5, 3), steps))[0]        # which programs ran
    split, climbed = "split" in layout, "climbed" in layout
    assert (min(lay.inner) > 0) == split and lay.ring > 0 and lay.climbs == (climbed and steps == lay.shape[1])
    _same_bits_and_ledger(a, b, layout)
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("walled", [True, False], ids=["walled", "ring"])
@pytest.mark.parametrize("steps", [2, 3], ids=["2-steps", "3-steps"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_blocked_kernel_tells_ring_tiles_from_interior_ones(ctx, rng, layout, steps, walled):
    """A tile is interior only when its whole halo (two cells a substep) lies in the grid: near-dry
    water over rough ground, walled in by ledges on every side, at the stable limit, so that a tile
    taken for interior too near an edge (its boundary faces worked as ordinary ones, against the zeros
    outside the grid) changes the outflow scales its cells see. The cell-wise bits either way, with the
    walls worked by the ring's general program or (walled calls) by the ghost columns around the grid
    that every tile takes through the interior program."""
    terrain = rng.uniform(0.0, 1.0, (45, 53))
    terrain[0], terrain[-1], terrain[:, 0], terrain[:, -1] = 2.0, 2.0, 2.0, 2.0
    water = rng.uniform(0.005, 0.02, (45, 53))
    kind = LAYOUTS[layout][0]
    a, b = _kernel_pair(ctx, kind, terrain, water, "blocked", boundaries=False, friction=0.0)
    _laid_out(blocked_shape(a, ((5, 3), steps)), layout)
    if not walled:                  # the ring's programs work the walls
        b.set_boundary("left", "inflow", 0.0)
        a.set_boundary("left", "inflow", 0.0)
    for _ in range(3):
        dt = steps * 0.9 * b.max_stable_dt()
        for g in (a, b):
            g.step(dt, substeps=steps)
    assert a._last_call.walled == walled
    lay = a._kernel_object("blocked")._layout(((5, 3), steps))[0]
    if walled:                  # every tile through one program: climbed wherever the climb is on
        assert lay.climbs_walled == (LAYOUTS[layout][2] is not None)
    else:
        assert lay.climbs == ("climbed" in layout)
    _same_bits_and_ledger(a, b, layout)
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("shape", [((24, 24), 2), ((1, 1), 1), ((5, 3), 1), ((1, 1), 2), ((5, 3), 2)],
                         ids=["default", "1x1", "5x3", "1x1-2steps", "5x3-2steps"])
@pytest.mark.parametrize("split", [False, True], ids=["as-sized", "split"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_blocked_kernel_on_tiny_and_ragged_grids(ctx, rng, kind, shape, split):
    """The blocked kernel against the cell-wise one where its tiles do not fit: grids narrower or shorter
    than one tile, one column or row past a multiple of it, tiles of one cell. Every side has a boundary
    of another kind. As step() runs grids of these sizes (every tile through the general program), and
    split as large grids are (square: interior tiles climbed)."""
    for size in [(2, 2), (3, 70), (70, 3), (65, 129), (2, 61), (9, 2)]:
        terrain, water = random_state(rng, size)
        a, b = _kernel_pair(ctx, kind, terrain, water, "blocked", boundaries=False, friction=0.2)
        blocked_shape(a, shape)
        if split:
            retune(a, split_from=0, climb_from=0 if kind == "square" else None)
        for g in (a, b):
            g.set_boundary("left", "inflow", 0.8)
            g.set_boundary("right", "level", 0.9)
            g.set_boundary("bottom", "outflow", 0.3)
            g.set_boundary("top", "level", 0.4, span=(0, 1))
            for i in range(4):
                g.step(0.1, substeps=1 + i % 3)
        assert a.volume() > 0.0
        _same_bits_and_ledger(a, b, str(size))
        for g in (a, b):
            g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
@pytest.mark.parametrize("pipe_area", MODES)
def test_cell_wise_passes_match_reference(ctx, rng, kind, pipe_area):
    """The cell-wise kernel against the reference, pass by pass: the boundary faces and cells_accelerate
    give the accelerated flows; cells_move and the boundary faces booked the scaled flows, the ledger and
    the move. 37 rows: two full columns of cell_rows cells and a ragged one."""
    terrain, water = random_state(rng, (37, 21))
    g, s = twins(ctx, kind, terrain, water, rng, flows_scale=0.3, pipe_area=pipe_area, friction=0.3, kernel="cells")
    _boundaries(g, s)
    dt = 0.06
    cells = g._kernel_object("cells")
    state = g._state
    accelerate, move, boundary = cells._programs(sleeping=False)
    for prog in (accelerate, move, *boundary.values()):
        _gl.set_uniforms(prog, **state.model_uniforms(dt))
    for prog in boundary.values():
        _gl.set_uniforms(prog, u_count=cells.faces)
    state.bind()
    cells._bind()
    cells._boundary(boundary[False, True], every=True)
    cells._cells(accelerate)
    acc_gpu = [np.frombuffer(b.read(), np.float32).reshape(shape)
               for b, shape in zip(state.flows_tmp, state.flow_shapes)]
    for a, b in zip(acc_gpu, ref.accelerate(s, dt)):
        _close(a, b, np.abs(b).max())
    cells._cells(move)
    cells._boundary(boundary[True, False], every=True)
    scaled_ref, crossed = ref.scale_outflow(s, [a.astype(np.float64) for a in acc_gpu], dt)
    for a, b in zip(gpu_flows(g), scaled_ref):
        _close(a, b, np.abs(b).max())
    ledger = np.frombuffer(state.ledger.read(), np.float64)[:g._drain_slot]
    _close(ledger, crossed, np.abs(crossed).max())
    assert np.any(scaled_ref[0] != acc_gpu[0]), "outflow scaling was never active: the case is too gentle"
    moved = ref.move(s, [f.astype(np.float64) for f in gpu_flows(g)], dt)
    _close(g.water, moved, moved.max())
    g.release()


@pytest.mark.parametrize("shape", [(2, 2), (3, 70), (70, 3), (65, 129), (24, 24), (25, 49)])
@pytest.mark.parametrize("tile", [None, ((1, 1), 1), ((5, 3), 2), ((5, 3), 3)],
                         ids=["default", "1x1", "5x3-2steps", "5x3-3steps"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_walled_calls_give_the_cell_wise_bits_on_any_size(ctx, rng, kind, shape, tile):
    """Walled calls run every tile of the blocked kernel through the interior program against the ghost
    columns around the grid, however the tiles fall on it (narrower than a tile, a column past a
    multiple of it, exactly a multiple): the cell-wise bits, water and flows, and nothing crosses the
    walls."""
    terrain, water = random_state(rng, shape)
    a, b = _kernel_pair(ctx, kind, terrain, water, "blocked", boundaries=False, friction=0.1)
    if tile:
        blocked_shape(a, tile)
    for g in (a, b):
        for i in range(4):
            g.step(0.1, substeps=1 + i % 3)
    assert a._last_call.walled
    _same_bits_and_ledger(a, b, str(shape))
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_dry_cells_of_minus_zero_depth_keep_every_kernel_to_the_same_bits(ctx, rng, kind):
    """A depth of -0.0 passes the depth checks (-0.0 < 0 is false). A dry cell with no outflow then
    holds -0, and its outflow scale must still come out +0 or 1, never -0: the kernels multiply faces
    with no flow by a K, and a -0 K would turn them into -0.0 flows. Every kernel gives the cell-wise
    bits, flows and the sign of their zeros included, the climb too."""
    terrain, water = random_state(rng, (45, 53))
    water = np.asarray(water, np.float32)
    assert (water == 0).sum() > 100
    water[water == 0] = -0.0
    grids = []
    for kernel in ("cells", "blocked", "fused"):
        g, _ = twins(ctx, kind, terrain, water, friction=0.1, kernel=kernel)
        g.water = water                                  # the setter keeps the sign of zero
        if kernel == "blocked" and kind == "square":
            retune(g, wide=((0, ((5, 3), 3)),))           # climbed on this grid
        grids.append(g)
    for g in grids:
        g.step(0.15, substeps=3)
    for g in grids[1:]:
        assert g._last_call.kernel == g.kernel
        _same_bits_and_ledger(g, grids[0], g.kernel)
    for g in grids:
        g.release()


def _wide_plan(n, wide):
    """The launches of a call of n substeps on a grid that takes the wide shape `wide`, most substeps
    first: as many wide launches as leave the rest to launches of the default blocked shape's two,
    where some number does, and a launch of one substep for what is left."""
    t = water_plan.Tuning.for_device("gpu", False)
    even = [q for q in range(n // wide[1] + 1) if (n - q * wide[1]) % 2 == 0]
    q = max(even) if even else n // wide[1]
    rest = n - q * wide[1]
    return [wide] * q + [t.blocked] * (rest // 2) + [t.odd] * (rest % 2)


@pytest.mark.parametrize("wide, ahead", [(((52, 40), 3), 1), (((112, 24), 4), 1), (((5, 3), 3), 1),
                                         (((7, 4), 4), 1), (((5, 3), 5), 1), (((4, 3), 6), 2), (((5, 3), 3), 0),
                                         (((5, 3), 3), 3)],
                         ids=["52x40x3", "112x24x4", "5x3x3", "7x4x4", "5x3x5", "4x3x6-load-2-ahead",
                              "5x3x3-load-0-ahead", "5x3x3-load-3-ahead"])
@pytest.mark.parametrize("shape", [(45, 53), (130, 97)])
def test_walled_calls_of_large_grids_climb_wider_tiles_to_the_same_bits(ctx, rng, shape, wide, ahead):
    """Walled calls on large square grids climb the wide tiles (more substeps a launch, workgroups of
    several warps, texels loaded climb_ahead_wide steps ahead), the rest of a call's substeps in
    launches of the blocked shape's two and, for one substep, of the odd one: calls of 1 to 8
    substeps give the cell-wise bits. A side opened on a grid smaller than wide_open_from takes the
    ring, with the blocked shape's tiles, and walled calls climb the wide tiles again after."""
    terrain, water = random_state(rng, shape)
    a, b = _kernel_pair(ctx, "square", terrain, water, "blocked", boundaries=False, friction=0.1, sleep=False)
    retune(a, wide=((0, wide),), climb_ahead_wide=ahead)
    main = a._tuning.blocked
    for n in range(1, 9):
        for g in (a, b):
            g.step(0.05 * n, substeps=n)
        call = a._last_call
        assert call.walled and sum(steps for _, steps in call.launches) == n
        assert sorted(call.launches, key=lambda s: -s[1]) == _wide_plan(n, wide), n
        assert_same_bits(a.water, b.water, err_msg=f"{n} substeps")
    for g in (a, b):
        g.set_boundary("top", "outflow", 0.5)
        g.step(0.3, substeps=6)
    assert not a._last_call.walled and a._last_call.launches == (main,) * 3
    for g in (a, b):
        g.set_boundary("top", "wall")
        g.step(0.3, substeps=2 * wide[1])
    assert a._last_call.walled and a._last_call.launches == (wide,) * 2
    _same_bits_and_ledger(a, b)
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("pipe_area", MODES)
@pytest.mark.parametrize("wide", [((5, 3), 3), ((7, 4), 4), ((12, 5), 2)], ids=["5x3x3", "7x4x4", "12x5x2"])
@pytest.mark.parametrize("shape", [(45, 53), (130, 97)], ids=["ring-only", "split"])
def test_open_calls_climb_wide_tiles_with_their_edges_to_the_same_bits(ctx, rng, shape, wide, pipe_area):
    """Calls with open sides on large square grids climb the wide tiles, the ring of tiles along the
    edges through blocked_climb.comp's EDGES program (boundary faces worked from the table, cells
    outside the grid held, what crossed each face booked a slot a substep) and the interior through
    the walled calls' climb: calls of 1 to 8 substeps give the cell-wise water, flows and ledger to the
    bit, with every kind of boundary on the sides and the sides changed between calls."""
    terrain, water = random_state(rng, shape)
    a, b = _kernel_pair(ctx, "square", terrain, water, "blocked", friction=0.2, pipe_area=pipe_area, sleep=False)
    retune(a, wide=((0, wide),), wide_open_from=0, split_from=100 * 100)
    for n in range(1, 9):
        for g in (a, b):
            g.step(0.05 * n, substeps=n)
        call = a._last_call
        assert not call.walled and sum(steps for _, steps in call.launches) == n
        assert sorted(call.launches, key=lambda s: -s[1]) == _wide_plan(n, wide), n
        _same_bits_and_ledger(a, b, f"{n} substeps")
    lay = a._kernel_object("blocked")._layout(wide)[0]
    assert (min(lay.inner) > 0) == (shape == (130, 97))
    for g in (a, b):                                 # sides swapped between calls
        g.set_boundary("left", "outflow", 0.4)
        g.set_boundary("right", "inflow", 0.6, span=(3, 20))
        g.set_boundary("bottom", "wall")
        g.step(0.4, substeps=8)
    assert a._last_call.launches[0] == wide
    _same_bits_and_ledger(a, b, "sides swapped")
    led = a.ledger()
    assert led["inflow"] > 0 > led["outflow"]
    for g in (a, b):
        g.release()


# the model's parameters, and what else the blocked kernel's tuning needs for it (inertia: a halo of three
# cells a substep, which `blocked`'s default tiles would not leave room for in these grids)
CLIMB_MODELS = {"classic": (dict(friction=0.2), {}),
                "inertia": (dict(friction=0.1, manning=0.03, inertia=True), dict(blocked=((4, 4), 1), odd=((4, 4), 1)))}


@pytest.mark.parametrize("model", list(CLIMB_MODELS))
@pytest.mark.parametrize("wide", [((5, 3), 3), ((7, 4), 4)], ids=["5x3x3", "7x4x4"])
def test_open_calls_climb_wide_tiles_on_tiny_and_ragged_grids(ctx, rng, wide, model):
    """The EDGES climb where its tiles do not fit: grids narrower or shorter than a tile and its halo,
    one column or row past a multiple of it, every side a boundary of another kind, classic pipes and
    with inertia: the cell-wise bits, water, flows and ledger."""
    params, tuning = CLIMB_MODELS[model]
    for shape in [(2, 2), (3, 70), (70, 3), (9, 2), (2, 61), (36, 29)]:
        terrain, water = random_state(rng, shape)
        a, b = _kernel_pair(ctx, "square", terrain, water, "blocked", boundaries=False, sleep=False, **params)
        retune(a, wide=((0, wide),), wide_open_from=0, **tuning)
        for g in (a, b):
            g.set_boundary("left", "inflow", 0.8)
            g.set_boundary("right", "level", 0.9)
            g.set_boundary("bottom", "outflow", 0.3)
            g.set_boundary("top", "level", 0.4, span=(0, 1))
            for n in (wide[1], 2 * wide[1] + 1, 1):
                g.step(0.05 * n, substeps=n)
                if g is a and n == wide[1]:
                    assert a._last_call.launches == (wide,) and not a._last_call.walled, shape
        assert a.volume() > 0.0
        _same_bits_and_ledger(a, b, str(shape))
        for g in (a, b):
            g.release()


def test_walled_calls_only_where_ghost_columns_stand_for_walls(ctx, rng):
    """A call is walled only on a grid of walls with pipes of the water's depth whose beds stay above
    WALLED_MIN_BED: an open side, a fixed pipe area or a pit dug below it take the ring, and a walled
    call follows again when the sides or the terrain allow it. The water agrees with the cell-wise
    kernel all along (a pit a million times deeper than the water is tall)."""
    terrain, water = random_state(rng, (30, 34))
    made = {}
    for kind, pipe_area in (("square", "depth"), ("hex", "depth"), ("square", 0.5)):
        made[kind, pipe_area] = _kernel_pair(ctx, kind, terrain, water, "blocked", boundaries=False, friction=0.1,
                                             pipe_area=pipe_area)
    for (kind, pipe_area), grids in made.items():
        for g in grids:
            g.step(0.2, substeps=4)
        assert grids[0]._last_call.walled == (pipe_area == "depth")
    a, b = made["square", "depth"]
    for side, walled in (("inflow", False), ("wall", True)):
        for g in (a, b):
            g.set_boundary("left", side, 0.5 if side == "inflow" else 0.0)
            g.step(0.2, substeps=4)
        assert a._last_call.walled == walled
    for depth, walled in ((5e29, True), (2e30, False)):     # the bound: 5e29 below the lowest bed is above -1e30
        for g in (a, b):
            g.dig(10.0 + depth / 1e29, 10.0, 2.0, depth)
            g.step(0.2, substeps=4)
        assert a._last_call.walled == walled
    for g in (a, b):
        g.terrain = terrain
        g.step(0.2, substeps=4)
    assert a._last_call.walled
    for (kind, pipe_area), (g, h) in made.items():
        _same_bits_and_ledger(g, h, f"{kind} {pipe_area}")
        g.release()
        h.release()


@pytest.mark.parametrize("how", ["outflow-then-wall", "level-then-wall", "inflow-then-wall", "flow-setters"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_walls_carry_nothing_whatever_flow_their_faces_held(ctx, rng, kind, how):
    """A wall carries nothing, whatever its face held before: a side that was open until set_boundary
    made it a wall, or flows set on the edge faces (a saved game; on the hex lattice the unused corner
    faces too). Walled calls give the cell-wise bits, the sign of zero included, and lose no water."""
    terrain, water = random_state(rng, (30, 34))
    a, b = _kernel_pair(ctx, kind, terrain, water, "blocked", boundaries=False, friction=0.0)
    for g in (a, b):
        if how == "flow-setters":
            names = ["flow_x", "flow_y"] + ["flow_z"] * (kind == "hex")
            for name in names:
                q = getattr(g, name)
                q[:, 0], q[:, -1], q[0, :], q[-1, :] = -0.3, 0.3, -0.2, 0.2
                setattr(g, name, q)
        else:
            was, side, value = {"outflow-then-wall": ("outflow", "left", 2.0), "level-then-wall": ("level", "left", 0.0),
                                "inflow-then-wall": ("inflow", "right", 2.0)}[how]
            g.set_boundary(side, was, value)
            g.step(0.2, substeps=4)
            g.set_boundary(side, "wall")
        g.step(0.2, substeps=4)
    assert a._last_call.walled
    _same_bits_and_ledger(a, b, how)
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kernel", ["cells", None])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_calls_walled_open_and_walled_again_match_reference(ctx, rng, kind, kernel):
    """Calls on a grid walled all round read no boundary face (the cell-wise kernel's WALLED accelerate
    pass): walled, then open on three sides, then walled again, the grid keeps the float64 reference's
    water and flows, and its sides' books stop once every side is a wall."""
    terrain, water = random_state(rng, (26, 33))
    g, s = twins(ctx, kind, terrain, water, rng, flows_scale=0.2, friction=0.2, kernel=kernel)
    _step_both(g, s, 2, 0.1, 3, 2e-5)
    _boundaries(g, s)
    _step_both(g, s, 2, 0.1, 3, 2e-5)
    for side in ("left", "right", "bottom", "top"):
        set_boundary_both(g, s, side, "wall")
    booked = {k: v for k, v in g.ledger().items() if k in ("inflow", "outflow", "level")}
    assert all(v != 0.0 for v in booked.values())
    _step_both(g, s, 3, 0.1, 3, 2e-5)
    assert {k: g.ledger()[k] for k in booked} == booked
    g.release()


@pytest.mark.parametrize("sides", ["walls", "open"])
def test_hex_runs_of_calls_match_the_cell_wise_kernel_on_both_gpu_kernels(ctx, rng, sides):
    """On the hex lattice a run of calls, each starting from the flows the last one left, gives the
    cell-wise water, flows and ledger to the bit with the planner's choice (blocked from two substeps
    a call on GPUs) and with either GPU kernel in every call. (On one GPU driver the pack once started
    every call but a grid's first from no z flow; tests/test_gpu_check.py shows the GPU check that
    caught it fails that fault.)"""
    terrain, water = random_state(rng, (37, 45))
    for kernel in (None, "blocked", "fused"):
        a, b = _kernel_pair(ctx, "hex", terrain, water, "cells", boundaries=sides == "open", friction=0.1,
                            sleep=False)
        a.kernel = kernel
        if kernel is None:
            retune(a, one="fused", many="blocked")
        for n in (2, 1, 2, 4, 3):
            for g in (a, b):
                g.step(0.04 * n, substeps=n)
            assert a._last_call.kernel == (kernel or ("blocked" if n >= 2 else "fused")), (kernel, n)
            _same_bits_and_ledger(a, b, f"{kernel} {n}")
        assert np.abs(gpu_flows(a)[2]).max() > 0       # the z flows the calls start from are not all 0
        for g in (a, b):
            g.release()
