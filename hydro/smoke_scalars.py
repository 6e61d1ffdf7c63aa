"""SmokeGrid's passes on the cell scalars (density, temperature, fuel): combustion, their advection by
the projected velocity with their sums and ledger entries, the conservation fix, and the optional
density diffusion. A mixin of hydro.smoke.SmokeGrid, apart so that smoke.py keeps to construction,
splats and the velocity's passes; the order of a step is in SmokeGrid.step.
"""
from __future__ import annotations

import math

from . import _gl
from . import smoke_ops as ops
from .smoke_ops import DIFFUSION_TOLERANCE


class SmokeScalars:
    """The scalars' passes of SmokeGrid (see hydro.smoke). Expects params, nx, ny, ctx, _s, _hat,
    _s_spare, _vx, _vy, _ledger, _programs and the pass helpers (_common, _bind, _image, _decays,
    _advect, _maccormack) of SmokeGrid."""

    def _combust(self, dt):
        p = self.params
        prog = self._programs["combust"]
        self._common(prog)
        _gl.set_uniforms(prog, u_burn_fraction=-math.expm1(-p.burn_rate * dt), u_burn_heat=p.burn_heat,
                         u_smoke_yield=p.smoke_yield, u_cooling_dt=p.cooling * dt, u_ambient=p.ambient_temperature)
        self._ledger.bind(prog, booking=False)
        self._image("B_SMOKE_S_OUT", self._s.read, read=True)
        _gl.dispatch(self.ctx, prog, self.nx, self.ny)

    def _advect_scalars(self, dt):
        """Density, temperature and fuel carried by the velocity on the read side (the one the
        projection just left, divergence-free to the solver's tolerance), their totals summed and
        booked, with conserve the totals fixed (_conserve), with density_diffusion the density
        diffused (_diffuse_density, which keeps the total), then swapped."""
        dt_h = dt / self.params.cell_size
        vel, cur, out = (self._vx.read, self._vy.read), (self._s.read,), (self._s.write,)
        decays = self._decays(dt)
        if self.params.advection == "semi-lagrangian":
            self._advect(vel, cur, out, dt_h, decays, totals=True)
        else:
            self._advect(vel, cur, self._hat[2:], dt_h, (1.0,) * 4)
            self._maccormack(vel, cur, self._hat[2:], out, dt_h, decays, totals=True)
        if self.params.conserve:
            self._conserve(out[0], decays)
        if self.params.density_diffusion > 0.0:
            self._diffuse_density(dt)
        self._s.swap()

    def _conserve(self, s, decays):
        """The conservation fix, in place on the scalars `s` the last advection pass wrote, from the
        sums it left (conserve.comp)."""
        prog = self._programs["conserve"]
        self._common(prog)
        _gl.set_uniforms(prog, u_decay=tuple(decays[1:]), u_ambient=self.params.ambient_temperature)
        self._ledger.sums.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_SUMS"])
        self._image("B_SMOKE_S_OUT", s, read=True)
        _gl.dispatch(self.ctx, prog, self.nx, self.ny)

    def _diffuse_density(self, dt):
        """(I - kappa dt L) rho = rho* from rho_0 = rho*, the scalars on the write side; the iterates
        rotate through the scalars' hat and their two spares (the read side holds the scalars the
        substep found, which a substep run again needs), and the result becomes the write side."""
        p = self.params
        a = p.density_diffusion * dt / p.cell_size ** 2
        coeffs, _ = ops.chebyshev_coefficients(a, DIFFUSION_TOLERANCE, p.diffusion_iterations)
        if not coeffs:
            return
        rhs = self._s.write
        prog = self._programs["diffuse_density"]

        def iterate(cur, prev, out, c1, c2):
            self._common(prog)
            _gl.set_uniforms(prog, u_a=a, u_c1=c1, u_c2=c2)
            for name, tex in (("B_SMOKE_S_HAT", rhs), ("B_SMOKE_S", cur), ("B_SMOKE_S_BACK", prev)):
                self._bind(name, tex)
            self._image("B_SMOKE_S_OUT", out)
            _gl.dispatch(self.ctx, prog, self.nx, self.ny)

        cur, spare = ops.chebyshev_iterations(rhs, [self._hat[2], *self._s_spare], coeffs, iterate)
        self._s = _gl.PingPong(self._s.read, cur)
        self._hat = (*self._hat[:2], spare[0])
        self._s_spare = (spare[1], rhs)
