"""Every water pass on the GPU against its NumPy float64 twin, on random non-square inputs with
boundaries of every kind active, in both pipe-area modes."""
import numpy as np
import pytest

from hydro import water_passes
from hydro.reference import water as ref
from water_cases import (GRIDS, assert_same_bits, assert_same_ledger, gpu_flows, random_state, set_boundary_both,
                         twins)

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


@pytest.mark.parametrize("kind", list(GRIDS))
@pytest.mark.parametrize("pipe_area", MODES)
def test_each_pass_matches_reference(ctx, rng, kind, pipe_area):
    terrain, water = random_state(rng, (11, 17))
    g, s = twins(ctx, kind, terrain, water, rng, flows_scale=0.3, pipe_area=pipe_area, friction=0.3)
    _boundaries(g, s)
    dt = 0.06
    g.passes = 3                  # the three passes, whatever this device's step runs
    # accelerate: stored flows -> *_tmp buffers
    g._set_step_uniforms(dt)
    g._bind_step()
    g._accelerate()
    acc_gpu = [np.frombuffer(b.read(), np.float32).reshape(shape)
               for b, shape in zip(g._flows_tmp, g._flow_shapes)]
    acc_ref = ref.accelerate(s, dt)
    for a, b in zip(acc_gpu, acc_ref):
        _close(a, b, np.abs(b).max())
    # scale_outflow, fed the GPU's accelerated flows so the pass is checked alone
    g._scale_outflow()
    scaled_ref, crossed = ref.scale_outflow(s, [a.astype(np.float64) for a in acc_gpu], dt)
    for a, b in zip(gpu_flows(g), scaled_ref):
        _close(a, b, np.abs(b).max())
    ledger = np.frombuffer(g._ledger_faces.read(), np.float64)[:g._drain_slot]
    _close(ledger, crossed, np.abs(crossed).max())
    assert np.any(scaled_ref[0] != acc_ref[0]), "outflow scaling was never active: the case is too gentle"
    # move, fed the GPU's scaled flows
    g._move()
    moved = ref.move(s, [f.astype(np.float64) for f in gpu_flows(g)], dt)
    _close(g.water, moved, moved.max())
    assert not np.allclose(moved, s.water), "water did not move"
    g.release()


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
@pytest.mark.parametrize("passes", [None, 1, 2, 3])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_grids_one_cell_thin_match_reference(ctx, rng, kind, passes, shape):
    """A channel one cell wide (a flume, a pipe between two maps) is a grid like any other: every
    path against the reference, with a boundary of each kind on its ends and sides, and a brush."""
    terrain, water = random_state(rng, shape, dry_fraction=0.2)
    g, s = twins(ctx, kind, terrain, water, friction=0.1, passes=passes)
    if passes == 1:
        g._packed = (5, 3, 2)                   # the packed kernel whatever the size
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


# The fused kernels: as step() chooses them (calls of 1 to 5 substeps take the tile kernel, then the
# tile kernel on the packed state from PACKED_MIN_SUBSTEPS); the tile kernel (step_fused.comp) alone in
# its default shape, in a smaller one, in the GPUs' shapes (one invocation per cell of the tile and its
# two-cell halo, unrolled as GPUs run them) and in an odd one (tiles that are not a multiple of the
# workgroup, a workgroup of 100 invocations; also unrolled); the tile kernel on the packed state
# (step_packed.comp) alone in its default shape (24x24, two substeps a launch), the single-substep
# shapes of a call's remainder and small ones of one and two substeps a launch.
TILE = {"_packed": False}
FUSED = {"auto": {}, "tiles": TILE, "tiles-16x16": {**TILE, "_tile": (16, 16, 256)},
         "tiles-28x28x1024-unrolled": {**TILE, "_unrolled": True, "_tile": (28, 28, 1024)},
         "tiles-28x12x512-unrolled": {**TILE, "_unrolled": True, "_tile": (28, 12, 512)},
         "tiles-12x12x256-unrolled": {**TILE, "_unrolled": True, "_tile": (12, 12, 256)},
         "tiles-24x7x100": {**TILE, "_tile": (24, 7, 100)},
         "tiles-24x7x100-unrolled": {**TILE, "_unrolled": True, "_tile": (24, 7, 100)},
         "packed": {"_packed": True}, "packed-12x12": {"_packed": (12, 12)},
         "packed-12x28": {"_packed": (12, 28)}, "packed-5x3": {"_packed": (5, 3)},
         "packed-5x3-2steps": {"_packed": (5, 3, 2)}, "packed-12x12-2steps": {"_packed": (12, 12, 2)}}


@pytest.mark.parametrize("fused", list(FUSED))
@pytest.mark.parametrize("kind", list(GRIDS))
def test_fused_step_matches_three_passes(ctx, rng, kind, fused):
    """The fused kernels do the arithmetic of the three passes (the move applied lazily): the
    same result to rounding, with every boundary kind, brushes and 1 to 5 substeps per call."""
    terrain, water = random_state(rng, (45, 53))          # several tiles, ragged edges, interior tiles
    grids = []
    for p in (1, 3):
        g, s = twins(ctx, kind, terrain, water, friction=0.2)
        g.passes = p
        if p == 1:
            for name, value in FUSED[fused].items():
                setattr(g, name, value)
        _boundaries(g, s)
        grids.append(g)
    for g in grids:
        for i in range(6):
            g.step(0.15, substeps=1 + i % 5)
            if i == 2:
                g.add_water(20.0, 18.0, 5.0, 9.0)
                g.dig(10.0, 30.0, 4.0, 0.5)
    a, b = grids
    _close(a.water, b.water, b.water.max(), rtol=1e-6)      # the same to rounding (FMA contraction
    for fa, fb in zip(gpu_flows(a), gpu_flows(b)):          # may differ between two shaders)
        _close(fa, fb, np.abs(fb).max(), rtol=1e-6)
    la, lb = a.ledger(), b.ledger()
    for key in la:
        assert la[key] == pytest.approx(lb[key], rel=1e-6, abs=1e-9)
    assert a.volume() == pytest.approx(la["expected"], rel=1e-6)
    for g in grids:
        g.release()


# How the packed kernel's launches run a grid: split (interior tiles through one program, the ring of
# tiles around them, with every boundary test, through the general one) or not (every tile through
# the general one, as on small grids); split interior tiles settled at once (step_packed.comp) or, on
# the square lattice, climbed a row at a time (step_stream.comp, large grids).
# (lattice, SPLIT_MIN_CELLS, STREAM_MIN_CELLS)
LAYOUTS = {"square-split-tiles": ("square", 0, None), "square-split-climbed": ("square", 0, 0),
           "square-one-program": ("square", 10 ** 9, 0), "hex-split": ("hex", 0, None),
           "hex-one-program": ("hex", 10 ** 9, None)}


def _layout(monkeypatch, layout) -> str:
    kind, split, climb = LAYOUTS[layout]
    monkeypatch.setitem(water_passes.SPLIT_MIN_CELLS, kind, split)
    monkeypatch.setitem(water_passes.STREAM_MIN_CELLS, kind, climb)
    monkeypatch.setitem(water_passes.STREAM_MIN_CELLS_WALLED, kind, climb)
    return kind


@pytest.mark.parametrize("steps", [1, 2, 3], ids=["1-step", "2-steps", "3-steps"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_packed_kernel_gives_the_three_passes_bits(ctx, rng, layout, steps, monkeypatch):
    """The packed kernel's programs give the three passes' water and flows to the bit on llvmpipe,
    however a grid's tiles run (LAYOUTS): the move is `precise` in every shader
    (common/water.glsl), so no compiler fuses it differently."""
    kind = _layout(monkeypatch, layout)
    split, climbed = "split" in layout, "climbed" in layout
    terrain, water = random_state(rng, (45, 53))
    grids = []
    for p in (1, 3):
        g, s = twins(ctx, kind, terrain, water, friction=0.2)
        g.passes = p
        g._packed = (5, 3, steps) if p == 1 else False
        _boundaries(g, s)
        grids.append(g)
    for g in grids:
        g.step(0.15, substeps=5)             # with 2 or 3 a launch, a launch of 1 for the rest
    a, b = grids
    lay = a._packed_layout                                        # which programs ran
    assert (min(lay["inner"]) > 0) == split and lay["ring_y"][2] > 0 and lay["climbs"] == climbed
    assert_same_bits(a.water, b.water)
    for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
        assert_same_bits(fa, fb)
    for g in grids:
        g.release()


@pytest.mark.parametrize("walled", [True, False], ids=["walled", "ring"])
@pytest.mark.parametrize("steps", [2, 3], ids=["2-steps", "3-steps"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_packed_kernel_tells_ring_tiles_from_interior_ones(ctx, rng, layout, steps, walled, monkeypatch):
    """A tile is interior only when its whole halo (two cells a substep) lies in the grid: near-dry
    water over rough ground, walled in by ledges on every side, at the stable limit, so that a tile
    taken for interior too near an edge (its boundary faces worked as ordinary ones, against the zeros
    outside the grid) changes the outflow scales its cells see. The three passes' bits either way, with
    the walls worked by the ring's general program or (walled calls, square) by the ghost columns
    around the grid that every tile takes through the interior program."""
    terrain = rng.uniform(0.0, 1.0, (45, 53))
    terrain[0], terrain[-1], terrain[:, 0], terrain[:, -1] = 2.0, 2.0, 2.0, 2.0
    water = rng.uniform(0.005, 0.02, (45, 53))
    kind = _layout(monkeypatch, layout)
    if not walled:
        monkeypatch.setattr(water_passes, "WALLED_MIN_BED", float("inf"))
    grids = []
    for p in (1, 3):
        g, _ = twins(ctx, kind, terrain, water, friction=0.0, passes=p)
        g._packed = (5, 3, steps) if p == 1 else False
        grids.append(g)
    for g in grids:
        for _ in range(3):
            g.step(steps * 0.9 * g.max_stable_dt(), substeps=steps)
    a, b = grids
    if walled:                  # every tile through one program: climbed wherever the climb is on
        assert a._packed_layout["walled_climbs"] == (LAYOUTS[layout][2] is not None)
    else:
        assert a._packed_layout["climbs"] == ("climbed" in layout)
    assert a._walled_call == walled
    assert_same_bits(a.water, b.water)
    for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
        assert_same_bits(fa, fb)
    for g in grids:
        g.release()


@pytest.mark.parametrize("tile", [True, (1, 1), (5, 3), (1, 1, 2), (5, 3, 2)],
                         ids=["default", "1x1", "5x3", "1x1-2steps", "5x3-2steps"])
@pytest.mark.parametrize("split", [False, True], ids=["as-sized", "split"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_packed_kernel_on_tiny_and_ragged_grids(ctx, rng, kind, tile, split, monkeypatch):
    """The packed kernel against the three passes where its tiles do not fit: grids narrower or
    shorter than one tile, one column or row past a multiple of it, tiles of one cell. Every side
    has a boundary of another kind. As step() runs grids of these sizes (every tile through the
    general program), and split as large grids are (square: interior tiles climbed)."""
    if split:
        monkeypatch.setitem(water_passes.SPLIT_MIN_CELLS, kind, 0)
        if kind == "square":
            monkeypatch.setitem(water_passes.STREAM_MIN_CELLS, kind, 0)
    for shape in [(2, 2), (3, 70), (70, 3), (65, 129), (2, 61), (9, 2)]:
        terrain, water = random_state(rng, shape)
        grids = []
        for p in (1, 3):
            g, s = twins(ctx, kind, terrain, water, friction=0.2, passes=p)
            g._packed = tile if p == 1 else False
            set_boundary_both(g, s, "left", "inflow", 0.8)
            set_boundary_both(g, s, "right", "level", 0.9)
            set_boundary_both(g, s, "bottom", "outflow", 0.3)
            set_boundary_both(g, s, "top", "level", 0.4, span=(0, 1))
            grids.append(g)
        for g in grids:
            for i in range(4):
                g.step(0.1, substeps=1 + i % 3)
        a, b = grids
        assert a.volume() > 0.0
        _close(a.water, b.water, b.water.max(), rtol=1e-6)
        for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
            _close(fa, fb, np.abs(fb).max(), rtol=1e-6)
        la, lb = a.ledger(), b.ledger()
        for key in la:
            assert la[key] == pytest.approx(lb[key], rel=1e-6, abs=1e-9), (shape, key)
        for g in grids:
            g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
@pytest.mark.parametrize("pipe_area", MODES)
def test_cell_wise_passes_match_reference(ctx, rng, kind, pipe_area):
    """The cell-wise step (passes=2) against the same twins, pass by pass: the boundary faces and
    accelerate_cells give the accelerated flows; scale_and_move and the boundary faces booked the
    scaled flows, the ledger and the move. 37 rows: two full columns of CELL_ROWS cells and a ragged one."""
    terrain, water = random_state(rng, (37, 21))
    g, s = twins(ctx, kind, terrain, water, rng, flows_scale=0.3, pipe_area=pipe_area, friction=0.3, passes=2)
    _boundaries(g, s)
    dt = 0.06
    g._set_step_uniforms(dt)
    g._bind_step()
    g._bind_cell_wise()
    g._boundary_faces(book=False, accelerate=True)
    g._accelerate_cells()
    acc_gpu = [np.frombuffer(b.read(), np.float32).reshape(shape)
               for b, shape in zip(g._flows_tmp, g._flow_shapes)]
    for a, b in zip(acc_gpu, ref.accelerate(s, dt)):
        _close(a, b, np.abs(b).max())
    g._scale_and_move()
    g._boundary_faces(book=True, accelerate=False)
    scaled_ref, crossed = ref.scale_outflow(s, [a.astype(np.float64) for a in acc_gpu], dt)
    for a, b in zip(gpu_flows(g), scaled_ref):
        _close(a, b, np.abs(b).max())
    ledger = np.frombuffer(g._ledger_faces.read(), np.float64)[:g._drain_slot]
    _close(ledger, crossed, np.abs(crossed).max())
    assert np.any(scaled_ref[0] != acc_gpu[0]), "outflow scaling was never active: the case is too gentle"
    moved = ref.move(s, [f.astype(np.float64) for f in gpu_flows(g)], dt)
    _close(g.water, moved, moved.max())
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
def test_cell_wise_step_matches_three_passes(ctx, rng, kind):
    """The cell-wise step does the arithmetic of the three passes in the same order: the same result
    to rounding (to the bit on llvmpipe), with every boundary kind, brushes and 1 to 3 substeps a call."""
    terrain, water = random_state(rng, (37, 45))
    grids = []
    for p in (2, 3):
        g, s = twins(ctx, kind, terrain, water, friction=0.2, passes=p)
        _boundaries(g, s)
        grids.append(g)
    for g in grids:
        for i in range(6):
            g.step(0.15, substeps=1 + i % 3)
            if i == 2:
                g.add_water(20.0, 18.0, 5.0, 9.0)
                g.dig(10.0, 30.0, 4.0, 0.5)
    a, b = grids
    _close(a.water, b.water, b.water.max(), rtol=1e-6)
    for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
        _close(fa, fb, np.abs(fb).max(), rtol=1e-6)
    la, lb = a.ledger(), b.ledger()
    for key in la:
        assert la[key] == pytest.approx(lb[key], rel=1e-6, abs=1e-9)
    assert a.volume() == pytest.approx(la["expected"], rel=1e-6)
    for g in grids:
        g.release()


def _walled_and_same_bits(a, b):
    """a's last call was walled and gave b's (three passes') water and flows to the bit, the sign of
    zero included, with no water lost; both released."""
    assert a._walled_call
    assert_same_bits(a.water, b.water)
    for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
        assert_same_bits(fa, fb)
    assert a.volume() == pytest.approx(a.ledger()["expected"], rel=1e-6)
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("shape", [(2, 2), (3, 70), (70, 3), (65, 129), (24, 24), (25, 49)])
@pytest.mark.parametrize("tile", [True, (1, 1), (5, 3, 2), (5, 3, 3)], ids=["default", "1x1", "5x3-2steps", "5x3-3steps"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_walled_calls_give_the_three_passes_bits_on_any_size(ctx, rng, kind, shape, tile):
    """Walled calls run every tile of the packed kernel through the interior program against the
    ghost columns around the grid, however the tiles fall on it (narrower than a tile, a column past a
    multiple of it, exactly a multiple): the three passes' bits, water and flows, and nothing crosses
    the walls."""
    terrain, water = random_state(rng, shape)
    grids = []
    for p in (1, 3):
        g, _ = twins(ctx, kind, terrain, water, friction=0.1, passes=p)
        g._packed = tile if p == 1 else False
        grids.append(g)
    for g in grids:
        for i in range(4):
            g.step(0.1, substeps=1 + i % 3)
    _walled_and_same_bits(*grids)


@pytest.mark.parametrize("kind", list(GRIDS))
def test_dry_cells_of_minus_zero_depth_keep_every_path_to_the_same_bits(ctx, rng, kind, monkeypatch):
    """A depth of -0.0 passes the depth checks (-0.0 < 0 is false). A dry cell with no outflow then
    holds -0, and its outflow scale must still come out +0 or 1, never -0: the climb, the fused step
    and the cell-wise step multiply faces with no flow by a K, and a -0 K would turn them into -0.0
    flows the three passes never make. Every path gives the three passes' bits, flows and the sign of
    their zeros included."""
    monkeypatch.setitem(water_passes.WIDE_SHAPE, "square", ((0, (5, 3, 3)),))     # climbed on this grid
    terrain, water = random_state(rng, (45, 53))
    water = np.asarray(water, np.float32)
    assert (water == 0).sum() > 100
    water[water == 0] = -0.0
    grids = []
    for passes, packed in ((3, False), (2, False), (1, True), (1, False)):
        g, _ = twins(ctx, kind, terrain, water, friction=0.1, passes=passes)
        g.water = water                                  # the setter keeps the sign of zero
        g._packed = packed if passes == 1 else None
        grids.append(g)
    for g in grids:
        g.step(0.15, substeps=3)
    three = grids[0]
    for g in grids[1:]:
        assert_same_bits(g.water, three.water, err_msg=f"passes={g.passes}")
        for fa, fb in zip(gpu_flows(g), gpu_flows(three)):
            assert_same_bits(fa, fb, err_msg=f"passes={g.passes}")
    for g in grids:
        g.release()


def _wide_plan(n, wide):
    """The launches of a call of n substeps on a grid that takes the wide shape `wide`, most substeps
    first: as many wide launches as leave the rest to launches of PACKED_SHAPE's two, where some number
    does, and a launch of one substep for what is left."""
    even = [q for q in range(n // wide[2] + 1) if (n - q * wide[2]) % 2 == 0]
    q = max(even) if even else n // wide[2]
    rest = n - q * wide[2]
    main = (water_passes.PACKED_SHAPE["square"][:2], 2)
    return [(wide[:2], wide[2])] * q + [main] * (rest // 2) + [(water_passes.PACKED_TILE["square"], 1)] * (rest % 2)


@pytest.mark.parametrize("wide, ahead", [((52, 40, 3), 1), ((112, 24, 4), 1), ((5, 3, 3), 1), ((7, 4, 4), 1),
                                         ((5, 3, 5), 1), ((4, 3, 6), 2), ((5, 3, 3), 0), ((5, 3, 3), 3)],
                         ids=["52x40x3", "112x24x4", "5x3x3", "7x4x4", "5x3x5", "4x3x6-load-2-ahead",
                              "5x3x3-load-0-ahead", "5x3x3-load-3-ahead"])
@pytest.mark.parametrize("shape", [(45, 53), (130, 97)])
def test_walled_calls_of_large_grids_climb_wider_tiles_to_the_same_bits(ctx, rng, shape, wide, ahead, monkeypatch):
    """Walled calls on large square grids climb WIDE_SHAPE's tiles (more substeps a launch, workgroups
    of several warps, texels loaded CLIMB_AHEAD steps ahead), the rest of a call's substeps in launches
    of PACKED_SHAPE's two and, for one substep, of PACKED_TILE's: calls of 1 to 8 substeps give the
    three passes' bits. A side opened on a grid smaller than WIDE_OPEN_MIN_CELLS takes the ring, with
    PACKED_SHAPE's tiles, and walled calls climb the wide tiles again after."""
    monkeypatch.setitem(water_passes.WIDE_SHAPE, "square", ((0, wide),))     # on any grid
    monkeypatch.setitem(water_passes.CLIMB_AHEAD, "wide", ahead)
    terrain, water = random_state(rng, shape)
    grids = [twins(ctx, "square", terrain, water, friction=0.1, passes=p)[0] for p in (1, 3)]
    a, b = grids
    a._packed = True                            # calls of one substep too
    wide_shape, main = (wide[:2], wide[2]), (water_passes.PACKED_SHAPE["square"][:2], 2)
    for n in range(1, 9):
        for g in grids:
            g.step(0.05 * n, substeps=n)
        assert a._walled_call
        assert sum(steps for _, steps in a._launches) == n
        assert sorted(a._launches, key=lambda s: -s[1]) == _wide_plan(n, wide), n
        assert_same_bits(a.water, b.water, err_msg=f"{n} substeps")
    for g in grids:
        g.set_boundary("top", "outflow", 0.5)
        g.step(0.3, substeps=6)
    assert not a._walled_call and a._launches == [main] * 3
    for g in grids:
        g.set_boundary("top", "wall")
        g.step(0.3, substeps=2 * wide[2])
    assert a._walled_call and a._launches == [wide_shape] * 2
    assert_same_bits(a.water, b.water)
    for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
        assert_same_bits(fa, fb)
    assert a.volume() == pytest.approx(a.ledger()["expected"], rel=1e-6)
    for g in grids:
        g.release()


@pytest.mark.parametrize("pipe_area", MODES)
@pytest.mark.parametrize("wide", [(5, 3, 3), (7, 4, 4), (12, 5, 2)], ids=["5x3x3", "7x4x4", "12x5x2"])
@pytest.mark.parametrize("shape", [(45, 53), (130, 97)], ids=["ring-only", "split"])
def test_open_calls_climb_wide_tiles_with_their_edges_to_the_same_bits(ctx, rng, shape, wide, pipe_area,
                                                                      monkeypatch):
    """Calls with open sides on large square grids climb WIDE_SHAPE's tiles, the ring of tiles along
    the edges through step_stream.comp's EDGES program (boundary faces worked from the table, cells
    outside the grid held, what crossed each face booked a slot a substep) and the interior through
    the walled calls' climb: calls of 1 to 8 substeps give the three passes' water, flows and ledger
    to the bit, with every kind of boundary on the sides and the sides changed between calls."""
    monkeypatch.setitem(water_passes.WIDE_SHAPE, "square", ((0, wide),))
    monkeypatch.setitem(water_passes.WIDE_OPEN_MIN_CELLS, "square", 0)
    monkeypatch.setitem(water_passes.SPLIT_MIN_CELLS, "square", 100 * 100)
    terrain, water = random_state(rng, shape)
    grids = []
    for p in (1, 3):
        g, s = twins(ctx, "square", terrain, water, friction=0.2, passes=p, pipe_area=pipe_area)
        _boundaries(g, s)
        grids.append(g)
    a, b = grids
    a._packed = True                                # calls of one substep too
    wide_shape = (wide[:2], wide[2])
    for n in range(1, 9):
        for g in grids:
            g.step(0.05 * n, substeps=n)
        assert not a._walled_call and sum(steps for _, steps in a._launches) == n
        assert sorted(a._launches, key=lambda s: -s[1]) == _wide_plan(n, wide), n
        assert_same_bits(a.water, b.water, err_msg=f"{n} substeps")
        for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
            assert_same_bits(fa, fb, err_msg=f"{n} substeps")
        assert_same_ledger(a.ledger(), b.ledger(), n)
    layout = a._packed_sets[wide_shape]
    assert (min(layout["inner"]) > 0) == (shape == (130, 97))
    for g in grids:                                 # sides swapped between calls
        g.set_boundary("left", "outflow", 0.4)
        g.set_boundary("right", "inflow", 0.6, span=(3, 20))
        g.set_boundary("bottom", "wall")
        g.step(0.4, substeps=8)
    assert a._launches[0] == wide_shape
    assert_same_bits(a.water, b.water)
    led = a.ledger()
    assert_same_ledger(led, b.ledger(), "sides swapped")
    assert led["inflow"] > 0 > led["outflow"]
    assert a.volume() == pytest.approx(led["expected"], rel=1e-5)
    for g in grids:
        g.release()


@pytest.mark.parametrize("wide", [(5, 3, 3), (7, 4, 4)], ids=["5x3x3", "7x4x4"])
def test_open_calls_climb_wide_tiles_on_tiny_and_ragged_grids(ctx, rng, wide, monkeypatch):
    """The EDGES climb where its tiles do not fit: grids narrower or shorter than a tile and its halo,
    one column or row past a multiple of it, every side a boundary of another kind: the three passes'
    bits, water, flows and ledger."""
    monkeypatch.setitem(water_passes.WIDE_SHAPE, "square", ((0, wide),))
    monkeypatch.setitem(water_passes.WIDE_OPEN_MIN_CELLS, "square", 0)
    for shape in [(2, 2), (3, 70), (70, 3), (9, 2), (2, 61), (36, 29)]:
        terrain, water = random_state(rng, shape)
        grids = []
        for p in (1, 3):
            g, s = twins(ctx, "square", terrain, water, friction=0.2, passes=p)
            set_boundary_both(g, s, "left", "inflow", 0.8)
            set_boundary_both(g, s, "right", "level", 0.9)
            set_boundary_both(g, s, "bottom", "outflow", 0.3)
            set_boundary_both(g, s, "top", "level", 0.4, span=(0, 1))
            grids.append(g)
        a, b = grids
        for g in grids:
            for n in (wide[2], 2 * wide[2] + 1, 1):
                g.step(0.05 * n, substeps=n)
        assert (wide[:2], wide[2]) in a._launches and not a._walled_call, shape
        assert a.volume() > 0.0
        assert_same_bits(a.water, b.water, err_msg=str(shape))
        for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
            assert_same_bits(fa, fb, err_msg=str(shape))
        assert_same_ledger(a.ledger(), b.ledger(), shape)
        for g in grids:
            g.release()


def test_walled_calls_climb_the_wider_tiles_of_their_grids_size(ctx, rng, monkeypatch):
    """WIDE_SHAPE's tiles are for walled calls on square grids of at least its entries' cells (the
    last entry a grid reaches), with the packed kernel's own shape: a smaller grid, or one whose shape
    a benchmark set, keeps its tiles; hex grids have none."""
    tiers = ((30 * 30, (7, 4, 4)), (40 * 40, (5, 3, 3)))
    monkeypatch.setitem(water_passes.WIDE_SHAPE, "square", tiers)
    terrain, water = random_state(rng, (40, 41))
    grids = {(kind, size): twins(ctx, kind, terrain[:size[0], :size[1]], water[:size[0], :size[1]], passes=1)[0]
             for kind, size in (("square", (40, 41)), ("square", (40, 39)), ("square", (29, 30)),
                                ("hex", (40, 41)))}
    for g in grids.values():
        g.step(0.2, substeps=12)
    assert grids["square", (40, 41)]._launches == [((5, 3), 3)] * 4        # 1640 cells: the second entry
    assert grids["square", (40, 39)]._launches == [((7, 4), 4)] * 3        # 1560: the first
    for kind, size in (("square", (29, 30)), ("hex", (40, 41))):            # 870; hex
        shape = water_passes.PACKED_SHAPE[kind]
        assert grids[kind, size]._walled_call and grids[kind, size]._launches == [(shape[:2], shape[2])] * 6
    big = grids["square", (40, 41)]
    big._packed = (5, 3, 2)
    big.step(0.2, substeps=6)
    assert big._launches == [((5, 3), 2)] * 3
    big._packed = None
    big.step(0.2, substeps=6)
    assert big._launches == [((5, 3), 3)] * 2
    for g in grids.values():
        g.release()


def test_walled_calls_only_where_ghost_columns_stand_for_walls(ctx, rng):
    """A call is walled only on a grid of walls with pipes of the water's depth whose beds stay above
    WALLED_MIN_BED: an open side, a fixed pipe area or a pit dug below it take the ring, and a walled
    call follows again when the sides or the terrain allow it. The water agrees
    with the three passes all along (a pit a million times deeper than the water is tall)."""
    terrain, water = random_state(rng, (30, 34))
    made = {}
    for kind, pipe_area in (("square", "depth"), ("hex", "depth"), ("square", 0.5)):
        made[kind, pipe_area] = [twins(ctx, kind, terrain, water, friction=0.1, passes=p, pipe_area=pipe_area)[0]
                                 for p in (1, 3)]
    for (kind, pipe_area), grids in made.items():
        grids[0]._packed = True
        for g in grids:
            g.step(0.2, substeps=4)
        assert grids[0]._walled_call == (pipe_area == "depth")
    a, b = made["square", "depth"]
    for g in (a, b):
        g.set_boundary("left", "inflow", 0.5)
        g.step(0.2, substeps=4)
    assert not a._walled_call
    for g in (a, b):
        g.set_boundary("left", "wall")
        g.step(0.2, substeps=4)
    assert a._walled_call
    for g in (a, b):
        g.dig(10.0, 10.0, 2.0, 5e29)         # the bound: 5e29 below the lowest bed, still above -1e30
        g.step(0.2, substeps=4)
    assert a._walled_call
    for g in (a, b):
        g.dig(20.0, 10.0, 2.0, 2e30)
        g.step(0.2, substeps=4)
    assert not a._walled_call
    for g in (a, b):
        g.terrain = terrain
        g.step(0.2, substeps=4)
    assert a._walled_call
    for (kind, pipe_area), (g, h) in made.items():
        assert_same_bits(g.water, h.water, err_msg=f"{kind} {pipe_area}")
        for fa, fb in zip(gpu_flows(g), gpu_flows(h)):
            assert_same_bits(fa, fb)
        assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-5)
        g.release()
        h.release()


@pytest.mark.parametrize("how", ["outflow-then-wall", "level-then-wall", "inflow-then-wall", "flow-setters"])
@pytest.mark.parametrize("kind", list(GRIDS))
def test_walls_carry_nothing_whatever_flow_their_faces_held(ctx, rng, kind, how):
    """A wall carries nothing, whatever its face held before: a side that was open until set_boundary
    made it a wall, or flows set on the edge faces (a saved game; on the hex lattice the unused corner
    faces too). Walled calls give the three passes' bits, the sign of zero included, and lose no water."""
    terrain, water = random_state(rng, (30, 34))
    grids = [twins(ctx, kind, terrain, water, friction=0.0, passes=p)[0] for p in (1, 3)]
    grids[0]._packed = True
    for g in grids:
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
    _walled_and_same_bits(*grids)


@pytest.mark.parametrize("sides", ["walls", "open"])
def test_hex_runs_of_calls_match_the_three_passes_on_both_kernels(ctx, rng, sides):
    """passes=1 on the hex lattice runs the packed kernel from two substeps a call and the tile kernel
    below; forced to either in every call, a run of calls, each starting from the flows the last one
    left, gives the three passes' water, flows and ledger to the bit. (On an NVIDIA driver the pack
    once started every call but a grid's first from no z flow; tests/test_gpu_check.py shows the
    GPU check that caught it fails that fault.)"""
    terrain, water = random_state(rng, (37, 45))
    for packed in (None, True, False):
        grids = []
        for p in (1, 3):
            g, s = twins(ctx, "hex", terrain, water, friction=0.1, passes=p)
            if sides == "open":
                _boundaries(g, s)
            grids.append(g)
        a, b = grids
        a._packed = packed
        for n in (2, 1, 2, 4, 3):
            for g in grids:
                g.step(0.04 * n, substeps=n)
            takes = n >= 2 if packed is None else packed
            assert a._takes_packed(n) == takes, (packed, n)
            assert_same_bits(a.water, b.water, err_msg=f"{packed} {n}")
            for fa, fb in zip(gpu_flows(a), gpu_flows(b)):
                assert_same_bits(fa, fb, err_msg=f"{packed} {n}")
            assert_same_ledger(a.ledger(), b.ledger())
        assert np.abs(gpu_flows(a)[2]).max() > 0       # the z flows the calls start from are not all 0
        for g in grids:
            g.release()
