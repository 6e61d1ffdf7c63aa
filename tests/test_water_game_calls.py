"""What a game asks of the water between frames: the water at points read back without the grid
(hydro.water_probes), a rectangle of terrain in one upload, boundaries set every frame; each against its
NumPy float64 statement (hydro.reference.probes, hydro.reference.water) or the arrays it stands for."""
import math

import moderngl
import numpy as np
import pytest

import hydro
from hydro import water_plan
from hydro.reference import probes
from hydro.reference import water as ref
from hydro.water_probes import SAMPLE_DRY_DEPTH, Sampler
from water_cases import GRIDS, assert_same_bits, assert_same_ledger, gpu_flows, random_state, set_boundary_both

KINDS = list(GRIDS)


def _expected_samples(g, points):
    return probes.sample(g.terrain, g.water, gpu_flows(g), points, g.geometry.face_width,
                         SAMPLE_DRY_DEPTH * g.params.cell_size)


def _assert_samples(values, expected):
    assert values.shape == expected.shape and values.dtype == np.float32
    depth_scale = max(1.0, float(np.abs(expected[:, :2]).max()))
    np.testing.assert_allclose(values[:, :2], expected[:, :2], rtol=0, atol=1e-6 * depth_scale)
    speed_scale = max(1e-6, float(np.abs(expected[:, 2:]).max()))
    np.testing.assert_allclose(values[:, 2:], expected[:, 2:], rtol=0, atol=1e-5 * speed_scale)


@pytest.mark.parametrize("kind", KINDS)
def test_samples_are_the_arrays_bilinear(ctx, rng, kind):
    """Depth, surface and velocity at random points, at the corners and edges of the grid and at cell
    centres are the arrays' bilinear values; at a cell centre the depth is the cell's, to the bit."""
    terrain, water = random_state(rng, (13, 17))
    g = GRIDS[kind](ctx, terrain, water=water, cell_size=2.0)
    g.set_boundary("left", "inflow", 2.0)
    g.set_boundary("right", "level", 0.8)
    g.step(0.3)
    ny, nx = g.shape
    points = np.concatenate([rng.uniform((-0.5, -0.5), (nx - 0.5, ny - 0.5), (200, 2)),
                             [[-0.5, -0.5], [nx - 0.5, ny - 0.5], [-0.5, ny - 0.5], [nx - 1, 0], [3.5, -0.5]]])
    values = g.sample(points)
    _assert_samples(values, _expected_samples(g, points))
    centres = np.array([[0, 0], [5, 7], [nx - 1, ny - 1], [nx - 1, 3]])
    np.testing.assert_array_equal(g.sample(centres)[:, 0], g.water[centres[:, 1], centres[:, 0]])
    assert np.abs(values[:, 2:]).max() > 0.1          # the water moves: the velocities are not all 0
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_a_uniform_current_samples_as_itself(ctx, kind):
    """Faces carrying a uniform current v (each face the flow v . e h w across it) sample as v at any
    point, on both lattices: the velocity is world units/s, whatever the cell size."""
    shape, depth, v = (9, 11), 0.5, np.array([0.7, -0.3])
    g = GRIDS[kind](ctx, np.zeros(shape), water=np.full(shape, depth), cell_size=3.0)
    w = g.geometry.face_width
    axes = [(1.0, 0.0), (0.5, math.sqrt(3) / 2), (-0.5, math.sqrt(3) / 2)] if kind == "hex" else [(1.0, 0.0), (0.0, 1.0)]
    for name, axis, flow in zip(("flow_x", "flow_y", "flow_z"), axes, gpu_flows(g)):
        setattr(g, name, np.full(flow.shape, float(v @ axis) * depth * w))
    values = g.sample([[0.0, 0.0], [4.25, 3.5], [10.0, 8.0]])
    np.testing.assert_allclose(values[:, 2:], np.tile(v, (3, 1)), rtol=1e-5)
    np.testing.assert_allclose(values[:, :2], depth, rtol=1e-6)
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_a_sample_asked_now_is_the_water_now_and_reads_back_no_grid(ctx, rng, kind, monkeypatch):
    """sample_async() returns a handle at once; its values are of the water when it was asked, whatever
    is stepped after; more requests on their way than the ring holds, and a request larger than its
    records, still get their own values; nothing is read back but the values (no texture or buffer
    read: the ring is mapped)."""
    terrain, water = random_state(rng, (20, 24))
    g = GRIDS[kind](ctx, terrain, water=water)
    g.set_boundary("bottom", "inflow", 3.0)
    small = rng.uniform(0, 19, (10, 2))
    large = rng.uniform(0, 19, (300, 2))
    expected, handles = [], []

    def refuse(self, *args, **kwargs):
        raise AssertionError("read back through a buffer or texture read")
    for frame in range(Sampler.SLOTS + 3):
        g.step(0.05)
        points = large if frame == Sampler.SLOTS else small
        expected.append(_expected_samples(g, points))
        with monkeypatch.context() as m:
            m.setattr(moderngl.Texture, "read", refuse)
            m.setattr(moderngl.Buffer, "read", refuse)
            handles.append(g.sample_async(points))
    with monkeypatch.context() as m:
        m.setattr(moderngl.Texture, "read", refuse)
        m.setattr(moderngl.Buffer, "read", refuse)
        for handle, want in zip(handles, expected):
            _assert_samples(handle.result(), want)
            assert handle.ready
    assert g._sampler.capacity == 512 and g._sampler.ring.size == 16 * 512
    ctx.finish()
    late = g.sample_async(small)
    ctx.finish()
    if g._tuning.fold_samples:          # it waits for the next call's first pass
        assert not late.ready
        g.step(0.05)
    assert late.ready
    kept = late.result()
    g.release()
    assert late.result() is kept                  # read before release: kept
    unread = GRIDS[kind](ctx, terrain, water=water)
    pending = unread.sample_async(small)
    unread.release()
    with pytest.raises(RuntimeError, match="after release"):
        pending.result()


def _folding(g, fold=True):
    g._retune(g._tuning.replace(fold_samples=fold))
    return g


@pytest.mark.parametrize("cycle", [False, True], ids=["", "cycle"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_sample_folded_into_the_next_call_is_the_water_when_asked(ctx, rng, kind, cycle):
    """Folded (CPU rasterisers' tuning), a sample waits for the next step() call, whose first pass samples
    it: not ready before, ready after without a pass of its own, the same bits as a pass of its own on
    the same water. An edit before that call (a brush, the flow setters, a side's kind, the terrain),
    result() before it, or a call on another kernel samples the water as it was asked first; after the
    flow setters put flow on a wall's faces (which a call's first pass stops) it is not folded."""
    terrain, water = random_state(rng, (14, 18))
    folded = _folding(GRIDS[kind](ctx, terrain, water=water))
    alone = _folding(GRIDS[kind](ctx, terrain, water=water), fold=False)
    points = np.concatenate([rng.uniform(-0.5, 13.5, (40, 2)), [[-0.5, 3.0], [0.0, 7.25], [17.5, 13.5]]])

    def both(edit=None, kernel=None):
        """A sample on each grid, `edit` after it, then a call: the folded grid's values, the other's."""
        for g in (folded, alone):
            g.kernel = kernel
        want = _expected_samples(folded, points)
        handles = [g.sample_async(points) for g in (folded, alone)]
        if edit is not None:
            for g in (folded, alone):
                edit(g)
        for g in (folded, alone):
            g.step(0.05)
        values = [h.result() for h in handles]
        _assert_samples(values[0], want)
        np.testing.assert_array_equal(values[0], values[1])
        return handles[0]

    for g in (folded, alone):
        g.set_boundary("left", "inflow", 2.0)
        g.set_boundary("top", "level", 1.2)
        if cycle:                       # the boundary pass that samples, with the most storage blocks
            g.rain = 1e-3
            g.add_source(4.0, 9.0, 2.0, -1e-2)
        g.step(0.1)
    handle = folded.sample_async(points)
    assert not handle.ready and folded._sampler.pending is handle
    folded.step(0.05)
    assert folded._sampler.pending is None and handle.ready
    alone.step(0.05)
    both()
    both(edit=lambda g: g.add_water(6.0, 5.0, 3.0, 4.0))
    both(edit=lambda g: g.dig(9.0, 8.0, 2.0, 0.5))
    wall = np.zeros((14, 19), np.float32)
    wall[:, 0] = 0.3                    # the left side is an inflow: after the kind change, a wall's flow
    both(edit=lambda g: g.set_boundary("left", "wall"))
    both(edit=lambda g: setattr(g, "flow_x", wall))
    both(edit=lambda g: g.set_terrain(np.full((3, 4), 0.25), (2, 2)))
    both(kernel="fused")
    for g in (folded, alone):           # flow on a wall's faces until the next call's first pass stops it
        g.flow_x = wall
    assert not folded._sampler.foldable
    both()
    assert folded._sampler.foldable
    early = folded.sample_async(points)
    want = _expected_samples(folded, points)
    _assert_samples(early.result(), want)     # asked for before the call: its pass runs now
    assert folded._sampler.pending is None
    folded.release()
    alone.release()


@pytest.mark.parametrize("kind", KINDS)
def test_a_rectangle_of_terrain_keeps_the_water_and_the_ledger(ctx, rng, kind):
    """set_terrain() writes the rectangle and nothing else, keeps every depth and the ledger to the bit,
    and the grid then steps as one whose whole terrain was assigned with the rectangle in it."""
    terrain, water = random_state(rng, (16, 20))
    a, b = (GRIDS[kind](ctx, terrain, water=water) for _ in range(2))
    for g in (a, b):
        g.set_boundary("left", "inflow", 1.0)
        g.step(0.2)
    ledger, before = a.ledger(), a.water
    block = rng.uniform(1.5, 2.5, (5, 7))
    a.set_terrain(block, origin=(9, 4))
    whole = b.terrain
    whole[4:9, 9:16] = block
    b.terrain = whole
    assert_same_bits(a.terrain, b.terrain)
    assert_same_bits(a.water, before)
    assert a.ledger() == ledger
    a.set_terrain(whole[:1, :1] + 0.0, origin=(0, 0))       # one cell, at the corner: as it was
    a.set_terrain(whole[-1:, :], origin=(0, 15))            # the top row, whole
    for _ in range(3):
        a.step(0.1)
        b.step(0.1)
    assert_same_bits(a.water, b.water)
    assert_same_ledger(a.ledger(), b.ledger())
    assert a.volume() == pytest.approx(a.ledger()["expected"], rel=1e-6)
    a.release()
    b.release()


def test_a_rectangle_dug_deep_ends_the_walled_calls(ctx):
    """The grid keeps a bound on its lowest bed through set_terrain(): a rectangle below
    water_plan.WALLED_MIN_BED ends the blocked kernel's walled calls (ghost columns no longer stand for
    walls), and the water stays where it was."""
    g = hydro.WaterGrid(ctx, np.zeros((20, 24)), water=np.full((20, 24), 0.5), kernel="blocked")
    g.step(0.1, substeps=2)
    assert g._last_call.walled
    g.set_terrain(np.full((2, 3), -2e30), origin=(5, 5))
    g.step(0.1, substeps=2)
    assert not g._last_call.walled
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_boundaries_set_every_frame_read_nothing_back_and_keep_the_ledger(ctx, rng, kind, monkeypatch):
    """A tide (a level side whose height follows a sine, set every frame), a wave generator (an inflow
    span whose rate does) and a gate (a span turned from outflow to wall and back now and then, which
    moves what its faces booked to their old kind's total on the GPU): set_boundary() reads nothing
    back, the cell-wise, fused and blocked kernels keep the same ledger to the bit, each kind's entry
    is what the float64 reference's faces carried under it, and volume() is the ledger's."""
    terrain, water = random_state(rng, (14, 18))
    ref_state = ref.State.new(np.float32(terrain), np.float32(water), hexagonal=kind == "hex")
    ledgers = []
    for kernel in ("cells", "fused", "blocked"):
        g = GRIDS[kind](ctx, terrain, water=water, kernel=kernel)
        s = ref.State.new(ref_state.terrain, ref_state.water, hexagonal=kind == "hex", params=g.params)
        booked = dict.fromkeys(("inflow", "outflow", "level"), 0.0)
        g.step(0.05)
        ref.step(s, 0.05, g._last_call.substeps)
        for frame in range(16):
            calls = [("right", "level", 0.6 + 0.2 * math.sin(frame / 3)),
                     ("left", "inflow", 1.0 + 0.8 * math.sin(frame / 2), (2, 8))]
            if frame % 5 == 0:
                calls.append(("top", "wall" if frame % 10 else "outflow", 0.0 if frame % 10 else 0.4, (3, 9)))
            for args in calls:
                table = s.table.copy()
                with monkeypatch.context() as m:
                    m.setattr(moderngl.Buffer, "read", _refuse)
                    m.setattr(moderngl.Texture, "read", _refuse)
                    set_boundary_both(g, s, *args)
                if not np.array_equal(table["kind"], s.table["kind"]):
                    _book(booked, s, table)
            n = g.step(0.05)
            ref.step(s, 0.05, n)
        _book(booked, s, s.table)
        led = g.ledger()
        for name, volume in booked.items():
            assert led[name] == pytest.approx(volume, rel=1e-4, abs=1e-6), (kernel, name)
        assert led["inflow"] > 0.5 and led["level"] != 0.0 and led["outflow"] < 0.0
        assert g.volume() == pytest.approx(led["expected"], rel=1e-6)
        ledgers.append(led)
        g.release()
    for led in ledgers[1:]:
        assert_same_ledger(led, ledgers[0])


def _refuse(self, *args, **kwargs):
    raise AssertionError("read back from the GPU")


def _book(booked, s, table):
    """The reference's per-face ledger added to the kinds of `table`, then cleared."""
    for name, code in (("inflow", ref.INFLOW), ("outflow", ref.OUTFLOW), ("level", ref.LEVEL)):
        booked[name] += float(s.ledger[table["kind"] == code].sum())
    s.ledger = np.zeros_like(s.ledger)


# ------------------------------------------------------------------------------------------------ gauges

@pytest.mark.parametrize("kind", KINDS)
def test_a_gauge_counts_the_faces_whose_pipes_its_line_cuts(ctx, rng, kind):
    """A gauge's faces and signs are the float64 statement's (hydro.reference.probes.gauge_faces, a face
    at a time) for random lines, lines through cell centres and faces, and lines along the grid's
    edge; a line between two rows of the square grid is that row of flow_y faces, counted along its
    normal."""
    ny, nx = 9, 11
    g = GRIDS[kind](ctx, np.zeros((ny, nx)))
    lines = [rng.uniform(-0.5, (nx - 0.5, ny - 0.5), (2, 2)) for _ in range(40)]
    lines += [np.round(line * 2) / 2 for line in lines[:20]]
    lines += [np.array([[-0.5, -0.5], [-0.5, ny - 0.5]]), np.array([[nx - 0.5, 3.0], [2.0, ny - 0.5]])]
    for p0, p1 in lines:
        if (p0 == p1).all() or not probes.gauge_faces(p0, p1, nx, ny, kind == "hex"):
            continue
        gauge = g.add_gauge(p0, p1)
        assert list(zip(*(a.tolist() for a in gauge.faces))) == probes.gauge_faces(p0, p1, nx, ny, kind == "hex")
        gauge.remove()
    if kind == "square":
        row = g.add_gauge((-0.5, 4.5), (nx - 0.5, 4.5))         # toward +x: the normal points to -y
        assert [list(a) for a in row.faces] == [[1] * nx, list(range(nx)), [5] * nx, [-1] * nx]
    g.release()


def gauged(g):
    """(g, gauges): a grid of at least 14 x 18 cells given an inflow, a level side and an outflow span,
    and gauges across the interior, along its left edge (the boundary faces), on a diagonal and along
    the top edge."""
    g.set_boundary("left", "inflow", 2.0, span=(3, 11))
    g.set_boundary("right", "level", 0.7)
    g.set_boundary("top", "outflow", 0.3, span=(2, 9))
    ny, nx = g.shape
    gauges = [g.add_gauge((8.5, -0.5), (8.5, ny - 0.5)), g.add_gauge((-0.5, ny - 0.5), (-0.5, -0.5)),
              g.add_gauge((1.0, 2.0), (15.0, 12.5)), g.add_gauge((3.0, ny - 0.5), (12.0, ny - 0.5))]
    return g, gauges


def _gauged(ctx, kind, kernel, rng, **params):
    terrain, water = random_state(rng, (14, 18))
    return gauged(GRIDS[kind](ctx, terrain, water=water, kernel=kernel, **params))


@pytest.mark.parametrize("kernel", ["cells", "fused", "blocked"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_gauge_is_its_faces_flows_summed_every_substep_one_call_late(ctx, kind, kernel):
    """After each call of one substep the flows are read back and the float64 statement sums the gauge's
    faces (sign q dt, in double): a gauge's volume is their sum over every call but the latest, its
    discharge the one before the latest's volume over its dt, its sim_time that call's end: one call
    late, never the latest call's (which a GPU may not have finished)."""
    g, gauges = _gauged(ctx, kind, kernel, np.random.default_rng(5))
    faces = [list(zip(*(a.tolist() for a in gauge.faces))) for gauge in gauges]
    done, times = [[] for _ in gauges], []
    for call, dt in enumerate([0.05, 0.04, 0.06, 0.05, 0.03, 0.05]):
        for gauge in gauges:                      # before the second call: nothing to read yet
            if call < 2:
                assert (gauge.volume, gauge.discharge, gauge.sim_time) == (0.0, 0.0, 0.0)
        g.step(dt, substeps=1)
        times.append((g.sim_time, dt))
        flows = gpu_flows(g)
        for crossed, gauge_faces in zip(done, faces):
            crossed.append(probes.gauge_volume(gauge_faces, flows, np.float32(dt)))
        if call >= 1:
            for gauge, crossed, gauge_faces in zip(gauges, done, faces):
                scale = sum(abs(float(flows[k][j, i])) for k, i, j, _ in gauge_faces) * dt * call
                assert gauge.volume == pytest.approx(math.fsum(crossed[:-1]), abs=1e-12 * scale + 1e-300)
                assert gauge.discharge == pytest.approx(crossed[-2] / times[-2][1], abs=1e-12 * scale / dt + 1e-300)
                assert gauge.sim_time == times[-2][0]
    assert abs(gauges[1].volume) > 0.1 and abs(gauges[0].volume) > 1e-3       # they count something
    g.release()


@pytest.mark.parametrize("kind", KINDS)
def test_gauges_change_no_water_and_read_the_same_on_every_kernel(ctx, kind):
    """The flows are read after every substep (calls of one substep a dispatch or a launch) without
    changing them: with gauges the water, flows and ledger are the bits they are without; and every
    kernel's gauges read the same, to the bit on CPU rasterisers, in calls of 1 to 5 substeps."""
    runs = []
    for kernel in ("cells", "fused", "blocked"):
        g, gauges = _gauged(ctx, kind, kernel, np.random.default_rng(6))
        plain, _ = _gauged(ctx, kind, kernel, np.random.default_rng(6))
        for gauge in plain.gauges:
            gauge.remove()
        for n in (1, 3, 2, 5, 4, 1):
            g.step(0.1, substeps=n)
            plain.step(0.1, substeps=n)
            assert g._last_call.per_substep and not plain._last_call.per_substep
            if kernel == "blocked":         # a substep a launch (a sleeping call's on its tiles, GPUs)
                call = g._last_call
                odd = water_plan.sleeping_odd(g._tuning) if call.sleep else g._tuning.odd
                assert set(call.launches) == {odd}
        assert_same_bits(g.water, plain.water)
        for a, b in zip(gpu_flows(g), gpu_flows(plain)):
            assert_same_bits(a, b)
        assert_same_ledger(g.ledger(), plain.ledger())
        runs.append([(gauge.volume, gauge.discharge) for gauge in gauges])
        g.release()
        plain.release()
    for run in runs[1:]:
        for (volume, discharge), (v0, d0) in zip(run, runs[0]):
            assert_same_bits(np.float64(volume), np.float64(v0))
            assert_same_bits(np.float64(discharge), np.float64(d0))


def _channel():
    """A river bed 6 cells wide down a slope of 0.02 between banks of 3, 40 cells long."""
    y, x = np.mgrid[0:10, 0:40]
    return np.where((y < 2) | (y > 7), 3.0, 1.0 - 0.02 * x)


@pytest.mark.parametrize("kind", KINDS)
def test_a_gauge_on_a_river_reads_its_inflow_and_a_gate_stops_and_restores_it(ctx, kind):
    """A river of 1 m^3/s runs down a channel into a sea: at steady state a gauge across it reads 1
    m^3/s (its discharge, and the mean of its volume over 20 s); a gate closed across the river
    upstream (set_terrain) stops it: the gauge reads nothing while the water piles up behind the gate,
    every cubic metre on the ledger; the gate opened again restores the river and the gauge's reading."""
    terrain = _channel()
    g = GRIDS[kind](ctx, terrain, friction=0.05)
    g.set_boundary("left", "inflow", 1.0, span=(2, 8))
    g.set_boundary("right", "level", 0.0)
    across = (20.5, 1.5), (20.5, 8.5)          # through no cell centre: reversed, the same faces
    if kind == "hex":
        across = (20.2, 1.5), (16.2, 8.5)         # axial: across the channel in the world
    gauge = g.add_gauge(*across)

    def run(calls):
        for _ in range(calls):
            g.step(0.25)
        volume, time = gauge.volume, gauge.sim_time
        for _ in range(80):
            g.step(0.25)
        return (gauge.volume - volume) / (gauge.sim_time - time), gauge.discharge

    mean, last = run(500)
    assert mean == pytest.approx(1.0, rel=0.01) and last == pytest.approx(1.0, rel=0.02)
    reversed_gauge = g.add_gauge(*across[::-1])
    g.step(0.25)
    g.step(0.25)
    assert reversed_gauge.discharge == pytest.approx(-gauge.discharge, rel=1e-12)
    reversed_gauge.remove()
    gate = terrain[2:8, 10:12].copy()
    g.set_terrain(np.full((6, 2), 3.0), origin=(10, 2))
    behind = g.sample([[5.0, 5.0]])[0, 1]
    mean, last = run(300)
    assert abs(mean) < 1e-3 and abs(last) < 1e-3
    assert g.sample([[5.0, 5.0]])[0, 1] > behind + 0.05          # the river piles up behind the gate
    assert g.volume() == pytest.approx(g.ledger()["expected"], rel=1e-6)
    g.set_terrain(gate, origin=(10, 2))
    mean, last = run(500)
    assert mean == pytest.approx(1.0, rel=0.01) and last == pytest.approx(1.0, rel=0.02)
    g.release()


def removed_gauge_and_its_slot(g):
    """On a grid of 8 rows whose left side lets in 1 m^3/s: a gauge across that side reads what came in,
    raises once removed; a gauge added in its slot starts from 0 and counts only the calls after it was
    added. Returns that gauge."""
    first = g.add_gauge((-0.5, 7.5), (-0.5, -0.5))
    for _ in range(3):
        g.step(0.1)
    assert first.volume == pytest.approx(-0.2, rel=1e-6)
    first.remove()
    with pytest.raises(RuntimeError, match="was removed"):
        first.volume
    with pytest.raises(RuntimeError, match="was removed already"):
        first.remove()
    again = g.add_gauge((-0.5, -0.5), (-0.5, 7.5))
    assert again.slot == first.slot and g.gauges == (again,)
    g.step(0.1)
    assert again.volume == 0.0
    g.step(0.1)
    assert again.volume == pytest.approx(0.1, rel=1e-6) and again.sim_time == pytest.approx(0.4)
    return again


def test_removed_gauges_read_no_more_and_their_slots_start_again(ctx):
    """A removed gauge raises when read; a gauge added in its slot starts from 0 and counts only the
    calls after it was added; the grid holds hydro.water_probes.MAX_GAUGES gauges at most."""
    from hydro.water_probes import MAX_GAUGES
    g = hydro.WaterGrid(ctx, np.zeros((8, 10)), water=np.full((8, 10), 0.3))
    g.set_boundary("left", "inflow", 1.0)
    again = removed_gauge_and_its_slot(g)
    more = [g.add_gauge((0.5, -0.5), (0.5, 7.5)) for _ in range(MAX_GAUGES - 1)]
    with pytest.raises(RuntimeError, match=f"it has {MAX_GAUGES} gauges"):
        g.add_gauge((0.5, -0.5), (0.5, 7.5))
    g.step(0.1)
    g.step(0.1)
    assert more[-1].volume == more[0].volume != 0.0
    g.release()
    with pytest.raises(RuntimeError, match="after release"):
        again.volume


def test_calls_read_after_every_substep_are_planned_a_substep_a_dispatch():
    """water_plan.plan_call with per_substep (a grid with gauges): without a kernel given, the tuning's
    kernel of one-substep calls (fused on GPUs, cells on CPU rasterisers), whatever the call's length;
    the blocked kernel, where given, launches its one-substep shape for every substep."""
    from hydro import water_plan
    for device, one in (("gpu", "fused"), ("cpu", "cells")):
        tuning = water_plan.Tuning.for_device(device, False)
        for substeps in (1, 2, 7):
            call = water_plan.plan_call(tuning, 1024, 1024, substeps, is_walled=True, per_substep=True)
            assert (call.kernel, call.launches, call.per_substep) == (one, (), True)
    tuning = water_plan.Tuning.for_device("gpu", True)
    call = water_plan.plan_call(tuning, 1024, 1024, 7, kernel="blocked", is_walled=True, per_substep=True)
    assert call.launches == (tuning.odd,) * 7 and call.walled
    assert water_plan.plan_call(tuning, 1024, 1024, 7).kernel == "blocked"


@pytest.mark.parametrize("kind", KINDS)
def test_samples_and_gauges_read_back_at_once_where_buffers_cannot_be_mapped(ctx, monkeypatch, kind):
    """Without persistent mapping (GL < 4.4 without ARB_buffer_storage) a sample is read back when it is
    asked (its handle is ready at once) and a gauge's record when its call ends: the same values."""
    from hydro import _native
    monkeypatch.setattr(_native.FencedReadback, "create", classmethod(lambda cls, ctx, size, slots=3: None))
    terrain, water = random_state(np.random.default_rng(8), (10, 12))
    g = GRIDS[kind](ctx, terrain, water=water)
    g.set_boundary("left", "inflow", 1.5)
    edge = g.add_gauge((-0.5, 9.5), (-0.5, -0.5))
    for _ in range(3):
        g.step(0.1)
    points = [[1.0, 2.0], [7.5, 3.25]]
    handle = g.sample_async(points)
    assert handle.ready
    _assert_samples(handle.result(), _expected_samples(g, points))
    assert edge.volume == pytest.approx(-1.5 * 0.2, rel=1e-6) and edge.discharge == pytest.approx(-1.5, rel=1e-6)
    g.release()
