"""SmokeGrid: gas, smoke and fire after Stam's Stable Fluids, on a staggered (MAC) grid, as GLSL
compute passes (shaders/smoke/, one file per pass named after the method that dispatches it).

One step(dt), every rate per second of simulated time so the frame rate does not
change the physics:
  _combust (fire only)   fuel burns into heat and smoke, hot gas cools (Nguyen, Fedkiw & Jensen 2002)
  _forces                vorticity confinement f = eps h (N x w), the vorticity w worked out there,
                         and buoyancy f = (-alpha density + beta (T - T_ambient)) up (Fedkiw, Stam &
                         Jensen 2001)
  _advect [_maccormack]  the velocity carries itself: semi-Lagrangian (Stam 1999) or MacCormack with
                         the min/max limiter (Selle et al. 2008)
  _diffuse               implicit viscosity (I - nu dt Laplacian) v = v*, Chebyshev iterations to a
                         stated error bound (DIFFUSION_TOLERANCE), no readback
  _divergence, solve, _subtract_gradient
                         exact projection: on the MAC grid D G == L, so the divergence left is the
                         pressure residual; multigrid V-cycles reach the tolerance in a few cycles
  _advect [_maccormack]  the scalars (density, temperature, fuel) move with the velocity just
                         projected, as in Stam's "Real-Time Fluid Dynamics for Games" (2003), whose
                         dens_step follows vel_step: a divergent velocity (a splat's impulse, the
                         forces) would compress or spread the gas, and its total with it; the last
                         pass also sums each scalar and books the ledger (hydro.smoke_ledger)
  _conserve              neither scheme keeps a total (bilinear sampling, MacCormack's clamp: in a
                         closed box a buoyant puff's density drifts by tens of percent in seconds),
                         so each total is put back where the ledger says (what was there, less what
                         left through open sides and the dissipation) by a global correction in
                         proportion to each cell's amount, phi += w |phi| (Rasch & Williamson 1990's
                         proportional fixer): one pass, no readback; it moves no gas, so the
                         advection's detail stays, and keeps density and fuel >= 0
  _diffuse_density       optional: d(rho)/dt = kappa Laplacian rho, implicit, as the viscosity, with
                         no flux out of the gas, so the total stays
Velocity lives on faces (vx on vertical faces, vy on horizontal ones), density / temperature / fuel at
cell centres; scalars are sampled over fluid cells only, so obstacles neither add nor remove gas.
hydro.reference.smoke.step is the same step in NumPy float64, from the float64 twin of every pass;
the scalars' passes are in hydro.smoke_scalars, state access and diagnostics in hydro.smoke_state.
"""
from __future__ import annotations

import math

import numpy as np

from . import _gl, _native, _owner
from . import _validate as check
from . import smoke_ops as ops
from .smoke_ledger import SCALAR_ROWS, Ledger
from .smoke_ops import DIFFUSION_TOLERANCE
from .smoke_params import SmokeParams
from .smoke_pressure import NORMS_DTYPE, Pressure, float_texture
from .smoke_scalars import SmokeScalars
from .smoke_state import SmokeState

RECORD_BYTES = 16              # max_speed.comp's record: speed, lift, fuel and a pad, float32
FIXED_SLACK = 1e-6             # with fixed_step: frame times that sum to whole steps but for rounding count as whole
MIN_CELLS = 4
# Cells the divergence pass gives an invocation, up its column: with a warm start it also sums that
# start's terms, and its last group folds one record per group (divergence.comp); 2 measured fastest
# (docs/benchmarks-log.md, "Where the smoke tuning values came from").
DIVERGENCE_ROWS = 2


class SmokeGrid(SmokeScalars, SmokeState, _owner.Simulation):
    """Incompressible gas (smoke, hot air, fire) on an (ny, nx) grid; y is up, row 0 the bottom side.

    ctx: a moderngl.Context with GL >= 4.3 (a game window's), or None for a private standalone one.
    shape: (ny, nx), each >= 4. The keywords are the fields of SmokeParams (units there):
    cell_size, viscosity, advection, vorticity, buoyancy=(alpha, beta), and opt-in ambient_temperature,
    pressure ("multigrid" | "jacobi" | "gauss-seidel"), pressure_iterations, pressure_tolerance,
    pressure_warm_start (multigrid from the last solve's q, scaled; default True),
    conserve (default True: the scalars keep the totals ledger() books), density_diffusion,
    fixed_step (step() runs whole steps of it, the same at any frame rate), max_cfl (each step split
    into substeps that carry the gas at most that many cells), density_dissipation,
    velocity_dissipation, fire, burn_rate, burn_heat, smoke_yield, cooling, and
    diffusion_iterations: the cap (default 500) on Chebyshev iterations of the viscosity solve, which
    otherwise runs until its error bound is below DIFFUSION_TOLERANCE (1e-5 of |v|); it needs about
    0.9 sqrt(nu dt) / cell_size + 13, and diffusion_error_bound reports what the last step reached.
    A new grid is at rest at ambient_temperature with no density or fuel; all sides start as
    free-slip walls; set_boundary() changes them.
    """

    _kind = "SmokeGrid"

    def __init__(self, ctx, shape, cell_size=1.0, viscosity=0.0, advection="maccormack", vorticity=0.0,
                 buoyancy=(0.0, 0.0), **options):
        self._released = True
        ny, nx = check.pair("shape", shape, "(ny, nx)", check.integer, low=MIN_CELLS, high=16384)
        try:
            self.params = SmokeParams(cell_size, viscosity, advection, vorticity, buoyancy, **options)
        except TypeError as exc:
            if "unexpected keyword" in str(exc):
                raise TypeError(f"SmokeGrid: {exc}") from None
            raise
        self.ny, self.nx = ny, nx
        owns_ctx = ctx is None
        if not owns_ctx:
            _gl.require_compute(ctx)
        self.ctx, self._owns_ctx = (_gl.create_context() if owns_ctx else ctx), owns_ctx
        self._created = []
        try:
            self._create(self.ctx)
        except BaseException:
            for obj in reversed(self._created):         # what was made before the failure, then the context
                obj.release()
            if owns_ctx:
                self.ctx.release()
            raise
        self._released = False
        self._centre_dirty = True
        self._diffusion_bound, self._diffusion_count = 0.0, 0
        # q[0] holds the last multigrid solve's q, the next one's warm start; False on a new grid and
        # after the velocity is set from outside (a new flow: nothing to start from)
        self._q_kept = False
        self._sim_time = 0.0
        self._iteration = 0
        self._owed = 0.0          # with fixed_step: the time step() was given and has not stepped yet
        # max_cfl's plan: the splats' pushes and buoyancy so far (each splat's largest |v|, its lift
        # bound), the records of the last two calls' ends in the ring, and the record read at the last
        # edit (a new grid: at rest, no gas), each with the _mark() of when it was taken
        self._pushed, self._lifted = 0.0, 0.0
        self._calls, self._ends = 0, []
        self._planned, self._sync_next = ((0.0, 0.0, 0.0), self._mark()), False
        self._seal()

    def _create(self, ctx):
        """Programs and GPU resources; each made object is listed in self._created as soon as it exists."""
        ny, nx, made = self.ny, self.nx, self._created

        def tex(size, comps, fill=0.0):
            made.append(float_texture(ctx, size, comps, fill))
            return made[-1]

        self._bc = ops.Bc()
        self._solid = np.zeros((ny, nx), bool)
        self._programs = {name: _gl.program(ctx, f"smoke/{name}.comp") for name in (
            "splat", "impulse", "combust", "forces", "diffuse", "diffuse_density", "subtract_gradient",
            "centre_velocity", "conserve", "max_speed")}
        self._programs["divergence"] = _gl.program(ctx, "smoke/divergence.comp", {"DIVERGENCE_ROWS": DIVERGENCE_ROWS})
        # advection in two passes of its own: the velocity's faces (before the projection) and the
        # cell scalars (after it), one file each with SCALARS choosing the fields; the scalars' last
        # pass also sums them and books the ledger (TOTALS), MacCormack's first one (its hat) does not
        last = "advect" if self.params.advection == "semi-lagrangian" else "maccormack"
        for name, scalars, totals in (("advect", False, False), ("maccormack", False, False),
                                      ("advect", True, False), (last, True, True)):
            key = name + "_scalars" * scalars + "_totals" * totals
            defines = {"SCALARS": scalars, "TOTALS": totals, **({"SCALAR_ROWS": SCALAR_ROWS} if totals else {})}
            self._programs[key] = _gl.program(ctx, f"smoke/{name}.comp", defines)
        # the passes that see the boundaries, found once: a regex over the source per dispatch would
        # cost more Python than the dispatch itself
        self._with_bc = {prog for prog in self._programs.values() if _gl.declares(prog, "u_bc_kind")}
        fx, fy, cells = (nx + 1, ny), (nx, ny + 1), (nx, ny)
        ambient = (0.0, self.params.ambient_temperature, 0.0, 0.0)     # a new grid: gas at rest, ambient
        self._vx = _gl.PingPong(tex(fx, 1), tex(fx, 1))
        self._vy = _gl.PingPong(tex(fy, 1), tex(fy, 1))
        self._s = _gl.PingPong(tex(cells, 4, ambient), tex(cells, 4, ambient))
        self._hat = (tex(fx, 1), tex(fy, 1), tex(cells, 4, ambient))
        self._spare = (tex(fx, 1), tex(fy, 1))      # face textures: the viscosity solve's third iterate
        # the density diffusion's iterates, beside the scalars' hat
        self._s_spare = (tex(cells, 4), tex(cells, 4)) if self.params.density_diffusion > 0.0 else ()
        # splats' velocity impulses since the last step (impulse.comp), and the box of faces they cover
        self._impulse = (tex(fx, 1), tex(fy, 1))
        self._impulse_box = None
        self._impulse_speed = 0.0     # a bound on the pending impulse's face speed: the sum of its splats' |v|
        # max_speed.comp's record (speed, lift, fuel: floats' bits), and the fenced ring of the records
        # queued at the ends of step() calls (None where GL cannot map it: the plan then reads, waiting)
        self._speed = ctx.buffer(reserve=RECORD_BYTES)
        made.append(self._speed)
        planned = self.params.max_cfl is not None
        self._speed_ring = _native.FencedReadback.create(ctx, RECORD_BYTES) if planned else None
        if self._speed_ring is not None:
            made.append(self._speed_ring)
        self._solid_tex = tex(cells, 1)
        self._centre = tex(cells, 2)
        self._pressure = Pressure(ctx, (ny, nx))
        made.append(self._pressure)
        self._pressure.set_operator(self._solid, self._bc)
        self._div_norms = ctx.buffer(reserve=NORMS_DTYPE.itemsize)
        made.append(self._div_norms)
        self._ledger = Ledger(ctx, (ny, nx))
        made.append(self._ledger)

    # ------------------------------------------------------------------------------------ helpers

    def _common(self, prog, size=None):
        _gl.set_uniforms(prog, u_size=size or (self.nx, self.ny))
        if prog in self._with_bc:
            _gl.set_uniforms(prog, u_bc_kind=tuple(int(k) for k in self._bc.kind),
                             u_bc_tangent=tuple(float(t) for t in self._bc.tangent))
            self._solid_tex.use(_gl.BINDINGS["B_SMOKE_SOLID"])

    def _bind(self, name, tex):
        tex.use(_gl.BINDINGS[name])

    def _image(self, name, tex, read=False):
        tex.bind_to_image(_gl.BINDINGS[name], read=read, write=True)

    # ------------------------------------------------------------------------------------- splats

    def splat(self, x, y, radius, velocity=(0.0, 0.0), density=1.0, temperature=0.0, fuel=0.0) -> None:
        """Add a smooth round brush w = (1 - (d/radius)^2)^2 around grid point (x, y) (cell [y, x]'s
        centre is (x, y)): velocity (world units/s) is added to the faces, density (>= 0), temperature
        (any sign: heat or cold) and fuel (>= 0) to the cells, each times w, and the amounts are
        booked in ledger() under "splats". An impulse, added once at the time of the call, whatever
        dt the next step takes: a kick (a blast, a mouse flick) is one call; a push that lasts (a fan,
        a chimney) is a rate, so a game calls it each frame with its amounts and velocity times the
        frame's dt, and the same seconds of game time add the same smoke and momentum at any frame
        rate. The velocity is held apart until the next step has carried the velocity, which then
        takes it before the projection (step; velocity and face_velocity show it meanwhile, and
        setting either drops it); with fixed_step, calls between two steps add up. Walls and solid
        cells are left alone. Every value must be a finite float32. A splat only adds, so it does not wait
        for the last step's residual check (step). A brush wholly outside the grid adds nothing and
        raises nothing (a stirring cursor may leave the window; the water grids' brushes, which book
        exact volumes, raise instead)."""
        self._alive(settle=False)
        x, y = check.real32("x", x), check.real32("y", y)
        radius = check.real32("radius", radius, low=0.0, low_open=True)
        vel = check.pair("velocity", velocity, "(vx, vy)", check.real32)
        amounts = (check.real32("density", density, low=0.0), check.real32("temperature", temperature),
                   check.real32("fuel", fuel, low=0.0))
        x0, y0 = max(math.floor(x - radius) - 1, 0), max(math.floor(y - radius) - 1, 0)
        x1, y1 = min(math.ceil(x + radius) + 1, self.nx), min(math.ceil(y + radius) + 1, self.ny)
        if x1 < x0 or y1 < y0:
            return                               # the brush lies wholly outside the grid
        prog = self._programs["splat"]
        self._common(prog)
        _gl.set_uniforms(prog, u_origin=(x0, y0), u_center=(x, y), u_radius=radius, u_velocity=vel,
                         u_amounts=amounts)
        # the velocity goes to the pending impulse, which the next step adds once it has carried the
        # velocity (impulse.comp); the amounts to the scalars
        self._image("B_SMOKE_VX_OUT", self._impulse[0], read=True)
        self._image("B_SMOKE_VY_OUT", self._impulse[1], read=True)
        self._image("B_SMOKE_S_OUT", self._s.read, read=True)
        _gl.dispatch(self.ctx, prog, x1 - x0 + 1, y1 - y0 + 1)
        if amounts != (0.0, 0.0, 0.0):
            area = self.params.cell_size ** 2
            self._ledger.book("splats", np.array(amounts) * ops.brush_sum(self._solid, x, y, radius) * area)
        self._lifted += self._lift_bound(*amounts)
        if vel != (0.0, 0.0):
            push = max(abs(vel[0]), abs(vel[1]))      # the brush's weight is at most 1
            self._impulse_speed += push
            self._pushed += push
            box = self._impulse_box or (x0, y0, x1, y1)
            self._impulse_box = (min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1))

    # ------------------------------------------------------------------------------------ stepping

    def step(self, dt, substeps=1) -> None:
        """Advance by dt seconds of simulated time in `substeps` equal steps; with fixed_step, by the
        whole steps of fixed_step that the time given so far allows, each in `substeps`, the rest
        carried to the next call, so any frame rate runs the same steps (a single call may run none,
        or many: a game clamps a long frame's dt); with max_cfl, each step in at least the substeps
        that carry the gas at most max_cfl cells each, planned from the record of the call before the
        previous one (_plan_speed: no wait on the last call). A substep: combustion
        (fire), forces, the velocity's advection (by itself), the velocity the splats added since the
        last step (first substep only), viscosity, the projection, then the scalars' advection by the
        velocity just projected, so the splats' impulses and the forces, added since the last
        projection, never carry the gas (Stam 2003's order, with one pressure solve a substep; the
        splats' impulses after the advection as in Bridson 2015, ch. 2, so a projected velocity is
        what carries itself: MacCormack grew spikes under a splat pushing every frame otherwise).

        No readback, except with pressure_tolerance set (multigrid): the residual after the cycle count
        the last projection needed, and after each cycle beyond it while it is above the tolerance
        (hydro.smoke_pressure): one small sync per projection while the scene changes slowly. The last projection's check is
        not waited for here: the next step waits for it once its own forces and velocity advection are
        queued (and its projection and scalar advection, where the last solve met its tolerance with
        a margin), and so does the first call that reads the velocity or the solve's figures (splats
        and drawing the density do not); whatever waits sees a velocity projected to the tolerance.
        The scalars do not wait: they move with the velocity the solve's first batch of cycles left,
        and where the check then asks for more cycles only the velocity is corrected (a batch falls
        short where the scene changed faster than the last solve predicted; its divergence is then
        above the tolerance by about what the missing cycles would have cut, ~30x each). With max_cfl
        the plan reads a ring record two calls old, nearly always done (waited for if not), and after
        an edit (the setters, obstacles, boundaries, project()) the state as it is, waiting."""
        self._alive(settle=False)
        dt = check.real32("dt", dt, low=0.0, low_open=True)
        substeps = check.integer("substeps", substeps, low=1, high=10_000)
        p = self.params
        owed = self._owed + dt
        if p.fixed_step is None:
            steps, each = 1, dt
        else:
            steps, each = math.floor(owed / p.fixed_step + FIXED_SLACK), p.fixed_step
        plan = p.max_cfl is not None and steps > 0
        if plan:
            speed = self._plan_speed(steps * each)
            substeps = max(substeps, ops.cfl_substeps(speed, each, p.cell_size, p.max_cfl))
        h = each / substeps
        pr = self._pressure
        # submit the caller's splats, then the forces and the advection as soon as each is queued (a
        # substep after the first starts right after the last one's flush)
        _native.flush(self.ctx)
        for k in range(steps * substeps):
            # The last projection's check, if still queued, is waited for only once this substep's
            # forces and velocity advection are queued, and where that solve met its tolerance with a
            # margin (Pressure.run_ahead) its projection and scalar advection too, so the GPU has work
            # queued behind the record (a wait earlier would leave it idle while Python queued the
            # rest). They are computed from the velocity as that projection left it, which is kept
            # (_spare) until the check says whether it holds; where it does not (a cycle short), that
            # solve is finished and they are computed again from the velocity corrected. With
            # viscosity the viscosity solve's scratch is that texture: it waits first.
            ahead = pr.pending is not None and p.viscosity == 0.0
            if not ahead:
                self._settle()
            if p.fire:
                self._combust(h)      # scalars only, in place: what the check decides does not touch it
            if ahead:
                self._substep_ahead(h, projected=pr.run_ahead())
            else:
                self._pre_projection(h)
                self._project()
                self._advect_scalars(h)
            if self._impulse_box is not None:   # a substep run ahead stands: its impulse is in for good
                self._impulse_pass(add=False)
            self._ledger.commit()               # and so do its ledger entries
            _native.flush(self.ctx)  # the GPU starts on this substep's last passes while Python returns
            self._iteration += 1
            if k % substeps == substeps - 1:    # a whole step of `each` has run
                self._sim_time += each
                owed -= each
                self._centre_dirty = True
        if p.fixed_step is not None:
            self._owed = max(owed, 0.0)
        if plan:
            self._calls += 1
            self._push_record()

    def _pre_projection(self, h, keep=False):
        """Forces, the velocity's advection and viscosity of a substep of h. With `keep` the velocity
        they start from is left untouched: advection writes into _spare, which then holds the velocity
        read before."""
        p = self.params
        start = (self._vx.read, self._vy.read)
        if p.vorticity > 0.0 or p.buoyancy != (0.0, 0.0):
            self._forces(h)
            self._vx.swap()
            self._vy.swap()
            _native.flush(self.ctx)
        self._advect_velocity(h, keep=start if keep else None)
        if self._impulse_box is not None:
            # kept where the substep runs ahead and may run again; else in for good, zeroed as added
            self._impulse_pass(clear=not keep)
        _native.flush(self.ctx)
        if p.viscosity > 0.0:
            self._diffuse_all(h)

    def _impulse_pass(self, add=True, clear=True):
        """Over the box the splats covered (impulse.comp): with `add`, add their pending impulse to the
        velocity on the read side (after its advection); with `clear`, zero it and forget its box. A
        substep run ahead of the last check keeps it until the substep stands, so one run again
        (_substep_ahead) or undone adds it again."""
        x0, y0, x1, y1 = self._impulse_box
        prog = self._programs["impulse"]
        self._common(prog)
        _gl.set_uniforms(prog, u_origin=(x0, y0), u_add=add, u_clear=clear)
        self._image("B_SMOKE_VX_OUT", self._vx.read, read=True)
        self._image("B_SMOKE_VY_OUT", self._vy.read, read=True)
        self._image("B_SMOKE_IMPULSE_X", self._impulse[0], read=True)
        self._image("B_SMOKE_IMPULSE_Y", self._impulse[1], read=True)
        _gl.dispatch(self.ctx, prog, x1 - x0 + 1, y1 - y0 + 1)
        if clear:
            self._impulse_box, self._impulse_speed = None, 0.0

    def _substep_ahead(self, h, projected):
        """A substep whose forces and velocity advection (with `projected`, its projection and scalar
        advection too, the check set aside) run ahead of the last projection's check (step): wait for
        the check; where it holds, that is all (without `projected`, the projection and the scalars'
        advection follow). Where the tolerance asks for more cycles, drop this substep's projection,
        finish that solve, correct the velocity it left (kept in _spare) as _settle does, put the
        scalars back to what this substep found, and run the forces, the advection and the projection
        again."""
        pr = self._pressure
        found = (self._vx.read, self._vx.write, self._vy.read, self._vy.write, self._spare, self._s.read)
        try:
            self._pre_projection(h, keep=True)
            if projected:
                self._project(aside=True)
                self._advect_scalars(h)
            n = pr.read_aside() if projected else pr.read_pending()
        except BaseException:
            # interrupted while waiting (a KeyboardInterrupt in the poll), or a pass failed: the check
            # stays queued, and the solve, the velocity and the scalars go back to what this substep
            # found (with fire, its burn stays applied); no time has passed
            if pr.aside is not None:
                pr.abandon()
            self._restore(found)
            raise
        if not pr.short(pr.aside if projected else pr.pending, n):
            if projected:
                pr.finish_aside(n)
            else:
                pr.finish(n)
                self._project()
                self._advect_scalars(h)
            return
        if projected:
            pr.abandon()
        try:
            pr.finish(n)
        except BaseException:
            # interrupted in the cycles the check asked for: nothing is pending any more, so keep what
            # they did, subtracted from the velocity this substep found (its projection then stays above
            # the tolerance until the next one), and undo the substep; no time has passed
            self._restore(found)
            if pr.extending:
                pr.extending = False
                self._subtract_delta()
            raise
        vx, vy = self._vx, self._vy
        free = (vx.write, vy.write)                 # what advection (and the projection) wrote: spent
        self._subtract_gradient(self._spare, pr.solution, free, q_before=pr.q_before)
        self._vx, self._vy = _gl.PingPong(free[0], vx.read), _gl.PingPong(free[1], vy.read)
        if self._s.read is not found[5]:
            self._s.swap()                          # the scalars as this substep found them
        self._pre_projection(h)
        self._project()
        self._advect_scalars(h)

    def _restore(self, found):
        """Put the velocity (and _spare) and the scalars back to `found`, the textures a substep began
        with (_substep_ahead): what it wrote since went to the others."""
        vx_read, vx_write, vy_read, vy_write, self._spare, s_read = found
        self._vx, self._vy = _gl.PingPong(vx_read, vx_write), _gl.PingPong(vy_read, vy_write)
        if self._s.read is not s_read:
            self._s.swap()
        self._centre_dirty = True

    # ------------------------------------------------------------------------- max_cfl's plan

    def _lift_bound(self, density, temperature, fuel) -> float:
        """How much a splat of these amounts can raise the largest |buoyancy|; with fire, its fuel's
        smoke and heat too."""
        p = self.params
        alpha, beta = (abs(float(b)) for b in p.buoyancy)
        burned = (alpha * p.smoke_yield + beta * p.burn_heat) * fuel if p.fire else 0.0
        return alpha * density + beta * abs(temperature) + burned

    def _mark(self):
        """When a record is taken: (calls, sim_time, the splats' pushes already in the velocity, their
        lift so far): the plan adds what came after."""
        return self._calls, self._sim_time, self._pushed - self._impulse_speed, self._lifted

    def _queue_record(self):
        """Queue max_speed.comp: the largest face speed, |buoyancy| and fuel into self._speed, of the
        velocity as the passes queued so far leave it (splats' pending pushes not included)."""
        prog = self._programs["max_speed"]
        self._common(prog)
        _gl.set_uniforms(prog, u_buoyancy=tuple(map(float, self.params.buoyancy)),
                         u_ambient=self.params.ambient_temperature)
        self._speed.write(bytes(RECORD_BYTES))
        self._speed.bind_to_storage_buffer(_gl.BINDINGS["B_SMOKE_SPEED"])
        self._bind("B_SMOKE_VX", self._vx.read)
        self._bind("B_SMOKE_VY", self._vy.read)
        self._bind("B_SMOKE_S", self._s.read)
        _gl.dispatch(self.ctx, prog, self.nx + 1, self.ny + 1)

    @staticmethod
    def _unpack(data):
        return tuple(float(v) for v in np.frombuffer(data, np.float32)[:3])

    def _read_record(self):
        """The record of the state as it is now, read back (waits for every pass queued)."""
        self._queue_record()
        return self._unpack(self._speed.read())

    def _push_record(self):
        """At the end of a call that stepped: queue its record into the ring, without waiting."""
        if self._speed_ring is None:
            return
        self._queue_record()
        self._speed_ring.push(self._speed, self._calls)
        self._ends = (self._ends + [(self._calls, self._mark())])[-2:]

    def _planning_record(self):
        """(record, mark) a call plans from: after an edit, the state as it is (waiting); else the newer
        of that and the record queued at the end of the call before the previous one, from the ring
        (nearly always done by now, waited for if not). Never the previous call's, whose readiness
        depends on the GPU's timing; without a ring, the state now, read."""
        ring = self._speed_ring
        if self._sync_next or (ring is None and self._planned[1][0] != self._calls):
            self._sync_next = False
            self._planned = (self._read_record(), self._mark())
        best = self._planned
        if ring is not None and len(self._ends) == 2 and self._ends[0][1][0] > best[1][0]:
            seq, mark = self._ends[0]
            best = (self._unpack(ring.record(seq)), mark)
        return best

    def _plan_speed(self, seconds) -> float:
        """A bound on the face speed over a call of `seconds` (smoke_ops.planned_speed): the planning
        record grown by the splats since it, its buoyancy (with fire, what its fuel can add) and the
        confinement, over the time from it to the end of this call."""
        p = self.params
        (speed, lift, fuel), (_, then, pushed, lifted) = self._planning_record()
        lift += self._lifted - lifted + (self._lift_bound(0.0, 0.0, fuel) if p.fire else 0.0)
        return ops.planned_speed(speed, self._pushed - pushed, lift, self._sim_time - then + seconds, p.vorticity)

    def max_speed(self) -> float:
        """The largest |velocity| over the faces, world units/s, of the velocity projected to the
        tolerance (splats' pushes since the last step not included), read back."""
        self._alive()
        return self._read_record()[0]

    def _forces(self, dt):
        """read -> write for vx, vy (the caller swaps)."""
        p = self.params
        prog = self._programs["forces"]
        self._common(prog)
        _gl.set_uniforms(prog, u_dt=dt, u_eps_h=p.vorticity * p.cell_size, u_inv_h=1.0 / p.cell_size,
                         u_buoyancy=tuple(map(float, p.buoyancy)), u_ambient=p.ambient_temperature)
        self._bind("B_SMOKE_VX", self._vx.read)
        self._bind("B_SMOKE_VY", self._vy.read)
        self._bind("B_SMOKE_S", self._s.read)
        self._image("B_SMOKE_VX_OUT", self._vx.write)
        self._image("B_SMOKE_VY_OUT", self._vy.write)
        _gl.dispatch(self.ctx, prog, self.nx + 1, self.ny + 1)

    def _decays(self, dt):
        p = self.params
        return (math.exp(-p.velocity_dissipation * dt), math.exp(-p.density_dissipation * dt), 1.0, 1.0)

    # The fields of an advection pass, the velocity's faces or the cell scalars (SCALARS in advect.comp
    # and maccormack.comp): the bindings of its source (or hat) and of its output
    _FIELDS = {False: (("B_SMOKE_VX_HAT", "B_SMOKE_VY_HAT"), ("B_SMOKE_VX_OUT", "B_SMOKE_VY_OUT")),
               True: (("B_SMOKE_S_HAT",), ("B_SMOKE_S_OUT",))}

    def _advection_pass(self, name, vel, src, out, dt_h, decay, phi=None, totals=False):
        """Dispatch advect.comp or maccormack.comp (`name`) through velocity `vel` (vx, vy): on the
        velocity's faces where `src` and `out` are (vx, vy) textures, on the cell scalars where they
        are (s,); with `totals` (the scalars' last pass) their sums and the ledger's entries too."""
        scalars = len(out) == 1
        names = self._FIELDS[scalars]
        prog = self._programs[name + "_scalars" * scalars + "_totals" * totals]
        self._common(prog)
        _gl.set_uniforms(prog, u_dt_h=dt_h, u_decay=decay, u_ambient=self.params.ambient_temperature)
        if totals:
            self._ledger.bind(prog, booking=True)
        self._bind("B_SMOKE_VX", vel[0])
        self._bind("B_SMOKE_VY", vel[1])
        if scalars and phi is not None:
            self._bind("B_SMOKE_S", phi[0])       # MacCormack's phi_n (the velocity's is `vel` itself)
        for binding, tex in zip(names[0], src):
            self._bind(binding, tex)
        for binding, tex in zip(names[1], out):
            self._image(binding, tex)
        rows = -(-self.ny // SCALAR_ROWS) if totals else self.ny + (not scalars)
        _gl.dispatch(self.ctx, prog, self.nx + (not scalars), rows)

    def _advect(self, vel, src, out, dt_h, decay, totals=False):
        """One semi-Lagrangian pass: fields `src` through velocity `vel` (vx, vy) into `out`: the
        velocity's faces where `src` and `out` are (vx, vy) textures, the cell scalars where they are
        (s,); `totals` as in _advection_pass."""
        self._advection_pass("advect", vel, src, out, dt_h, decay, totals=totals)

    def _maccormack(self, vel, phi, hat, out, dt_h, decay, totals=False):
        """The MacCormack correction of `phi` (phi_n: the velocity `vel` itself, or (s,) the scalars it
        carries) from `hat` = A(phi_n) into `out`."""
        self._advection_pass("maccormack", vel, hat, out, dt_h, decay, phi=phi, totals=totals)

    def _advect_velocity(self, dt, keep=None):
        """The velocity carried by itself, from the read sides into the write sides, then swapped. With
        `keep` (the substep's first velocity textures, which forces may have swapped to the write side)
        it goes into _spare instead, and _spare takes `keep`, untouched."""
        dt_h = dt / self.params.cell_size
        cur = (self._vx.read, self._vy.read)
        out = self._spare if keep is not None else (self._vx.write, self._vy.write)
        if self.params.advection == "semi-lagrangian":
            self._advect(cur, cur, out, dt_h, self._decays(dt))
        else:
            self._advect(cur, cur, self._hat[:2], dt_h, (1.0,) * 4)
            self._maccormack(cur, cur, self._hat[:2], out, dt_h, self._decays(dt))
        if keep is not None:
            others = [(pp.read if pp.write is t else pp.write) for pp, t in zip((self._vx, self._vy), keep)]
            self._vx, self._vy = _gl.PingPong(out[0], others[0]), _gl.PingPong(out[1], others[1])
            self._spare = keep
        else:
            self._vx.swap()
            self._vy.swap()

    def _diffusion_plan(self, dt):
        """Chebyshev coefficients of the viscosity solve for a step of dt, a = nu dt / h^2, and the
        error bound they reach (hydro.smoke_ops.chebyshev_coefficients)."""
        a = self.params.viscosity * dt / self.params.cell_size ** 2
        return (a, *ops.chebyshev_coefficients(a, DIFFUSION_TOLERANCE, self.params.diffusion_iterations))

    def _diffuse(self, rhs, cur, prev, out, a, c1, c2):
        """One Chebyshev iteration: out = cur + c1 (cur - prev) + c2 (rhs - A cur), both components."""
        prog = self._programs["diffuse"]
        self._common(prog)
        _gl.set_uniforms(prog, u_a=a, u_c1=c1, u_c2=c2)
        for names, texs in ((("B_SMOKE_VX_HAT", "B_SMOKE_VY_HAT"), rhs), (("B_SMOKE_VX", "B_SMOKE_VY"), cur),
                            (("B_SMOKE_VX_BACK", "B_SMOKE_VY_BACK"), prev)):
            for name, tex in zip(names, texs):
                self._bind(name, tex)
        self._image("B_SMOKE_VX_OUT", out[0])
        self._image("B_SMOKE_VY_OUT", out[1])
        _gl.dispatch(self.ctx, prog, self.nx + 1, self.ny + 1)

    def _diffuse_all(self, dt):
        """Solve (I - nu dt Laplacian) v = v* from v_0 = v* (v* stays in the read textures). The
        iterates rotate through three free textures per component (the write side and the face
        textures of _hat and _spare, idle after advection); the result becomes the read side."""
        a, coeffs, bound = self._diffusion_plan(dt)
        self._diffusion_bound, self._diffusion_count = bound, len(coeffs)
        if not coeffs:
            return
        rhs = (self._vx.read, self._vy.read)
        cur, spare = ops.chebyshev_iterations(rhs, [(self._vx.write, self._vy.write), self._hat[:2], self._spare], coeffs,
                                     lambda cur, prev, out, c1, c2: self._diffuse(rhs, cur, prev, out, a, c1, c2))
        self._vx, self._vy = _gl.PingPong(cur[0], rhs[0]), _gl.PingPong(cur[1], rhs[1])
        self._hat = (*spare[0], self._hat[2])
        self._spare = spare[1]

    def _divergence(self, vel, rhs, q, keep_q=False, warm_sums=False):
        """rhs = D v; q = 0, or with keep_q the last solve's q (Pressure.q_last; 0 in solid cells) for a
        warm start, and with warm_sums that warm start's sums queued too (Pressure.bind_warm_sums)."""
        prog = self._programs["divergence"]
        self._common(prog)
        _gl.set_uniforms(prog, u_keep_q=int(keep_q), u_warm_sums=int(warm_sums))
        if warm_sums:
            self._pressure.bind_warm_sums()
        elif keep_q:
            self._bind("B_SMOKE_Q", self._pressure.q_last)
        self._bind("B_SMOKE_VX", vel[0])
        self._bind("B_SMOKE_VY", vel[1])
        self._image("B_SMOKE_RHS_OUT", rhs)
        self._image("B_SMOKE_Q_OUT", q)
        _gl.dispatch(self.ctx, prog, self.nx, -(-self.ny // DIVERGENCE_ROWS))

    def _subtract_gradient(self, vel, q, out, q_before=None):
        """out = vel - G q; with q_before, out = vel - G (q - q_before)."""
        prog = self._programs["subtract_gradient"]
        self._common(prog)
        _gl.set_uniforms(prog, u_delta=int(q_before is not None))
        self._bind("B_SMOKE_VX", vel[0])
        self._bind("B_SMOKE_VY", vel[1])
        self._bind("B_SMOKE_Q", q)
        if q_before is not None:
            self._bind("B_SMOKE_Q_BEFORE", q_before)
        self._image("B_SMOKE_VX_OUT", out[0])
        self._image("B_SMOKE_VY_OUT", out[1])
        _gl.dispatch(self.ctx, prog, self.nx + 1, self.ny + 1)

    def _project(self, aside=False):
        """Divergence, pressure solve, gradient subtraction. Multigrid with pressure_warm_start starts
        from the last projection's q, scaled by the alpha that minimises the start's residual (its
        sums taken by the divergence pass: that absorbs a change of dt, as q = p dt / (rho h) grows
        with the step, and drops a q unrelated to this flow); the first solve, and the first after
        the velocity was set from outside (see _q_kept), start from q = 0, as do jacobi and
        gauss-seidel. With `aside` the pending check is set aside first (Pressure.set_aside)."""
        p, pr = self.params, self._pressure
        multigrid = p.pressure == "multigrid"
        warm = multigrid and p.pressure_warm_start and self._q_kept
        pr.begin()
        if aside:
            pr.set_aside()    # the pending check, whose solve's q and right-hand side begin() kept aside
        self._divergence((self._vx.read, self._vy.read), pr.rhs[0], pr.q[0], keep_q=warm, warm_sums=warm)
        q = pr.solve(p.pressure, p.iterations, p.pressure_tolerance if multigrid else None, warm=warm)
        self._q_kept = multigrid
        self._subtract_gradient((self._vx.read, self._vy.read), q, (self._vx.write, self._vy.write))
        self._vx.swap()
        self._vy.swap()

    def _settle(self):
        """Finish a projection whose residual check step() left queued (Pressure.finish): where the
        tolerance asked for more cycles than the batch, subtract the gradient of what they added to q
        from the velocity (the projection is linear in q, and splats since only added to it). Every
        method that reads the velocity, edits anything but by a splat, or reports on the solve calls
        this first (through _alive), so what it sees was projected to the tolerance; drawing the
        density does not wait for it."""
        pr = self._pressure
        try:
            extended = pr.finish()
        except BaseException:
            if pr.extending:      # interrupted in those cycles: keep what they did (above the tolerance)
                pr.extending = False
                self._subtract_delta()
            raise
        if extended:
            self._subtract_delta()

    def _subtract_delta(self):
        """The velocity less the gradient of what the last solve's later cycles added to q (q - q_before)."""
        pr = self._pressure
        self._subtract_gradient((self._vx.read, self._vy.read), pr.solution, (self._vx.write, self._vy.write),
                                q_before=pr.q_before)
        self._vx.swap()
        self._vy.swap()
        self._centre_dirty = True

    def _alive(self, settle=True):
        super()._alive()
        if settle:
            self._settle()

    def project(self) -> None:
        """Run the projection alone on the current velocity (as at the end of step()), its residual
        check included; splats' pushes since the last step are part of it (added first)."""
        self._alive()
        if self._impulse_box is not None:
            self._impulse_pass()
        self._project()
        self._settle()
        self._centre_dirty = True
        self._sync_next = True          # max_cfl plans from the velocity projected here

    # ----------------------------------------------------------------------------------- lifetime

    def _gpu_objects(self):
        return (self._vx, self._vy, self._s, *self._hat, *self._spare, *self._s_spare, *self._impulse, self._solid_tex,
                self._centre, self._pressure, self._div_norms, self._ledger, self._speed,
                *([self._speed_ring] if self._speed_ring is not None else []))

    def __repr__(self):
        state = "released" if self._released else f"t={self.sim_time:.3f}s"
        return f"SmokeGrid({self.nx}x{self.ny}, cell_size={self.params.cell_size}, {state})"

