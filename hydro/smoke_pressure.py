"""Pressure Poisson solvers of SmokeGrid on the GPU: multigrid V(3,3) cycles with red-black SOR
smoothing, and the fixed-iteration Jacobi / red-black Gauss-Seidel of the popular demos.

Level l has ceil(n / 2^l) cells per side (odd sizes work: missing children count as walls) down to
at most 4 x 4; its operator (W_right, W_top, D, diagonal) is built in float64 on the CPU by
hydro.smoke_levels.levels whenever obstacles or boundaries change, and uploaded. A V-cycle is
smooth (SWEEPS red-black SOR sweeps, OMEGA), restrict (sum of child residuals), recurse, prolong
(bilinear), smooth;
the coarsest level is solved exactly, by a matrix built on the CPU with the operators
(hydro.smoke_levels.coarse_inverse; hydro.reference.smoke.v_cycle is the float64 twin).

At game sizes a step is bound by the number of dispatches, not by memory, so a cycle is few passes:
on each level above COARSE_SIDE, smooth + restrict is one pass and prolong + smooth another
(smooth_restrict.comp, prolong_smooth.comp: overlapped tiles, the same numbers as the separate
passes), each reading one of the level's two q textures and writing the other; the first level with
both sides <= COARSE_SIDE and everything below it is one workgroup in one pass (coarse_cycle.comp,
its operators held in shared memory). A cycle at 1024^2 is 11 passes. On the small levels a pass
costs the latency of its chain of sub-steps, not its memory traffic, so GPUs run each level in the
largest blocks that still give it LEVEL_TILES workgroups (TILE_SHAPES): 64 x 64 cells where the halo
then repeats least work (1024^2), 32 x 32 (512^2), and below that 16 x 16 cells with 1024
invocations, more than the cells of one colour of the block and its halo, so that each half-sweep is
one round (docs/benchmarks-log.md). A half-sweep's invocations take only its colour's cells, each the
same cells at every half-sweep, whose operator it holds in registers (tile.glsl). The relative residual
|b - Lq|_2 / |b|_2 over fluid cells is reduced in fp64 by the finest level's prolong_smooth pass (its
last group folds the tile records) of the cycles whose residual is checked; without a tolerance only
the last cycle's, and nothing is read. With a tolerance every readback is a CPU-GPU sync (the GPU
drains, then idles until the next passes are queued and submitted: v_cycle and SmokeGrid.step submit
as they go, _native.flush), so a step's solve leaves its first check queued (solve()) for
finish() to read later: SmokeGrid waits for it once the next step's forces and velocity advection are
queued, and where the last solve met its tolerance with a margin (run_ahead) the next solve and the
scalars' advection too (set_aside;
level 0's q and right-hand side alternate between two textures, begin(), so a solve set aside can
still be finished). The GPU copies the record into a persistently mapped ring and the CPU polls its fence
(_native.FencedReadback; a buffer read where GL cannot map persistently): with the step's submissions
that measured faster on GPUs than the driver's buffer read (docs/benchmarks-log.md;
llvmpipe runs the passes inside the dispatch calls, so there it makes no difference). The solve
does not check after every cycle: it first runs, back to back, the cycles the previous solve needed
(Pressure.predicted) and reads the residual once; only if that is still above the tolerance does it
go on one cycle and one readback at a time. A steady simulation pays one readback per projection;
the result is the same guarantee, residual <= tolerance (unless the cycle cap or stagnation stops
it), at the cost of an occasional surplus cycle: the batch's second-to-last cycle also leaves its
residual, copied beside the last one's in the same record (one readback), and where it already met
half the tolerance (or the tolerance, where the last cycle barely cut it: the fp32 floor) the next
solve runs one cycle fewer. (Deciding the extra cycles on the GPU, with no
readback, was slower: docs/benchmarks-log.md.)
"""
from __future__ import annotations

import math
from typing import NamedTuple

import moderngl
import numpy as np

from . import _gl, _native
from . import smoke_levels as levels

NORMS_DTYPE = np.dtype([("r2", "<f8"), ("b2", "<f8"), ("rmax", "<f4"), ("bmax", "<f4")])
COARSE_SIDE = 32           # levels with both sides <= this run in one workgroup (coarse_cycle.comp: 32704 of
                           # the 32768 bytes of shared memory GL guarantees; 8 and 16 fit too)
# (block side, workgroup side) of the tiled passes (tile.glsl: TILE, GROUP_SIDE), by device kind, largest
# first: a level takes the first shape that cuts it into at least LEVEL_TILES blocks, else the last one.
# The shapes measured fastest, and those tried and not kept: docs/benchmarks-log.md.
TILE_SHAPES = {"gpu": ((64, 32), (32, 32), (16, 32)), "cpu": ((32, 16),)}
LEVEL_TILES = 256
# Smoothing: SWEEPS red-black sweeps before and after the coarse correction, each half-sweep over-relaxed
# by OMEGA (hydro.reference.smoke.smooth): fewer, dearer cycles that reach 1e-3 in two with a margin
# (the residual cut a cycle of each variant tried: docs/benchmarks-log.md).
SWEEPS = 3
OMEGA = 1.2
# self.norms: the last cycle's Norms (offset 0), prolong_smooth.comp's group count (24), and the
# second-to-last cycle's Norms of a batch (BEFORE_LAST), copied there on the GPU; read as one record
BEFORE_LAST = 32
NORMS_RECORD = BEFORE_LAST + NORMS_DTYPE.itemsize
# The prediction comes down when the second-to-last cycle's residual was below DOWN_MARGIN * tolerance:
# a residual that hovers just under the tolerance would otherwise make every other solve one cycle
# short, and a short solve now also repeats the next step's forces and velocity advection (SmokeGrid.step).
DOWN_MARGIN = 0.5
# ... or when one cycle fewer met the tolerance and the last cycle cut the residual by less than FLOOR_CUT:
# the fp32 floor, where the margin can never be met, so one solve that needed a cycle more by round-off
# would keep every later one a cycle long
FLOOR_CUT = 2.0
# A step queues its projection ahead of the last solve's check (SmokeGrid.step, set_aside) only where that
# solve's last checked residual was at most RUN_AHEAD * tolerance: a check that then fails costs the
# step's forces, advection and projection again, not only its forces and velocity advection, and near the
# tolerance (1024^2 to 1e-4: 0.6-1.0 of it after three cycles) checks fail now and then. In the
# benchmark scenes the two ways measured the same within the spread (docs/benchmarks-log.md).
RUN_AHEAD = 0.5
SHARED_BYTES = 32768       # shared memory GL guarantees a compute workgroup
SHARED_NORMS = 6148        # norms.glsl's arrays and prolong_smooth.comp's flag
STAGNATION = 0.9           # a cycle that cuts the residual by less than this has hit fp32 round-off


def check_tile_shape(shape) -> None:
    """Raise ValueError unless the tiled passes can take `shape` (block side, workgroup side): partials
    holds one record per 16 x 16 block, norms.glsl folds multiples of 256 invocations, and the block
    grown by its halo of 2 SWEEPS + 1 cells, with norms.glsl's 6 KB, must fit the 32 KB of shared memory
    GL guarantees (a side of 64 with SWEEPS up to 3)."""
    tile, group = shape
    if tile % 2 or not 16 <= tile <= 64 or group not in (16, 32):
        raise ValueError(f"tile shape {(tile, group)}: expected an even block side 16..64 and a workgroup "
                         f"side of 16 or 32")
    shared = 4 * (tile + 2 * (2 * SWEEPS + 1)) ** 2 + SHARED_NORMS
    if shared > SHARED_BYTES:
        raise ValueError(f"tile shape {(tile, group)}: its block and halo for {SWEEPS} sweeps need {shared} bytes of "
                         f"shared memory, more than the {SHARED_BYTES} GL guarantees")


def float_texture(ctx, size, comps, fill=0.0):
    """A float32 texture of `size` (x, y) and `comps` components, every texel `fill` (a number, or a
    sequence of `comps` numbers), NEAREST filtering and no repeat: the smoke passes read with texelFetch."""
    tex = ctx.texture(size, comps, dtype="f4")
    tex.filter = (moderngl.NEAREST, moderngl.NEAREST)
    tex.repeat_x = tex.repeat_y = False
    data = np.empty((size[0] * size[1], comps), np.float32)
    data[:] = fill
    tex.write(data.tobytes())
    return tex


class Queued(NamedTuple):
    """A solve to a tolerance whose first check is queued (Pressure._solve_to): what finish() needs."""
    tolerance: float
    iterations: int
    batch: int               # the cycles queued before the check
    seq: int                 # the check's record in the ring


class Pressure:
    def __init__(self, ctx, shape):
        self.ctx = ctx
        self.shapes = [tuple(shape)]
        while max(self.shapes[-1]) > 4:
            self.shapes.append(levels.coarse_shape(self.shapes[-1]))
        # the first level that coarse_cycle.comp takes over; the levels above it are the tiled ones
        self.first_coarse = next(l for l, sh in enumerate(self.shapes) if max(sh) <= COARSE_SIDE)
        self.q, self.q_alt, self.rhs, self.coef = [], [], [], []
        self.coarse_coef = self.partials = self.norms = self.warm = self.ring = self.q_before = None
        self.q_last = self.rhs_last = None
        self.pending = None           # a deferred solve's Queued record until finish()
        self.aside = None             # one whose check a newer solve runs ahead of (set_aside)
        try:
            # level 0's q as a deferred solve's batch left it, kept while finish() runs more cycles
            self.q_before = float_texture(ctx, self._size(0), 1)
            # the last solve's level-0 q and right-hand side (begin() swaps them with q[0] and rhs[0]):
            # the warm start's q0, and what finish() needs of a solve set aside
            self.q_last = float_texture(ctx, self._size(0), 1)
            self.rhs_last = float_texture(ctx, self._size(0), 1)
            for ny, nx in self.shapes:
                self.q.append(float_texture(ctx, (nx, ny), 1))
                self.rhs.append(float_texture(ctx, (nx, ny), 1))
                self.coef.append(float_texture(ctx, (nx, ny), 4))
            # each tiled level's second q (its passes read one and write the other); q_alt[0] is also
            # Jacobi's ping-pong partner of q[0]
            for ny, nx in self.shapes[:max(self.first_coarse, 1)]:
                self.q_alt.append(float_texture(ctx, (nx, ny), 1))
            coarse = self.shapes[self.first_coarse:]
            self.coarse_coef = float_texture(ctx, (sum(nx for _, nx in coarse), coarse[0][0]), 4)
            # one norms record per residual.comp tile (16 x 16), more than prolong_smooth.comp's (TILE x TILE)
            self.tiles = -(-shape[1] // _gl.LOCAL_SIZE) * -(-shape[0] // _gl.LOCAL_SIZE)
            self.partials = ctx.buffer(reserve=NORMS_DTYPE.itemsize * self.tiles)
            self.norms = ctx.buffer(reserve=NORMS_RECORD)
            self.norms.clear()
            # the warm start's sums (divergence.comp; warm.glsl) + the count of groups that wrote theirs
            self.warm = ctx.buffer(reserve=NORMS_DTYPE.itemsize + 8)
            self.warm.clear()
            # the solve's residual checks: the norms copied by the GPU into a mapped ring and waited for
            # by a fence, without the driver's buffer read (None where GL cannot map persistently)
            self.ring = _native.FencedReadback.create(ctx, NORMS_RECORD)
            self.programs = {name: _gl.program(ctx, f"smoke/{name}.comp") for name in
                             ("smooth", "jacobi", "residual", "reduce")}
            device = _gl.device_kind(ctx)
            self.tile_shapes = []             # (TILE, GROUP_SIDE) of each tiled level
            choices = TILE_SHAPES[device]
            for ny, nx in self.shapes[:self.first_coarse]:
                tile = next((sh for sh in choices if -(-nx // sh[0]) * -(-ny // sh[0]) >= LEVEL_TILES), choices[-1])
                check_tile_shape(tile)
                self.tile_shapes.append(tile)
            for shape in set(self.tile_shapes):
                defines = dict(zip(("TILE", "GROUP_SIDE"), shape), SWEEPS=SWEEPS, OMEGA=OMEGA)
                for name in ("smooth_restrict", "prolong_smooth"):
                    self.programs[name, shape] = _gl.program(ctx, f"smoke/{name}.comp", defines)
            self.programs["coarse_cycle"] = _gl.program(ctx, "smoke/coarse_cycle.comp",
                                                      {"COARSE_SIDE": COARSE_SIDE, "SWEEPS": SWEEPS, "OMEGA": OMEGA})
        except BaseException:
            self.release()
            raise
        self.solution = self.q[0]                           # where the last solve left q
        self.cycles = 0
        # cycles a tolerance solve runs before its first check; one V-cycle cuts the residual ~30x, so
        # the first solve runs two (a tolerance one cycle meets brings it down after that solve)
        self.predicted = 2
        self.checks = 0                                     # residual checks so far (the ring's sequence numbers)
        self.last_ratio = math.inf                          # the last concluded check's residual / tolerance
        self.relative = None                                # that of the last solve to a tolerance, once concluded
        self.extending = False                              # finish() is running cycles beyond a batch (_conclude)

    def set_operator(self, solid, bc) -> None:
        if self.pending is not None or self.aside is not None:
            raise RuntimeError("Pressure.set_operator: a solve's check is still queued (finish() it first)")
        lv = levels.levels(solid, bc)
        for tex, c in zip(self.coef, lv):
            tex.write(np.ascontiguousarray(c, np.float32).tobytes())
        coarse = lv[self.first_coarse:]
        atlas = np.zeros((coarse[0].shape[0], sum(c.shape[1] for c in coarse), 4), np.float32)
        x0 = 0
        for c in coarse:                                     # side by side, bottom-aligned
            atlas[:c.shape[0], x0:x0 + c.shape[1]] = c
            x0 += c.shape[1]
        self.coarse_coef.write(atlas.tobytes())
        m = levels.coarse_inverse(lv[-1]).ravel()
        self.coarsest = tuple(float(v) for v in m) + (0.0,) * (256 - m.size)     # coarse_cycle.comp's u_coarsest

    # ------------------------------------------------------------------------------------ passes

    def _size(self, level):
        ny, nx = self.shapes[level]
        return nx, ny

    def _tiled(self, prog, level):
        """Dispatch a tile.glsl pass over `level`: one workgroup per block of the level's tile shape."""
        tile = self.tile_shapes[level][0]
        _gl.dispatch(self.ctx, prog, *self._size(level), local=(tile, tile))

    def smooth(self, level, parity):
        prog = self.programs["smooth"]
        _gl.set_uniforms(prog, u_size=self._size(level), u_parity=parity)
        self.rhs[level].use(_gl.BINDINGS["B_SMOKE_RHS"])
        self.coef[level].use(_gl.BINDINGS["B_SMOKE_COEF"])
        self.q[level].bind_to_image(_gl.BINDINGS["B_SMOKE_Q_OUT"], read=True, write=True)
        _gl.dispatch(self.ctx, prog, *self._size(level))

    def jacobi(self, q_in, q_out):
        prog = self.programs["jacobi"]
        _gl.set_uniforms(prog, u_size=self._size(0))
        q_in.use(_gl.BINDINGS["B_SMOKE_Q"])
        self.rhs[0].use(_gl.BINDINGS["B_SMOKE_RHS"])
        self.coef[0].use(_gl.BINDINGS["B_SMOKE_COEF"])
        q_out.bind_to_image(_gl.BINDINGS["B_SMOKE_Q_OUT"], read=False, write=True)
        _gl.dispatch(self.ctx, prog, *self._size(0))

    def smooth_restrict(self, level, warm=False):
        """SWEEPS red-black SOR sweeps on `level` from q[level] (from 0 below the finest; with `warm`, from
        alpha q[0], warm.glsl) into q_alt[level], and the coarse right-hand side rhs[level + 1] from
        the result."""
        prog = self.programs["smooth_restrict", self.tile_shapes[level]]
        _gl.set_uniforms(prog, u_size=self._size(level), u_coarse_size=self._size(level + 1),
                         u_from_zero=int(level > 0), u_warm=int(warm))
        self.warm.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_WARM"])
        self.q[level].use(_gl.BINDINGS["B_SMOKE_Q"])
        self.rhs[level].use(_gl.BINDINGS["B_SMOKE_RHS"])
        self.coef[level].use(_gl.BINDINGS["B_SMOKE_COEF"])
        self.q_alt[level].bind_to_image(_gl.BINDINGS["B_SMOKE_Q_OUT"], read=False, write=True)
        self.rhs[level + 1].bind_to_image(_gl.BINDINGS["B_SMOKE_RHS_OUT"], read=False, write=True)
        self._tiled(prog, level)

    def prolong_smooth(self, level, norms=False):
        """q[level] = q_alt[level] + the correction from q[level + 1], then SWEEPS red-black SOR sweeps; with
        `norms` (level 0) the residual's norms after it go to self.norms (no reduce pass)."""
        prog = self.programs["prolong_smooth", self.tile_shapes[level]]
        _gl.set_uniforms(prog, u_size=self._size(level), u_coarse_size=self._size(level + 1), u_with_norms=int(norms))
        self.q_alt[level].use(_gl.BINDINGS["B_SMOKE_Q"])
        self.rhs[level].use(_gl.BINDINGS["B_SMOKE_RHS"])
        self.coef[level].use(_gl.BINDINGS["B_SMOKE_COEF"])
        self.q[level + 1].use(_gl.BINDINGS["B_SMOKE_COARSE_Q"])
        self.coef[level + 1].use(_gl.BINDINGS["B_SMOKE_COARSE_COEF"])
        self.q[level].bind_to_image(_gl.BINDINGS["B_SMOKE_Q_OUT"], read=False, write=True)
        self.partials.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_PARTIALS"])
        self.norms.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_NORMS"])
        self._tiled(prog, level)

    def coarse_cycle(self, warm=False):
        """The rest of the V-cycle from level first_coarse down, in place on q[first_coarse], in one
        workgroup (coarse_cycle.comp); with `warm` (first_coarse 0 only) from alpha q[0]."""
        level = self.first_coarse
        prog = self.programs["coarse_cycle"]
        _gl.set_uniforms(prog, u_size=self._size(level), u_levels=len(self.shapes) - level,
                         u_coarsest=self.coarsest, u_from_zero=int(level > 0), u_warm=int(warm))
        self.warm.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_WARM"])
        self.coarse_coef.use(_gl.BINDINGS["B_SMOKE_COEF"])
        self.rhs[level].use(_gl.BINDINGS["B_SMOKE_RHS"])
        self.q[level].bind_to_image(_gl.BINDINGS["B_SMOKE_Q_OUT"], read=True, write=True)
        prog.run(1, 1, 1)
        self.ctx.memory_barrier()

    def residual(self, q, rhs, norms, with_operator=True):
        """Queue the fp64 norms of r = b - L q (or of b alone) on level 0 into buffer `norms`."""
        prog = self.programs["residual"]
        _gl.set_uniforms(prog, u_size=self._size(0), u_with_operator=int(with_operator))
        q.use(_gl.BINDINGS["B_SMOKE_Q"])
        rhs.use(_gl.BINDINGS["B_SMOKE_RHS"])
        self.coef[0].use(_gl.BINDINGS["B_SMOKE_COEF"])
        self.partials.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_PARTIALS"])
        _gl.dispatch(self.ctx, prog, *self._size(0))
        self.reduce(norms)

    def begin(self) -> None:
        """Start a new solve's level 0 on the other q and right-hand side: the last solve's stay in
        q_last and rhs_last, for the divergence pass to start a warm start from and for finish() of a
        solve set aside (set_aside). Call before the divergence pass writes rhs[0] and q[0]."""
        self._swap_last()

    def _swap_last(self) -> None:
        """Swap level 0's q and right-hand side with the last solve's (begin, and back: abandon)."""
        self.q[0], self.q_last = self.q_last, self.q[0]
        self.rhs[0], self.rhs_last = self.rhs_last, self.rhs[0]
        self.solution = self.q[0]

    def bind_warm_sums(self):
        """Bind what the divergence pass needs to queue a warm start's sums (divergence.comp,
        u_warm_sums): q_last (the last solve's q, after begin()) to sample, the level-0 operator, the
        tile records and self.warm, where it leaves |L q0|^2 and <b, L q0>, from which the solve's first
        pass takes the scale alpha = <b, L q0> / |L q0|^2 (warm.glsl; hydro.reference.smoke.warm_scale)."""
        self.q_last.use(_gl.BINDINGS["B_SMOKE_Q"])
        self.coef[0].use(_gl.BINDINGS["B_SMOKE_COEF"])
        self.partials.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_PARTIALS"])
        self.warm.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_WARM"])

    def reduce(self, norms):
        prog = self.programs["reduce"]
        _gl.set_uniforms(prog, u_count=self.tiles)
        self.partials.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_PARTIALS"])
        norms.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_NORMS"])
        prog.run(1, 1, 1)
        self.ctx.memory_barrier()

    def _queue_check(self) -> None:
        """Queue the copy of the norms the last cycle leaves in self.norms into the ring; no wait."""
        if self.ring is not None:
            self.checks += 1
            self.ring.push(self.norms, self.checks)

    def _read_check(self, seq) -> dict:
        """The norms of queued check `seq`, waited for (a CPU-GPU sync), with "before_last": the
        relative residual the batch's second-to-last cycle left (meaningful after a batch of two or more).
        Without the ring only the last check can be read (the norms buffer holds it)."""
        raw = self.norms.read(NORMS_RECORD) if self.ring is None else self.ring.record(seq)
        n = self.read_norms(raw[:NORMS_DTYPE.itemsize])
        n["before_last"] = self.read_norms(raw[BEFORE_LAST:NORMS_RECORD])["relative"]
        return n

    def _check(self) -> dict:
        """The norms the last cycle left in self.norms, waited for (a CPU-GPU sync)."""
        self._queue_check()
        return self._read_check(self.checks)

    @staticmethod
    def read_norms(norms) -> dict:
        """A Norms record from a buffer (read: a sync) or from its bytes."""
        raw = norms if isinstance(norms, bytes) else norms.read(NORMS_DTYPE.itemsize)
        rec = np.frombuffer(raw, NORMS_DTYPE)[0]
        r, b = math.sqrt(float(rec["r2"])), math.sqrt(float(rec["b2"]))
        return {"r": r, "b": b, "relative": r / b if b > 0 else 0.0,
                "rmax": float(rec["rmax"]), "bmax": float(rec["bmax"])}

    # ------------------------------------------------------------------------------------ solvers

    def v_cycle(self, norms=False, warm=False):
        """One V(SWEEPS, SWEEPS) cycle on q[0] (hydro.reference.smoke.v_cycle); with `norms` the residual's norms
        after it go to self.norms; with `warm` it starts from alpha q[0] (once the divergence pass has queued
        the warm start's sums: bind_warm_sums)."""
        _native.flush(self.ctx)      # the passes before this cycle start while Python queues it
        for level in range(self.first_coarse):
            self.smooth_restrict(level, warm=warm and level == 0)
        self.coarse_cycle(warm=warm and self.first_coarse == 0)
        for level in reversed(range(self.first_coarse)):
            self.prolong_smooth(level, norms=norms and level == 0)
        if norms and self.first_coarse == 0:
            self.residual(self.q[0], self.rhs[0], self.norms)

    def solve(self, method, iterations, tolerance, warm=False):
        """Solve L q = rhs[0] from q[0] = 0 (divergence.comp zeroed it) or, with `warm` (multigrid
        only), from alpha q0: q0 the last solve's q, which divergence.comp kept, and alpha the scale
        that minimises |b - alpha L q0|, from the sums divergence.comp queued (bind_warm_sums), so the
        start is never worse than q = 0.
        Returns the texture holding q.
        The residual norms are left in self.norms (read by SmokeGrid.pressure_residual): those after
        the last cycle (multigrid) or after the last sweep (jacobi, gauss-seidel).

        Multigrid with a tolerance: up to `iterations` V-cycles, stopping after the first cycle whose
        relative residual |b - Lq|_2 / |b|_2 is <= tolerance, or that cut it by less than STAGNATION
        (fp32 round-off reached). The residual is checked (computed and read back) only after the
        first self.predicted cycles, then after each further cycle, so a solve may run more cycles
        than the first one to reach the tolerance, never fewer: on return the residual is <= tolerance
        unless the cycle cap or stagnation stopped the solve. A warm start changes only how many
        cycles that takes (fewer while the scene changes slowly), not the stopping test.

        A solve to a tolerance queues its first batch of cycles and the copy of their residual, and
        returns without waiting: finish() reads it later and runs whatever cycles the tolerance still
        asks for (the caller then uses q again: it changed only if finish() says so)."""
        if self.pending is not None:
            raise RuntimeError("Pressure.solve: a solve's check is still queued (finish() it first)")
        self.solution = self.q[0]
        self.cycles = 0
        self.relative = None
        if method == "multigrid":
            if tolerance is None:
                for k in range(iterations):
                    self.v_cycle(norms=k == iterations - 1, warm=warm and k == 0)
                self.cycles = iterations
                return self.solution
            self._solve_to(tolerance, iterations, warm)
            return self.solution
        if method == "jacobi":
            src, dst = self.q[0], self.q_alt[0]
            for _ in range(iterations):
                self.jacobi(src, dst)
                src, dst = dst, src
            self.solution = src
            self.cycles = iterations
        else:
            for _ in range(iterations):
                self.smooth(0, 0)
                self.smooth(0, 1)
            self.cycles = iterations
        self.residual(self.solution, self.rhs[0], self.norms)
        return self.solution

    def _solve_to(self, tolerance, iterations, warm=False):
        """Multigrid V-cycles on q[0] until the relative residual is <= tolerance (see solve): queue a
        batch of self.predicted cycles and the copy of their residual; finish() reads it, goes on one
        cycle and one readback at a time while needed, and sets the prediction for the next solve."""
        batch = min(self.predicted, iterations)
        for k in range(batch):
            self.v_cycle(norms=k >= batch - 2, warm=warm and k == 0)
            if k == batch - 2:        # the second-to-last cycle's norms, kept beside the last one's
                self.ctx.copy_buffer(self.norms, self.norms, NORMS_DTYPE.itemsize, write_offset=BEFORE_LAST)
        self.cycles = batch
        self._queue_check()
        self.pending = Queued(tolerance, iterations, batch, self.checks)

    def finish(self, norms=None) -> bool:
        """Complete a solve to a tolerance whose first check is still queued (solve()): wait
        for it (or take its `norms`, read already by read_aside()), run the cycles beyond the batch while
        the residual is above the tolerance, and update the prediction. Returns whether q changed since
        solve() returned (cycles beyond the batch ran); then q_before holds the q it had (a caller that
        subtracted its gradient subtracts that of q - q_before); False when nothing was pending."""
        if self.pending is None:
            return False
        queued = self.pending
        n = self._read_check(queued.seq) if norms is None else norms   # a wait; if it is interrupted the check stays pending
        self.pending = None
        self.cycles = queued.batch
        return self._conclude(queued, n)

    def run_ahead(self) -> bool:
        """Whether a step may queue its projection before the pending check (set_aside): where GL maps
        the readback ring (the norms buffer alone holds only the newest check) and the last solve
        whose check was read (the one before the pending one) met its tolerance with the margin
        RUN_AHEAD."""
        return self.ring is not None and self.last_ratio <= RUN_AHEAD

    def read_pending(self) -> dict:
        """The norms of the pending check, waited for (a CPU-GPU sync); finish(norms) then completes it."""
        return self._read_check(self.pending.seq)

    def short(self, queued, n) -> bool:
        """Whether the solve `queued`, whose check read `n`, needs cycles beyond its batch."""
        if n["b"] == 0.0:
            return False       # nothing to solve: a cycle on b = 0 from q = 0 (alpha is 0 too) leaves q = 0
        # from q = 0 the relative residual is 1 (b != 0), from a warm start at most 1: the batch
        # stagnated if it cut less than that
        return queued.tolerance < n["relative"] <= STAGNATION and queued.batch < queued.iterations

    def _conclude(self, queued, n, run=True) -> bool:
        """finish() of `queued` once its check read `n`: with `run`, the cycles it still needs, on q[0]
        (which must be its q), and self.cycles; the prediction either way."""
        tolerance, iterations, batch = queued.tolerance, queued.iterations, queued.batch
        if n["b"] == 0.0:
            if run:
                self.cycles, self.relative = 0, 0.0
            self.last_ratio = 0.0
            return False
        previous, now, cycles = 1.0, n["relative"], batch
        if self.short(queued, n):
            assert run, "a short solve's cycles run on its own q"
            _native.copy_texture(self.ctx, self.q[0], self.q_before)      # the q the caller projected with
            self.extending = True    # until the loop ends: an exception leaves q[0] beyond q_before
        while now > tolerance and now <= STAGNATION * previous and cycles < iterations:
            self.v_cycle(norms=True)
            cycles += 1
            self.cycles = cycles
            previous, now = now, self._check()["relative"]
        self.extending = False
        self.last_ratio = now / tolerance
        if run:
            self.relative = now
        if now <= tolerance:
            self.predicted = cycles
            fewer = n["before_last"]
            if cycles == batch > 1 and (fewer <= DOWN_MARGIN * tolerance or fewer <= tolerance and fewer < FLOOR_CUT * now):
                self.predicted = batch - 1            # one cycle fewer did, with a margin or at the fp32 floor: measured
        elif now > STAGNATION * previous and cycles > batch:
            self.predicted = cycles - 1           # the last cycle only confirmed the round-off floor
        else:
            self.predicted = cycles               # the cycle cap
        return cycles > batch

    # A step may queue its whole projection before it waits for the last one's check (SmokeGrid.step):
    # set_aside() moves that check out of the way of the new solve, read_aside() waits for it, and
    # then either finish_aside() (it held) or abandon() and finish() (it asks for more cycles, which
    # run on its own q and right-hand side, still in q_last and rhs_last, and the step runs again).

    def set_aside(self) -> None:
        """Keep the pending check aside while a new solve is queued (needs the ring: the norms buffer
        alone holds only the newest check)."""
        assert self.aside is None and self.ring is not None
        self.aside, self.pending = self.pending, None

    def read_aside(self) -> dict:
        """The norms of the check set aside, waited for (a CPU-GPU sync)."""
        return self._read_check(self.aside.seq)

    def finish_aside(self, n) -> None:
        """The check set aside held (not short(...)): update the prediction from it and forget it."""
        queued, self.aside = self.aside, None
        self._conclude(queued, n, run=False)

    def abandon(self) -> None:
        """Drop the solve queued since set_aside() (its q and velocity are not used) and make the one set
        aside pending again, with its q and right-hand side back in q[0] and rhs[0]."""
        queued, self.aside = self.aside, None
        self._swap_last()
        self.pending = queued
        self.cycles = queued.batch
        self.checks = queued.seq      # the dropped solve's record is not needed: its slot is free again

    def drop(self) -> None:
        """Forget a queued check without reading it: the velocity it was for has been replaced."""
        self.pending = self.aside = None

    def release(self):
        for obj in (*self.q, *self.q_alt, *self.rhs, *self.coef, self.coarse_coef, self.partials, self.norms,
                    self.warm, self.ring, self.q_before, self.q_last, self.rhs_last):
            if obj is not None:
                obj.release()
        self.q, self.q_alt, self.rhs, self.coef = [], [], [], []
        self.coarse_coef = self.partials = self.norms = self.warm = self.ring = self.q_before = None
        self.q_last = self.rhs_last = None
        self.pending = self.aside = None
