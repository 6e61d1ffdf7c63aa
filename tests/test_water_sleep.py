"""Sleeping tiles (hydro.water_sleep): the cell-wise and blocked kernels skip the tiles where nothing
changed, and give the bits of computing every tile (water, flows, ledger), whatever wakes them: a front
running into dry land, brushes, the terrain, flows and water set, boundaries. Grids of 16-cell tiles
(the test seam), small enough for llvmpipe, large enough that most tiles sleep."""
import numpy as np
import pytest

import hydro
from hydro import water_plan as plan
from hydro.reference import sleep as ref_sleep
import water_cases
from sleep_cases import EDITS, MODELS, SHAPES, TILE, basin, cycle_steps, dam
from water_cases import GRIDS, assert_same_bits, assert_same_ledger, gpu_flows, retune

KERNELS = ("cells", "blocked")
# "climb": the blocked kernel climbing its sleeping tiles, four substeps a launch (the square lattice,
# classic pipes, no water cycle: the cases where it runs); the cases with every kernel
CLIMB = 4
WITH_CLIMB = [(kind, kernel) for kind in GRIDS for kernel in KERNELS] + [("square", "climb")]


def sleepy(g, kernel):
    """g's tiles TILE cells a side: the cell-wise kernel's, or the blocked kernel's, asked to sleep (hex
    with inertia a substep a launch, within a CPU rasteriser's shared memory), climbed where it can, with
    an interior rectangle as large grids have (calls with open sides list its tiles apart from the edges')."""
    if kernel == "cells":
        return retune(g, sleep_tile=TILE, sleep_dense_above=1.0)
    steps = 1 if g.params.inertia and isinstance(g, hydro.HexWaterGrid) else 2
    climb = (dict(sleep_climb=((TILE, TILE), CLIMB), climb_walled_from=0, climb_from=0,
                  sleep_climb_dense_above=1.0) if kernel == "climb" else dict(sleep_climb=None))
    return retune(g, blocked=((TILE, TILE), steps), sleep_blocked=True, sleep_dense_above=1.0, split_from=0,
                  **climb)


def climbed(g) -> bool:
    """Whether g's last call climbed its sleeping tiles."""
    call = g._last_call
    return call.sleep and plan.sleep_climbs(g._tuning, g.nx, g.ny, call.walled)


def twins(ctx, kind, terrain, water, kernel="cells", **params):
    """The same grid sleeping and computing every tile, on `kernel` with TILE-cell tiles."""
    made = "blocked" if kernel == "climb" else kernel
    grids = [GRIDS[kind](ctx, terrain, water=water, kernel=made, sleep=sleep, **params) for sleep in (True, False)]
    for g in grids:
        sleepy(g, kernel)
    return grids


def assert_twins(a, b, what=""):
    assert_same_bits(a.water, b.water, what)
    for qa, qb in zip(gpu_flows(a), gpu_flows(b)):
        assert_same_bits(qa, qb, what)
    assert_same_ledger(a.ledger(), b.ledger(), what)


@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
@pytest.mark.parametrize("kind,kernel,model", [(kind, kernel, model) for kind, kernel in WITH_CLIMB
                                               for model in MODELS])
def test_a_dam_break_into_dry_land_gives_the_bits_of_every_tile(ctx, kind, model, shape, kernel):
    terrain, water = dam(shape)
    a, b = twins(ctx, kind, terrain, water, kernel, **MODELS[model])
    awake = []
    for call in range(10):
        for g in (a, b):
            g.step(1.0)
        assert_twins(a, b, f"call {call}")
        assert climbed(a) == (kernel == "climb"), call
        awake.append(a.awake)
    assert b.awake == 1.0
    if shape == SHAPES["whole-tiles"]:      # (the ragged grid is a few tiles, the water in most of them)
        assert awake[1] < 0.4, awake           # the dry land beyond the front slept
        assert awake[-1] > awake[1] + 0.15, awake    # and woke as the front came
    for g in (a, b):
        g.release()


# GPUs' sleeping climb: the model's parameters and the tuning that puts this grid's dense calls on a
# climb (classic: walled calls climb every tile; inertia: wide tiles, their ring through EDGES)
GPU_SLEEP = {"classic": ({}, dict(climb_walled_from=0)),
             "inertia": (dict(inertia=True, manning=0.03), dict(wide=((0, ((8, 6), 2)),), wide_open_from=0,
                         blocked=((TILE, TILE), 1), odd=((TILE, TILE), 1), split_from=0))}


@pytest.mark.parametrize("model", list(GPU_SLEEP))
def test_the_climb_on_the_tiles_gpus_take(ctx, model):
    """The climb's sleeping tiles as GPUs take them (Tuning.sleep_climb: 48 texels, more than a
    workgroup of the pack holds, which packs them a few rows an invocation; with inertia 52, two substeps
    a launch, beside dense calls climbing wide tiles): the bits of every tile."""
    params, tuning = GPU_SLEEP[model]
    terrain, water = dam((160, 208))
    a, b = [hydro.WaterGrid(ctx, terrain, water=water, kernel="blocked", sleep=sleep, **params)
            for sleep in (True, False)]
    gpu = plan.Tuning.for_device("gpu", False, inertia=bool(params))
    for g in (a, b):
        retune(g, sleep_blocked=True, sleep_climb_dense_above=1.0, sleep_climb=gpu.sleep_climb, **tuning)
    awake = []
    for call in range(8):
        for g in (a, b):
            g.step(3.0)
        assert climbed(a)
        assert_twins(a, b, f"call {call}")
        awake.append(a.awake)
    assert awake[1] < 0.5 and awake[-1] > awake[1], awake
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("sleep_climb", [None, ((TILE, TILE), 2)], ids=["tile-program", "climbed"])
def test_inertia_sleeps_beside_dense_calls_that_climb_wide_tiles(ctx, sleep_climb):
    """With inertia, as GPUs plan it: dense calls climb the wide tiles (the ring through the climb's EDGES
    program), sleeping ones climb sleep_climb's tiles (None: the tile program on `blocked`'s); once
    most tiles wake, the calls go dense. The bits of every tile, whichever ran."""
    terrain, water = dam((80, 112))
    a, b = [hydro.WaterGrid(ctx, terrain, water=water, kernel="blocked", sleep=sleep, inertia=True, manning=0.03)
            for sleep in (True, False)]
    wide = ((8, 6), 2)
    for g in (a, b):
        retune(g, blocked=((TILE, TILE), 2), odd=((TILE, TILE), 1), sleep_blocked=True, split_from=0,
               wide=((0, wide),), wide_open_from=0, sleep_climb=sleep_climb,
               sleep_dense_above=0.5, sleep_climb_dense_above=0.5)
    slept = []
    for call in range(12):
        for g in (a, b):
            g.step(1.0)
        assert_twins(a, b, f"call {call}")
        ran = a._last_call
        assert b._last_call.launches[0] == wide, call
        if ran.sleep:
            assert climbed(a) == (sleep_climb is not None), call
            assert {tile for tile, _ in ran.launches} == {(TILE, TILE)}, call
        else:
            assert ran.launches[0] == wide, call
        slept.append(ran.sleep)
    assert slept[1] and not slept[-1], slept
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("kind,kernel", WITH_CLIMB)
def test_a_current_over_a_level_lake_keeps_its_tiles_awake(ctx, kind, kernel, model):
    """A uniform current over a level lake: away from the walls each cell takes in what it gives, so a
    substep changes the faces there and no depth; a tile flags itself for a changed face as for a changed
    depth, at every substep of a launch. The bits of every tile."""
    terrain, water = np.zeros((40, 96), np.float32), np.ones((40, 96), np.float32)
    a, b = twins(ctx, kind, terrain, water, kernel, **MODELS[model])
    for g in (a, b):
        q = g.flow_x
        q[:, 1:-1] = 0.25
        g.flow_x = q
    for call in range(4):
        for g in (a, b):
            g.step(0.4, substeps=4)
        assert_twins(a, b, f"call {call}")
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kind,kernel", WITH_CLIMB)
def test_gauges_read_after_every_substep_see_the_same_water(ctx, kind, kernel):
    """A gauge's pass follows every substep (the kernel's hook, between the boundary faces' booking and
    the next substep's plan): the same bits, and the same discharge, as computing every tile."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water, kernel)
    gauges = [g.add_gauge((39.5, 20.0), (39.5, 60.0)) for g in (a, b)]
    for g in (a, b):
        g.set_terrain(np.full((30, 4), 0.5, np.float32), origin=(38, 25))    # the ridge breached
    for call in range(5):
        for g in (a, b):
            g.step(0.3)
        assert_twins(a, b, f"call {call}")
    assert a.awake < 1.0
    assert gauges[1].volume != 0.0
    assert gauges[0].volume == (gauges[1].volume if water_cases.BITWISE else pytest.approx(gauges[1].volume, rel=1e-3))
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kind,kernel", WITH_CLIMB)
def test_the_tiles_computed_are_those_the_plan_says(ctx, kind, kernel):
    """g.awake against hydro.reference.sleep over calls of one substep: the tiles that changed in the
    substep before and those beside them, those beside a side that is not a wall, and every tile after
    the grid is made and after a side changes kind. The blocked kernel's tiles are of its texels, which
    hold the outer faces too: a row and a column more, and the texels beside an open cell's kept awake."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water, kernel)
    texels = kernel != "cells"
    tiles = -(-(a.ny + texels) // TILE) * -(-(a.nx + texels) // TILE)
    changes = ref_sleep.changed_texels if texels else ref_sleep.changed_cells
    state = [b.water] + gpu_flows(b)
    open_cells = None
    for call in range(14):
        if call >= 6:                            # a side opened, then its discharge changed every call
            for g in (a, b):
                g.set_boundary("left", "inflow", 2.0 + 0.1 * call, span=(60, 80))
            open_cells = np.zeros((a.ny + texels, a.nx + texels), bool)
            open_cells[60:80 + texels, 0:1 + texels] = True
        for g in (a, b):
            g.step(0.05, substeps=1)
        after = [b.water] + gpu_flows(b)
        if call in (0, 6):
            expected = 1.0                       # made, or a side changed kind: every tile
        else:
            expected = ref_sleep.awake_tiles(changed, TILE, open_cells).sum() / tiles
        assert a.awake == pytest.approx(expected, abs=1e-12), call
        changed = changes(state, after)
        state = after
    assert_twins(a, b)
    assert 0.0 < a.awake < 0.8
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("edit", list(EDITS))
@pytest.mark.parametrize("kind,kernel", WITH_CLIMB)
def test_an_edit_wakes_the_still_lake_it_reaches(ctx, kind, edit, kernel):
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water, kernel)
    for _ in range(3):
        for g in (a, b):
            g.step(0.2)
    asleep = a.awake
    assert asleep < 0.3, asleep             # the still lake and the dry land slept; the pond did not
    lake = b.water[:, :38].copy()
    for g in (a, b):
        EDITS[edit](g)
    for call in range(4):
        for g in (a, b):
            g.step(0.2)
        assert_twins(a, b, f"{edit}, call {call}")
    assert a.awake > asleep
    assert not np.array_equal(b.water[:, :38], lake), "the edit moved no water: the case tests nothing"
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kind,kernel", WITH_CLIMB)
def test_a_tide_on_a_still_sea_moves_it(ctx, kind, kernel):
    """A sea at rest against a level side sleeps; the level changes every call (the side's kind does not)
    and the sea follows, as it does with every tile computed."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water, kernel)
    for g in (a, b):
        g.set_boundary("left", "level", 1.5)            # the lake's own level: nothing moves
        g.step(0.2)
        g.step(0.2)
    assert a.awake < 0.5
    sea = b.water[:, :38].copy()
    for call in range(6):
        for g in (a, b):
            g.set_boundary("left", "level", 1.5 + 0.05 * (call + 1))
            g.step(0.2)
        assert_twins(a, b, f"call {call}")
        assert climbed(a) == (kernel == "climb"), call
    assert b.water[:, :38].sum() > sea.sum(), "the tide moved no water: the case tests nothing"
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kernel", KERNELS + ("climb",))
def test_a_still_lake_and_dry_land_cost_nothing(ctx, kernel):
    terrain, water = basin()
    water[:, 60:] = 0.0                     # no pond: nothing moves anywhere
    g = sleepy(hydro.WaterGrid(ctx, terrain, water=water, kernel="blocked" if kernel == "climb" else kernel), kernel)
    g.step(0.1)
    assert g.awake == 1.0                   # the first substep computes every tile
    before = g.water
    g.step(0.5)
    assert g.awake == 0.0
    assert np.array_equal(g.water, before)
    g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
@pytest.mark.parametrize("kernel", KERNELS)
def test_the_water_cycle_keeps_awake_the_tiles_it_works_on(ctx, kind, kernel):
    """Evaporation, a spring on dry land, a drain in the lake, rain on a patch, then everywhere: the
    bits of computing every tile, the tiles beyond their reach asleep."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water, kernel)
    for what, change in cycle_steps(a.shape):
        for g in (a, b):
            change(g)
            g.step(0.3)
            g.step(0.3)
        assert_twins(a, b, what)
        if what in ("evaporation", "spring", "drain"):     # before the water they add reaches everywhere
            assert a.awake < (0.8 if what == "evaporation" else 1.0), (what, a.awake)
    for g in (a, b):
        g.rain = 1e-4
        g.step(0.3)
    assert a.awake == 1.0
    assert_twins(a, b, "rain everywhere")
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
@pytest.mark.parametrize("kernel", KERNELS)
def test_ponds_that_dry_up_sleep_and_book_what_they_lost_once(ctx, kind, kernel):
    """Evaporation and a drain empty two ponds; their dry tiles sleep holding records of what was taken
    until the stats pass books it, which must clear it where the kernel keeps it (the blocked kernel's
    two buffers): the same water and ledger as computing every tile, call after call."""
    terrain = np.zeros((96, 112), np.float32)
    water = np.zeros_like(terrain)
    water[10:30, 60:80] = 2e-3
    water[60:80, 90:110] = 4e-3
    a, b = twins(ctx, kind, terrain, water, kernel)
    for g in (a, b):
        g.evaporation = 1e-3
        g.add_source(100, 70, 6.0, -0.05)
    for call, n in enumerate((1, 3, 4, 5, 1, 3, 7, 2, 3, 5, 4, 1, 3, 6)):     # launches of 1 and 2 substeps
        for g in (a, b):
            g.step(0.3 * n, n)
        assert_twins(a, b, f"call {call}")
    assert a.volume() == 0.0 and a.awake == 0.0
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
@pytest.mark.parametrize("kernel", KERNELS)
def test_a_weak_spring_in_a_still_lake(ctx, kind, kernel):
    """Its water mostly rounds away and is owed to the columns (the cycle's record), which the tiles
    must see change: still the same bits. The lake around it must have gained (on a GPU the lake's
    total moves by the rounding of its own flows, as much as the spring adds)."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water, kernel)
    lake = b.water
    for g in (a, b):
        g.add_source(20, 40, 1.0, 3e-8)
    for call in range(10):
        for g in (a, b):
            g.step(1.0)
    assert_twins(a, b)
    assert a.awake < 1.0
    near = (slice(34, 47), slice(14, 27))              # 6 cells around the spring
    assert b.water[near].sum(dtype=np.float64) > lake[near].sum(dtype=np.float64), \
        "the spring never showed: the case tests nothing"
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kind", list(GRIDS))
@pytest.mark.parametrize("kernel", KERNELS)
def test_erosion_computes_every_tile(ctx, kind, kernel):
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water, kernel)
    for g in (a, b):
        g.erosion = hydro.Erosion()
        g.step(0.3)
    assert a.awake == 1.0
    assert_same_bits(a.terrain, b.terrain)
    for g in (a, b):
        g.erosion = None
        g.step(0.3)
        g.step(0.3)
    assert a.awake < 1.0
    assert_twins(a, b)
    for g in (a, b):
        g.release()


@pytest.mark.parametrize("kind,kernel", [(kind, "blocked") for kind in GRIDS] + [("square", "climb")])
def test_a_sleeping_call_builds_the_programs_of_the_dense_calls_after_it(ctx, kind, kernel):
    """A GPU's driver may take seconds to build a program (docs/benchmarks.md): a grid's first calls sleep,
    and the first of a length also builds the programs of a dense call as long, so the dense calls that
    follow where most tiles move build none in a later frame."""
    terrain, water = basin()
    g = GRIDS[kind](ctx, terrain, water=water, kernel="blocked")
    retune(sleepy(g, kernel), sleep_dense_above=0.2, sleep_climb_dense_above=0.2)
    blocked = g._kernel_object("blocked")
    g.step(0.2, substeps=4)
    assert g._last_call.sleep
    built = set(blocked.programs)
    slept = []
    for _ in range(5):
        g.step(0.2, substeps=4)
        slept.append(g._last_call.sleep)
    assert False in slept and set(blocked.programs) == built, slept
    g.release()


@pytest.mark.parametrize("kind,kernel", WITH_CLIMB)
def test_a_kernel_stops_sleeping_where_most_tiles_move(ctx, kind, kernel):
    """Tuning.sleep_dense_above (sleep_climb_dense_above where the call climbed its tiles, and only
    there): a sleeping call that computed more of its tiles than that makes the calls from two later
    compute every tile (planned from that call's count, whatever the GPU's timing), for sleep_retry
    calls; a substep (a launch) whose plan woke every tile is not judged, the call's others are. The same
    bits throughout."""
    terrain, water = basin()
    a, b = twins(ctx, kind, terrain, water, kernel)
    above = (1.0, 0.2) if kernel == "climb" else (0.2, 1.0)
    retune(a, sleep_dense_above=above[0], sleep_climb_dense_above=above[1], sleep_retry=4)
    slept = []
    for call in range(12):
        for g in (a, b):
            g.step(0.2, substeps=4)
        slept.append(a._last_call.sleep)
        assert_twins(a, b, f"call {call}")
    assert a._last_call.kernel == ("blocked" if kernel == "climb" else kernel)
    # call 0's first substep woke every tile, which is not judged; its others and call 1's computed more
    # than a fifth (the pond and its shore): calls 2 to 6 dense; 7 tries again (its first substep woken
    # by the dense calls), and is judged by its others, so 9 is dense again. The climb's calls are one
    # launch, woken whole in calls 0 and 8: call 1 makes 3 to 7 dense, and 9 makes 11 dense
    if kernel == "climb":
        assert slept == [True] * 3 + [False] * 5 + [True] * 3 + [False], slept
    else:
        assert slept == [True] * 2 + [False] * 5 + [True] * 2 + [False] * 3, slept
    for g in (a, b):
        g.release()


def test_sleep_is_checked_and_settable(ctx):
    terrain, water = basin((40, 40))
    with pytest.raises(TypeError, match="sleep: expected True"):
        hydro.WaterGrid(ctx, terrain, sleep="yes")
    g = hydro.WaterGrid(ctx, terrain, water=water)
    assert g.sleep is True and g.awake == 1.0
    with pytest.raises(TypeError, match="sleep"):
        g.sleep = 1
    assert g.sleep is True
    g.sleep = False
    g.step(0.1)
    assert g.sleep is False and g.awake == 1.0
    g.release()
