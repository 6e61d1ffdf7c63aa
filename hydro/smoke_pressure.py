"""Pressure Poisson solvers of SmokeGrid on the GPU: multigrid V(2,2) cycles with red-black
Gauss-Seidel smoothing, and the fixed-iteration Jacobi / red-black Gauss-Seidel of the popular demos.

Level l has ceil(n / 2^l) cells per side (odd sizes work: missing children count as walls) down to
at most 4 x 4; its operator (W_right, W_top, D, diagonal) is built in float64 on the CPU by
hydro.reference.smoke.levels whenever obstacles or boundaries change, and uploaded. A V-cycle is
smooth (2 red-black sweeps), restrict (sum of child residuals), recurse, prolong (bilinear), smooth;
the coarsest level gets COARSE_SWEEPS sweeps. The relative residual |b - Lq|_2 / |b|_2 over fluid cells
is reduced on the GPU in fp64 (residual.comp, reduce.comp); with a tolerance it is read back after
each cycle (one small sync per cycle), otherwise only when asked for.
"""
from __future__ import annotations

import math

import moderngl
import numpy as np

from . import _gl
from .reference import smoke as ref

NORMS_DTYPE = np.dtype([("r2", "<f8"), ("b2", "<f8"), ("rmax", "<f4"), ("bmax", "<f4")])
PRE, POST = 2, 2
STAGNATION = 0.9           # a cycle that cuts the residual by less than this has hit fp32 round-off


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
        self.q, self.rhs, self.coef = [], [], []
        self.partials = self.norms = self.q_alt = None
        try:
            for ny, nx in self.shapes:
                self.q.append(float_texture(ctx, (nx, ny), 1))
                self.rhs.append(float_texture(ctx, (nx, ny), 1))
                self.coef.append(float_texture(ctx, (nx, ny), 4))
            self.q_alt = float_texture(ctx, self.shapes[0][::-1], 1)      # Jacobi's ping-pong partner of q[0]
            tiles = -(-shape[1] // _gl.LOCAL_SIZE) * -(-shape[0] // _gl.LOCAL_SIZE)
            self.tiles = tiles
            self.partials = ctx.buffer(reserve=NORMS_DTYPE.itemsize * tiles)
            self.norms = ctx.buffer(reserve=NORMS_DTYPE.itemsize)
            self.norms.clear()
            self.programs = {name: _gl.program(ctx, f"smoke/{name}.comp") for name in
                             ("smooth", "jacobi", "restrict", "prolong", "residual", "reduce")}
        except BaseException:
            self.release()
            raise
        self.solution = self.q[0]                           # where the last solve left q
        self.cycles = 0

    def set_operator(self, solid, bc) -> None:
        for tex, c in zip(self.coef, ref.levels(solid, bc)):
            tex.write(np.ascontiguousarray(c, np.float32).tobytes())

    # ------------------------------------------------------------------------------------ passes

    def _size(self, level):
        ny, nx = self.shapes[level]
        return nx, ny

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

    def restrict(self, level):
        prog = self.programs["restrict"]
        _gl.set_uniforms(prog, u_size=self._size(level), u_coarse_size=self._size(level + 1))
        self.q[level].use(_gl.BINDINGS["B_SMOKE_Q"])
        self.rhs[level].use(_gl.BINDINGS["B_SMOKE_RHS"])
        self.coef[level].use(_gl.BINDINGS["B_SMOKE_COEF"])
        self.rhs[level + 1].bind_to_image(_gl.BINDINGS["B_SMOKE_RHS_OUT"], read=False, write=True)
        self.q[level + 1].bind_to_image(_gl.BINDINGS["B_SMOKE_Q_OUT"], read=False, write=True)
        _gl.dispatch(self.ctx, prog, *self._size(level + 1))

    def prolong(self, level):
        prog = self.programs["prolong"]
        _gl.set_uniforms(prog, u_size=self._size(level), u_coarse_size=self._size(level + 1))
        self.q[level + 1].use(_gl.BINDINGS["B_SMOKE_COARSE_Q"])
        self.coef[level + 1].use(_gl.BINDINGS["B_SMOKE_COARSE_COEF"])
        self.coef[level].use(_gl.BINDINGS["B_SMOKE_COEF"])
        self.q[level].bind_to_image(_gl.BINDINGS["B_SMOKE_Q_OUT"], read=True, write=True)
        _gl.dispatch(self.ctx, prog, *self._size(level))

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

    def reduce(self, norms):
        prog = self.programs["reduce"]
        _gl.set_uniforms(prog, u_count=self.tiles)
        self.partials.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_PARTIALS"])
        norms.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_NORMS"])
        prog.run(1, 1, 1)
        self.ctx.memory_barrier()

    @staticmethod
    def read_norms(norms) -> dict:
        rec = np.frombuffer(norms.read(), NORMS_DTYPE)[0]
        r, b = math.sqrt(float(rec["r2"])), math.sqrt(float(rec["b2"]))
        return {"r": r, "b": b, "relative": r / b if b > 0 else 0.0,
                "rmax": float(rec["rmax"]), "bmax": float(rec["bmax"])}

    # ------------------------------------------------------------------------------------ solvers

    def v_cycle(self, level=0):
        last = len(self.shapes) - 1
        if level == last:
            for _ in range(ref.COARSE_SWEEPS):
                self.smooth(level, 0)
                self.smooth(level, 1)
            return
        for _ in range(PRE):
            self.smooth(level, 0)
            self.smooth(level, 1)
        self.restrict(level)
        self.v_cycle(level + 1)
        self.prolong(level)
        for _ in range(POST):
            self.smooth(level, 0)
            self.smooth(level, 1)

    def solve(self, method, iterations, tolerance):
        """Solve L q = rhs[0] from q[0] = 0 (divergence.comp zeroed it). Returns the texture holding q.
        The residual norms are left in self.norms (read by SmokeGrid.pressure_residual)."""
        self.solution = self.q[0]
        self.cycles = 0
        if method == "multigrid":
            if tolerance is None:
                for _ in range(iterations):
                    self.v_cycle()
                self.cycles = iterations
            else:
                self.residual(self.q[0], self.rhs[0], self.norms)
                previous = self.read_norms(self.norms)["relative"]
                while previous > tolerance and self.cycles < iterations:
                    self.v_cycle()
                    self.cycles += 1
                    self.residual(self.q[0], self.rhs[0], self.norms)
                    now = self.read_norms(self.norms)["relative"]
                    if now > STAGNATION * previous:
                        break
                    previous = now
                return self.solution
        elif method == "jacobi":
            src, dst = self.q[0], self.q_alt
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

    def release(self):
        for obj in (*self.q, *self.rhs, *self.coef, self.q_alt, self.partials, self.norms):
            if obj is not None:
                obj.release()
        self.q, self.rhs, self.coef = [], [], []
        self.q_alt = self.partials = self.norms = None
