"""Pressure Poisson solvers of SmokeGrid on the GPU: multigrid V(2,2) cycles with red-black
Gauss-Seidel smoothing, and the fixed-iteration Jacobi / red-black Gauss-Seidel of the popular demos.

Level l has ceil(n / 2^l) cells per side (odd sizes work: missing children count as walls) down to
at most 4 x 4; its operator (W_right, W_top, D, diagonal) is built in float64 on the CPU by
hydro.reference.smoke.levels whenever obstacles or boundaries change, and uploaded. A V-cycle is
smooth (2 red-black sweeps), restrict (sum of child residuals), recurse, prolong (bilinear), smooth;
the coarsest level is solved exactly, by a matrix built on the CPU with the operators
(hydro.reference.smoke.coarse_inverse, v_cycle).

At game sizes a step is bound by the number of dispatches, not by memory, so a cycle is few passes:
on each level above COARSE_SIDE, smooth + restrict is one pass and prolong + smooth another
(smooth_restrict.comp, prolong_smooth.comp: overlapped tiles, the same numbers as the separate
passes), each reading one of the level's two q textures and writing the other; the first level with
both sides <= COARSE_SIDE and everything below it is one workgroup in one pass (coarse_cycle.comp,
its operators held in shared memory). A cycle at 1024^2 is 11 passes. On the small levels a pass
costs the latency of its chain of sub-steps, not its memory traffic, so GPUs run them in blocks of
32 x 32 cells with as many invocations (SMALL_TILE_SHAPE), and the large levels in blocks of 64 x 64
cells, whose halo repeats less work (TILE_SHAPE; docs/benchmarks.md). The relative residual
|b - Lq|_2 / |b|_2 over fluid cells is reduced in fp64 by the finest level's prolong_smooth pass (its
last group folds the tile records) of the cycles whose residual is checked; without a tolerance only
the last cycle's.

A solve to a tolerance reads nothing back: a readback is a CPU-GPU sync (the GPU drains, then idles
until the next passes are queued, and the game's CPU waits the whole time). It runs, back to back,
the cycles the last solves needed (Pressure.predicted), then EXTRA_CYCLES conditional cycles (more
after a change of the scene the prediction cannot know: unsettle). The group that folds a cycle's
norms decides on the GPU whether the next conditional cycle runs (solve.glsl: the same stopping test
as before, residual above the tolerance and still falling by STAGNATION, cycle cap), and every pass of
a conditional cycle returns at once unless it does. The solve's state (cycles, residuals) goes to a
fenced ring (_gl.FencedReadback), from which a later solve learns the count without waiting. So the
guarantee is the same, residual <= tolerance unless the cycle cap or stagnation stops the solve,
as long as a solve needs at most EXTRA_CYCLES more cycles than the last ones; one that needs more
ends above the tolerance (pressure_residual says so) and the next ones run more. A skipped cycle
still costs its passes' dispatches (about 100 us at 1024^2 on the H200, docs/benchmarks.md).
Each pass's GL calls are recorded once and replayed (_gl.Recorder): at game sizes a step is bound by
the Python that issues it.
"""
from __future__ import annotations

import math

import moderngl
import numpy as np

from . import _gl
from .reference import smoke as ref

B = _gl.BINDINGS

NORMS_DTYPE = np.dtype([("r2", "<f8"), ("b2", "<f8"), ("rmax", "<f4"), ("bmax", "<f4")])
COARSE_SIDE = 32           # levels with both sides <= this run in one workgroup (coarse_cycle.comp: 32704 of
                           # the 32768 bytes of shared memory GL guarantees; 8 and 16 fit too)
# (block side, workgroup side) of the tiled passes (tile.glsl: TILE, GROUP_SIDE), by device kind; a level
# of fewer than SMALL_LEVEL_TILES such blocks takes SMALL_TILE_SHAPE
TILE_SHAPE = {"gpu": (64, 32), "cpu": (32, 16)}
SMALL_TILE_SHAPE = {"gpu": (32, 32), "cpu": (32, 16)}
SMALL_LEVEL_TILES = 256
STAGNATION = 0.9           # a cycle that cuts the residual by less than this has hit fp32 round-off
EXTRA_CYCLES = 1           # a solve to a tolerance: conditional cycles after the predicted ones (solve.glsl)
FIRST_EXTRA_CYCLES = 8     # the same until a solve since the last change of the scene has been read back
# a solve's state (solve.glsl's Solve, std430)
SOLVE_DTYPE = np.dtype([("previous", "<f8"), ("now", "<f8"), ("after_batch", "<f8"), ("worst", "<f8"),
                        ("cycles", "<u4"), ("batch", "<u4"), ("running", "<u4"), ("solves", "<u4"),
                        ("over", "<u4"), ("short", "<u4"), ("total", "<u4"), ("pad", "<u4")])


def check_tile_shape(shape) -> None:
    """Raise ValueError unless the tiled passes can take `shape` (block side, workgroup side): partials
    holds one record per 16 x 16 block, norms.glsl folds multiples of 256 invocations, and a block of
    64 + 2 x 5 cells a side is what 32 KB of shared memory holds."""
    tile, group = shape
    if tile % 2 or not 16 <= tile <= 64 or group not in (16, 32):
        raise ValueError(f"tile shape {(tile, group)}: expected an even block side 16..64 and a workgroup "
                         f"side of 16 or 32")


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


class Pressure:
    def __init__(self, ctx, shape):
        self.ctx = ctx
        self.shapes = [tuple(shape)]
        while max(self.shapes[-1]) > 4:
            self.shapes.append(ref.coarse_shape(self.shapes[-1]))
        # the first level that coarse_cycle.comp takes over; the levels above it are the tiled ones
        self.first_coarse = next(l for l, sh in enumerate(self.shapes) if max(sh) <= COARSE_SIDE)
        self.q, self.q_alt, self.rhs, self.coef = [], [], [], []
        self.coarse_coef = self.partials = self.norms = self.warm = None
        self.state = self.ring = None
        try:
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
            self.norms = ctx.buffer(reserve=NORMS_DTYPE.itemsize + 8)     # + prolong_smooth.comp's group count
            self.norms.clear()
            self.warm = ctx.buffer(reserve=NORMS_DTYPE.itemsize)     # warm_start.comp's sums (warm.glsl)
            self.warm.clear()
            self.programs = {name: _gl.program(ctx, f"smoke/{name}.comp") for name in
                             ("smooth", "jacobi", "residual", "reduce", "warm_start")}
            device = _gl.device_kind(ctx)
            self.tile_shapes = []             # (TILE, GROUP_SIDE) of each tiled level
            for ny, nx in self.shapes[:self.first_coarse]:
                tile, group = TILE_SHAPE[device]
                if -(-nx // tile) * -(-ny // tile) < SMALL_LEVEL_TILES:
                    tile, group = SMALL_TILE_SHAPE[device]
                check_tile_shape((tile, group))
                self.tile_shapes.append((tile, group))
            for shape in set(self.tile_shapes):
                defines = dict(zip(("TILE", "GROUP_SIDE"), shape))
                for name in ("smooth_restrict", "prolong_smooth"):
                    self.programs[name, shape] = _gl.program(ctx, f"smoke/{name}.comp", defines)
            self.programs["coarse_cycle"] = _gl.program(ctx, "smoke/coarse_cycle.comp", {"COARSE_SIDE": COARSE_SIDE})
            self.state = ctx.buffer(reserve=SOLVE_DTYPE.itemsize)     # solve.glsl's Solve
            self.state.clear()
            self.ring = _gl.FencedReadback.create(ctx, SOLVE_DTYPE.itemsize)
        except BaseException:
            self.release()
            raise
        self.solution = self.q[0]                           # where the last solve left q
        self._cycles = 0                                    # None: in self.state (a solve decided on the GPU)
        self.predicted = 1                                  # cycles a tolerance solve runs unconditionally
        self.settled = False                                # whether `predicted` comes from a solve of this scene
        self._settled_from = 1                              # the first solve of this scene (see unsettle)
        self.solves = 0                                     # solves decided on the GPU (ring sequence numbers)
        self._seen = 0                                      # the last of them whose state was learned from
        self._conditional = 0                               # 1 while queuing a conditional cycle (solve.glsl)
        self._decision = None                               # solve.glsl's decide() uniforms for the cycle queued
        self._calls = {}                                    # _pass: recorded GL calls by pass

    def set_operator(self, solid, bc) -> None:
        self.unsettle()
        self._calls.clear()                                  # coarse_cycle.comp's u_coarsest changes
        lv = ref.levels(solid, bc)
        for tex, c in zip(self.coef, lv):
            tex.write(np.ascontiguousarray(c, np.float32).tobytes())
        coarse = lv[self.first_coarse:]
        atlas = np.zeros((coarse[0].shape[0], sum(c.shape[1] for c in coarse), 4), np.float32)
        x0 = 0
        for c in coarse:                                     # side by side, bottom-aligned
            atlas[:c.shape[0], x0:x0 + c.shape[1]] = c
            x0 += c.shape[1]
        self.coarse_coef.write(atlas.tobytes())
        m = ref.coarse_inverse(lv[-1]).ravel()
        self.coarsest = tuple(float(v) for v in m) + (0.0,) * (256 - m.size)     # coarse_cycle.comp's u_coarsest

    # ------------------------------------------------------------------------------------ passes

    def _size(self, level):
        ny, nx = self.shapes[level]
        return nx, ny

    def _pass(self, key, record):
        """Make a pass's GL calls: recorded by record(recorder) the first time for `key` (with whether
        the pass is in a conditional cycle), replayed after that (_gl.Recorder). Every program of this
        class is driven this way, never through _gl.set_uniforms."""
        key += (self._conditional,)
        calls = self._calls.get(key)
        if calls is None:
            r = _gl.Recorder(self.ctx)
            record(r)
            calls = self._calls[key] = tuple(r.calls)
        _gl.replay(calls)

    def _tile_groups(self, level):
        """One workgroup per block of the level's tile shape (tile.glsl)."""
        tile = self.tile_shapes[level][0]
        return _gl.groups(*self._size(level), local=(tile, tile))

    def _solve(self, r, prog, decide=False):
        """solve.glsl's per-pass uniforms (whether the pass is in a conditional cycle; whether the pass
        that folds the norms decides, with the values _decide writes) and the solve's state."""
        r.uniforms(prog, u_conditional=self._conditional, u_decide=int(decide))
        r.buffer(self.state, B["B_SMOKE_SOLVE"])

    def _decide(self, prog) -> bool:
        """Give the pass that folds a solve's norms the decision's values; whether there is one."""
        if self._decision is None:
            return False
        _gl.set_uniforms(prog, **self._decision)     # names no recorded pass writes
        return True

    def smooth(self, level, parity):
        def record(r):
            prog = self.programs["smooth"]
            r.uniforms(prog, u_size=self._size(level), u_parity=parity)
            r.texture(self.rhs[level], B["B_SMOKE_RHS"])
            r.texture(self.coef[level], B["B_SMOKE_COEF"])
            r.image(self.q[level], B["B_SMOKE_Q_OUT"], True, True)
            r.run(prog, _gl.groups(*self._size(level)))
        self._pass(("smooth", level, parity), record)

    def jacobi(self, q_in, q_out):
        def record(r):
            prog = self.programs["jacobi"]
            r.uniforms(prog, u_size=self._size(0))
            r.texture(q_in, B["B_SMOKE_Q"])
            r.texture(self.rhs[0], B["B_SMOKE_RHS"])
            r.texture(self.coef[0], B["B_SMOKE_COEF"])
            r.image(q_out, B["B_SMOKE_Q_OUT"], False, True)
            r.run(prog, _gl.groups(*self._size(0)))
        self._pass(("jacobi", id(q_in), id(q_out)), record)

    def smooth_restrict(self, level, warm=False):
        """2 red-black sweeps on `level` from q[level] (from 0 below the finest; with `warm`, from
        alpha q[0], warm.glsl) into q_alt[level], and the coarse right-hand side rhs[level + 1] from
        the result."""
        def record(r):
            prog = self.programs["smooth_restrict", self.tile_shapes[level]]
            r.uniforms(prog, u_size=self._size(level), u_coarse_size=self._size(level + 1),
                       u_from_zero=int(level > 0), u_warm=int(warm))
            self._solve(r, prog)
            r.buffer(self.warm, B["B_SMOKE_WARM"])
            r.texture(self.q[level], B["B_SMOKE_Q"])
            r.texture(self.rhs[level], B["B_SMOKE_RHS"])
            r.texture(self.coef[level], B["B_SMOKE_COEF"])
            r.image(self.q_alt[level], B["B_SMOKE_Q_OUT"], False, True)
            r.image(self.rhs[level + 1], B["B_SMOKE_RHS_OUT"], False, True)
            r.run(prog, self._tile_groups(level))
        self._pass(("smooth_restrict", level, warm), record)

    def prolong_smooth(self, level, norms=False):
        """q[level] = q_alt[level] + the correction from q[level + 1], then 2 red-black sweeps; with
        `norms` (level 0) the residual's norms after it go to self.norms (no reduce pass), and in a
        solve to a tolerance the decision whether it goes on (solve.glsl)."""
        prog = self.programs["prolong_smooth", self.tile_shapes[level]]
        decide = norms and self._decide(prog)

        def record(r):
            r.uniforms(prog, u_size=self._size(level), u_coarse_size=self._size(level + 1), u_with_norms=int(norms))
            self._solve(r, prog, decide)
            r.texture(self.q_alt[level], B["B_SMOKE_Q"])
            r.texture(self.rhs[level], B["B_SMOKE_RHS"])
            r.texture(self.coef[level], B["B_SMOKE_COEF"])
            r.texture(self.q[level + 1], B["B_SMOKE_COARSE_Q"])
            r.texture(self.coef[level + 1], B["B_SMOKE_COARSE_COEF"])
            r.image(self.q[level], B["B_SMOKE_Q_OUT"], False, True)
            r.buffer(self.partials, B["B_SMOKE_PARTIALS"])
            r.buffer(self.norms, B["B_SMOKE_NORMS"])
            r.run(prog, self._tile_groups(level))
        self._pass(("prolong_smooth", level, norms, decide), record)

    def coarse_cycle(self, warm=False):
        """The rest of the V-cycle from level first_coarse down, in place on q[first_coarse], in one
        workgroup (coarse_cycle.comp); with `warm` (first_coarse 0 only) from alpha q[0]."""
        level = self.first_coarse

        def record(r):
            prog = self.programs["coarse_cycle"]
            r.uniforms(prog, u_size=self._size(level), u_levels=len(self.shapes) - level,
                       u_coarsest=self.coarsest, u_from_zero=int(level > 0), u_warm=int(warm))
            self._solve(r, prog)
            r.buffer(self.warm, B["B_SMOKE_WARM"])
            r.texture(self.coarse_coef, B["B_SMOKE_COEF"])
            r.texture(self.rhs[level], B["B_SMOKE_RHS"])
            r.image(self.q[level], B["B_SMOKE_Q_OUT"], True, True)
            r.run(prog, (1, 1, 1))
        self._pass(("coarse_cycle", warm), record)

    def residual(self, q, rhs, norms, with_operator=True):
        """Queue the fp64 norms of r = b - L q (or of b alone) on level 0 into buffer `norms`."""
        def record(r):
            prog = self.programs["residual"]
            r.uniforms(prog, u_size=self._size(0), u_with_operator=int(with_operator))
            self._solve(r, prog)
            r.texture(q, B["B_SMOKE_Q"])
            r.texture(rhs, B["B_SMOKE_RHS"])
            r.texture(self.coef[0], B["B_SMOKE_COEF"])
            r.buffer(self.partials, B["B_SMOKE_PARTIALS"])
            r.run(prog, _gl.groups(*self._size(0)))
        self._pass(("residual", id(q), id(rhs), with_operator), record)
        self.reduce(norms)

    def warm_start(self):
        """Queue the sums of a warm start from the q that q[0] holds (the last solve's) and rhs[0]:
        |L q0|^2 and <b, L q0> into self.warm, from which the solve's first pass takes the scale
        alpha = <b, L q0> / |L q0|^2 (warm.glsl; hydro.reference.smoke.warm_scale). No readback."""
        def record(r):
            prog = self.programs["warm_start"]
            r.uniforms(prog, u_size=self._size(0))
            r.texture(self.q[0], B["B_SMOKE_Q"])
            r.texture(self.rhs[0], B["B_SMOKE_RHS"])
            r.texture(self.coef[0], B["B_SMOKE_COEF"])
            r.buffer(self.partials, B["B_SMOKE_PARTIALS"])
            r.run(prog, _gl.groups(*self._size(0)))
        self._pass(("warm_start",), record)
        self.reduce(self.warm)

    def reduce(self, norms):
        prog = self.programs["reduce"]
        decide = norms is self.norms and self._decide(prog)

        def record(r):
            r.uniforms(prog, u_count=self.tiles)
            self._solve(r, prog, decide)
            r.buffer(self.partials, B["B_SMOKE_PARTIALS"])
            r.buffer(norms, B["B_SMOKE_NORMS"])
            r.run(prog, (1, 1, 1))
        self._pass(("reduce", id(norms), decide), record)

    @staticmethod
    def read_norms(norms) -> dict:
        rec = np.frombuffer(norms.read(NORMS_DTYPE.itemsize), NORMS_DTYPE)[0]
        r, b = math.sqrt(float(rec["r2"])), math.sqrt(float(rec["b2"]))
        return {"r": r, "b": b, "relative": r / b if b > 0 else 0.0,
                "rmax": float(rec["rmax"]), "bmax": float(rec["bmax"])}

    # ------------------------------------------------------------------------------------ solvers

    def v_cycle(self, norms=False, warm=False):
        """One V(2,2) cycle on q[0] (hydro.reference.smoke.v_cycle); with `norms` the residual's norms
        after it go to self.norms; with `warm` it starts from alpha q[0] (after warm_start())."""
        _gl.flush(self.ctx)      # the passes before this cycle start while Python queues it
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
        that minimises |b - alpha L q0| (warm_start), so the start is never worse than q = 0.
        Returns the texture holding q.
        The residual norms are left in self.norms (read by SmokeGrid.pressure_residual): those after
        the last cycle (multigrid) or after the last sweep (jacobi, gauss-seidel).

        Multigrid with a tolerance: up to `iterations` V-cycles, stopping after the first cycle whose
        relative residual |b - Lq|_2 / |b|_2 is <= tolerance, or that cut it by less than STAGNATION
        (fp32 round-off reached). The residual is checked, on the GPU, only after the first
        self.predicted cycles, then after each conditional cycle (_solve_to), so a solve may run more
        cycles than the first one to reach the tolerance, never fewer: the residual is <= tolerance
        unless the cycle cap or stagnation stopped the solve, or it needed more cycles than the
        conditional ones cover. A warm start changes only how many cycles that takes (fewer while the
        scene changes slowly), not the stopping test. Nothing is read back."""
        self.solution = self.q[0]
        self.cycles = 0
        if method == "multigrid":
            if warm:
                self.warm_start()
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
        """Multigrid V-cycles on q[0] until the relative residual is <= tolerance (see solve), with no
        readback: self.predicted cycles back to back, then up to EXTRA_CYCLES more (FIRST_EXTRA_CYCLES
        until the scene has settled), each of whose passes returns at once unless the last cycle's
        norms left the residual above the tolerance (solve.glsl); the solve's state then goes to the
        fenced ring, from which a later solve learns its prediction."""
        self._learn(tolerance)
        batch = min(self.predicted, iterations)
        extra = min(iterations - batch, EXTRA_CYCLES if self.settled else FIRST_EXTRA_CYCLES)
        decision = dict(u_extra=extra, u_batch=batch, u_cap=iterations, u_tolerance=float(tolerance),
                        u_stagnation=STAGNATION)
        try:
            for k in range(batch):
                if k == batch - 1:
                    self._decision = dict(decision, u_slot=0)
                self.v_cycle(norms=k == batch - 1, warm=warm and k == 0)
            self._conditional = 1
            for slot in range(1, extra + 1):
                self._decision = dict(decision, u_slot=slot)
                self.v_cycle(norms=True)
        finally:
            self._conditional, self._decision = 0, None
        self._cycles = None
        self.solves += 1
        if self.ring is not None:
            self.ring.push(self.state, self.solves)

    def read_state(self) -> dict:
        """The state solve.glsl left after the last solve decided on the GPU (a sync)."""
        rec = np.frombuffer(self.state.read(), SOLVE_DTYPE)[0]
        return {name: rec[name].item() for name in SOLVE_DTYPE.names}

    @property
    def cycles(self) -> int:
        """V-cycles or sweeps the last solve ran (read from the GPU when solve.glsl counted them)."""
        if self._cycles is None:
            self._cycles = self.read_state()["cycles"]
        return self._cycles

    @cycles.setter
    def cycles(self, value: int) -> None:
        self._cycles = value

    def _learn(self, tolerance):
        """Update the prediction from the newest finished solve not yet learned from, without waiting
        for the GPU (none finished: the prediction stands); without a ring, from the last solve (a sync)."""
        if self.solves == self._seen:
            return
        if self.ring is None:
            state, seq = self.read_state(), self.solves
        else:
            got = self.ring.latest(max(self._seen + 1, self.solves - self.ring.slots + 1))
            if got is None:
                return
            raw, seq = got
            rec = np.frombuffer(raw, SOLVE_DTYPE)[0]
            state = {name: rec[name].item() for name in SOLVE_DTYPE.names}
        self._seen = seq
        predicted = predict(state, tolerance)
        if predicted is not None:
            self.predicted = predicted
            self.settled = self.settled or seq >= self._settled_from

    def unsettle(self) -> None:
        """The scene changed in a way the prediction cannot know (obstacles, boundaries, the time step, a
        velocity set from outside): the solves give themselves FIRST_EXTRA_CYCLES conditional cycles
        until the state of one made from now on has been learned."""
        self.settled = False
        self._settled_from = self.solves + 1

    def release(self):
        for obj in (*self.q, *self.q_alt, *self.rhs, *self.coef, self.coarse_coef, self.partials, self.norms,
                    self.warm, self.state, self.ring):
            if obj is not None:
                obj.release()
        self.q, self.q_alt, self.rhs, self.coef = [], [], [], []
        self.coarse_coef = self.partials = self.norms = self.warm = None
        self.state = self.ring = None


def predict(state: dict, tolerance: float) -> int | None:
    """The cycles the next solve to `tolerance` runs unconditionally, from a finished solve's state
    (solve.glsl's Solve); None when that solve had nothing to solve (b = 0).
    - It reached the tolerance: as many cycles as it ran, or one fewer when it converged within its
      unconditional batch with a margin: had each of the batch's cycles cut the residual by their mean
      factor now^(1/batch), batch - 1 cycles would have left now^((batch-1)/batch); V-cycles cut most
      in the first cycle, so the last one cut less than the mean and the residual after batch - 1 was
      at most that.
    - It stagnated (fp32 round-off) after its batch: one fewer than it ran, as the last cycle only
      confirmed the floor.
    - It hit the cycle cap, or ran out of conditional cycles above the tolerance: as many as it ran
      (the next solve then has its conditional cycles on top)."""
    cycles, batch, now = state["cycles"], state["batch"], state["now"]
    if cycles == 0:
        return None
    if now <= tolerance:
        if cycles == batch > 1 and state["after_batch"] ** ((batch - 1) / batch) <= tolerance:
            return batch - 1
        return cycles
    if now > STAGNATION * state["previous"] and cycles > batch:
        return cycles - 1
    return cycles
