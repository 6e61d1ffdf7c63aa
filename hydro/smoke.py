"""SmokeGrid: gas, smoke and fire after Stam's Stable Fluids, on a staggered (MAC) grid, as GLSL
compute passes (shaders/smoke/, one file per pass named after the method that dispatches it).

One step(dt) (DESIGN section 5), every rate per second of simulated time so the frame rate does not
change the physics:
  _combust (fire only)   fuel burns into heat and smoke, hot gas cools (Nguyen, Fedkiw & Jensen 2002)
  _curl, _forces         vorticity confinement f = eps h (N x w) and buoyancy
                         f = (-alpha density + beta (T - T_ambient)) up (Fedkiw, Stam & Jensen 2001)
  _advect [_maccormack]  semi-Lagrangian (Stam 1999) or MacCormack with the min/max limiter
                         (Selle et al. 2008) for the velocity and all scalars
  _diffuse               implicit viscosity (I - nu dt Laplacian) v = v*, red-black Gauss-Seidel
  _divergence, solve, _subtract_gradient
                         exact projection: on the MAC grid D G == L, so the divergence left is the
                         pressure residual; multigrid V-cycles reach the tolerance in a few cycles
Velocity lives on faces (vx on vertical faces, vy on horizontal ones), density / temperature / fuel at
cell centres. The NumPy float64 twin of every pass is hydro.reference.smoke.
"""
from __future__ import annotations

import math

import numpy as np

from . import _gl
from . import _validate as check
from .reference import smoke as ref
from .smoke_params import SmokeParams
from .smoke_pressure import NORMS_DTYPE, Pressure

NEAREST = (0x2600, 0x2600)
DIFFUSION_TOLERANCE = 1e-5     # the viscosity solve runs until its error factor is below this
MIN_CELLS = 4


def _tex(ctx, size, comps):
    tex = ctx.texture(size, comps, dtype="f4")
    tex.filter = NEAREST
    tex.repeat_x = tex.repeat_y = False
    tex.write(np.zeros(size[0] * size[1] * comps, np.float32).tobytes())
    return tex


class SmokeGrid(_gl.Owner):
    """Incompressible gas (smoke, hot air, fire) on an (ny, nx) grid; y is up, row 0 the bottom side.

    ctx: a moderngl.Context with GL >= 4.3 (a game window's), or None for a private standalone one.
    shape: (ny, nx), each >= 4. The keywords are the fields of SmokeParams (units there):
    cell_size, viscosity, advection, vorticity, buoyancy=(alpha, beta), and opt-in ambient_temperature,
    pressure ("multigrid" | "jacobi" | "gauss-seidel"), pressure_iterations, pressure_tolerance,
    density_dissipation, velocity_dissipation, fire, burn_rate, burn_heat, smoke_yield, cooling.
    All sides start as free-slip walls; set_boundary() changes them.
    """

    _kind = "SmokeGrid"

    def __init__(self, ctx, shape, cell_size=1.0, viscosity=0.0, advection="maccormack", vorticity=0.0,
                 buoyancy=(0.0, 0.0), **options):
        self._released = True
        if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__") or len(shape) != 2:
            raise TypeError(f"shape: expected (ny, nx), got {shape!r}")
        ny = check.integer("shape[0]", shape[0], low=MIN_CELLS, high=16384)
        nx = check.integer("shape[1]", shape[1], low=MIN_CELLS, high=16384)
        try:
            self.params = SmokeParams(cell_size, viscosity, advection, vorticity, tuple(buoyancy)
                                      if hasattr(buoyancy, "__len__") and not isinstance(buoyancy, str)
                                      else buoyancy, **options)
        except TypeError as exc:
            if "unexpected keyword" in str(exc):
                raise TypeError(f"SmokeGrid: {exc}") from None
            raise
        self.ny, self.nx = ny, nx
        owns_ctx = ctx is None
        ctx = _gl.create_context() if owns_ctx else ctx
        _gl.require_compute(ctx)
        self.ctx, self._owns_ctx = ctx, owns_ctx
        self._bc = ref.Bc()
        self._solid = np.zeros((ny, nx), bool)
        self._programs = {name: _gl.program(ctx, f"smoke/{name}.comp") for name in (
            "splat", "combust", "curl", "forces", "advect", "maccormack", "diffuse", "divergence",
            "subtract_gradient", "centre_velocity")}
        fx, fy, cells = (nx + 1, ny), (nx, ny + 1), (nx, ny)
        self._vx = _gl.PingPong(_tex(ctx, fx, 1), _tex(ctx, fx, 1))
        self._vy = _gl.PingPong(_tex(ctx, fy, 1), _tex(ctx, fy, 1))
        self._s = _gl.PingPong(_tex(ctx, cells, 4), _tex(ctx, cells, 4))
        self._hat = (_tex(ctx, fx, 1), _tex(ctx, fy, 1), _tex(ctx, cells, 4))
        self._back = (_tex(ctx, fx, 1), _tex(ctx, fy, 1), _tex(ctx, cells, 4))
        self._solid_tex = _tex(ctx, cells, 1)
        self._curl_tex = _tex(ctx, cells, 1)
        self._centre = _tex(ctx, cells, 2)
        self._pressure = Pressure(ctx, (ny, nx))
        self._pressure.set_operator(self._solid, self._bc)
        self._div_norms = ctx.buffer(reserve=NORMS_DTYPE.itemsize)
        self._released = False
        self._centre_dirty = True
        self.sim_time = 0.0
        self.iteration = 0

    # ------------------------------------------------------------------------------------ helpers

    @property
    def shape(self) -> tuple[int, int]:
        return (self.ny, self.nx)

    def _common(self, prog, size=None):
        _gl.set_uniforms(prog, u_size=size or (self.nx, self.ny))
        if "u_bc_kind" in prog.extra:
            _gl.set_uniforms(prog, u_bc_kind=tuple(int(k) for k in self._bc.kind),
                             u_bc_tangent=tuple(float(t) for t in self._bc.tangent))
            self._solid_tex.use(_gl.BINDINGS["B_SMOKE_SOLID"])

    @staticmethod
    def _read_tex(tex, shape, comps=1) -> np.ndarray:
        arr = np.frombuffer(tex.read(), np.float32)
        return arr.reshape(shape + ((comps,) if comps > 1 else ())).copy()

    def _faces(self):
        return (self._read_tex(self._vx.read, (self.ny, self.nx + 1)),
                self._read_tex(self._vy.read, (self.ny + 1, self.nx)))

    def _scalars(self):
        return self._read_tex(self._s.read, (self.ny, self.nx), 4)

    def _bind(self, name, tex):
        tex.use(_gl.BINDINGS[name])

    def _image(self, name, tex, read=False):
        tex.bind_to_image(_gl.BINDINGS[name], read=read, write=True)

    # --------------------------------------------------------------------------------- state access

    @property
    def velocity(self) -> np.ndarray:
        """Velocity at cell centres (ny, nx, 2), world units/s, the mean of each component's two faces."""
        self._alive()
        return ref.centre_velocity(*[f.astype(np.float64) for f in self._faces()]).astype(np.float32)

    @velocity.setter
    def velocity(self, value):
        self._alive()
        v = check.field("velocity", value, (self.ny, self.nx, 2), dtype=np.float64)
        vx = np.zeros((self.ny, self.nx + 1))
        vy = np.zeros((self.ny + 1, self.nx))
        vx[:, 1:-1] = 0.5 * (v[:, :-1, 0] + v[:, 1:, 0])
        vx[:, 0], vx[:, -1] = v[:, 0, 0], v[:, -1, 0]
        vy[1:-1] = 0.5 * (v[:-1, :, 1] + v[1:, :, 1])
        vy[0], vy[-1] = v[0, :, 1], v[-1, :, 1]
        self._upload_faces(vx, vy)

    @property
    def face_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        """The staggered velocity as stored: vx (ny, nx+1) on vertical faces (face [j, i] between cells
        [j, i-1] and [j, i]) and vy (ny+1, nx) on horizontal faces; NumPy copies."""
        self._alive()
        return self._faces()

    @face_velocity.setter
    def face_velocity(self, value):
        self._alive()
        if isinstance(value, np.ndarray) or not hasattr(value, "__len__") or len(value) != 2:
            raise TypeError("face_velocity: expected a pair (vx, vy) of arrays (ny, nx+1), (ny+1, nx)")
        vx = check.field("face_velocity[0]", value[0], (self.ny, self.nx + 1), dtype=np.float64)
        vy = check.field("face_velocity[1]", value[1], (self.ny + 1, self.nx), dtype=np.float64)
        self._upload_faces(vx, vy)

    def _upload_faces(self, vx, vy):
        """Walls and obstacle faces always hold 0."""
        tx, ty = ref.face_types(self._solid, self._bc)
        vx = np.where(tx == ref.FACE_FIXED, 0.0, vx).astype(np.float32)
        vy = np.where(ty == ref.FACE_FIXED, 0.0, vy).astype(np.float32)
        if not (np.all(np.isfinite(vx)) and np.all(np.isfinite(vy))):
            raise ValueError("velocity: values overflow float32")
        self._vx.read.write(vx.tobytes())
        self._vy.read.write(vy.tobytes())
        self._centre_dirty = True

    def _scalar_get(self, k):
        self._alive()
        return self._scalars()[..., k].copy()

    def _scalar_set(self, k, name, value, nonnegative):
        self._alive()
        arr = check.field(name, value, self.shape, nonnegative=nonnegative)
        s = self._scalars()
        s[..., k] = np.where(self._solid, 0.0, arr)
        self._s.read.write(s.tobytes())

    density = property(lambda self: self._scalar_get(0),
                       lambda self, v: self._scalar_set(0, "density", v, True),
                       doc="Smoke density (ny, nx), >= 0, arbitrary units (what the buoyancy alpha multiplies).")
    temperature = property(lambda self: self._scalar_get(1),
                           lambda self, v: self._scalar_set(1, "temperature", v, False),
                           doc="Temperature (ny, nx), same units as ambient_temperature.")
    fuel = property(lambda self: self._scalar_get(2),
                    lambda self, v: self._scalar_set(2, "fuel", v, True),
                    doc="Unburnt fuel (ny, nx), >= 0; burns only with fire=True.")

    @property
    def obstacles(self) -> np.ndarray:
        """Solid cells (ny, nx) bool; a NumPy copy."""
        self._alive()
        return self._solid.copy()

    @obstacles.setter
    def obstacles(self, mask):
        self._alive()
        if isinstance(mask, (str, bytes)) or mask is None:
            raise TypeError(f"obstacles: expected a (ny, nx) bool array, got {type(mask).__name__}")
        arr = np.asarray(mask)
        if arr.dtype != bool:
            raise TypeError(f"obstacles: expected a bool array, got dtype {arr.dtype}")
        if arr.shape != self.shape:
            raise ValueError(f"obstacles: expected shape {self.shape} (indexed [y, x]), got {arr.shape}")
        if arr.all():
            raise ValueError("obstacles: every cell is solid; at least one cell must hold gas")
        self._apply_geometry(arr.copy(), self._bc)

    def set_boundary(self, side, kind, velocity=(0.0, 0.0)) -> None:
        """What one side of the box does to the gas.

        side: "left" | "right" | "bottom" | "top".
        kind: "free-slip" (a wall the gas slides along), "no-slip" (a wall that holds the gas; with a
        tangential `velocity` it slides, e.g. the lid of a cavity), "open" (pressure 0: gas leaves and
        enters freely). velocity = (vx, vy) world units/s of a wall; its normal component must be 0
        (walls do not move into the box) and open sides take none.
        """
        self._alive()
        check.choice("side", side, ref.SIDES)
        check.choice("kind", kind, tuple(ref.KINDS))
        if isinstance(velocity, (str, bytes)) or not hasattr(velocity, "__len__") or len(velocity) != 2:
            raise TypeError(f"velocity: expected (vx, vy), got {velocity!r}")
        vel = (check.real("velocity[0]", velocity[0]), check.real("velocity[1]", velocity[1]))
        k = ref.SIDES.index(side)
        normal, tangent = (vel[0], vel[1]) if k < 2 else (vel[1], vel[0])
        if normal != 0.0:
            raise ValueError(f"velocity: a wall on the {side} side cannot move through it (normal component "
                             f"{normal}); only a tangential (sliding) velocity is allowed")
        if kind == "open" and tangent != 0.0:
            raise ValueError(f"velocity: an open side takes no velocity, got {velocity!r}")
        if kind == "free-slip" and tangent != 0.0:
            raise ValueError("velocity: a free-slip wall exerts no shear, so its velocity has no effect; "
                             "use 'no-slip' for a sliding wall (a lid)")
        kinds, tangents = list(self._bc.kind), list(self._bc.tangent)
        kinds[k], tangents[k] = ref.KINDS[kind], tangent
        self._apply_geometry(self._solid, ref.Bc(tuple(kinds), tuple(tangents)))

    @property
    def boundaries(self) -> dict:
        names = {v: k for k, v in ref.KINDS.items()}
        return {side: (names[self._bc.kind[i]], self._bc.tangent[i]) for i, side in enumerate(ref.SIDES)}

    def _apply_geometry(self, solid, bc):
        """New obstacles / boundaries: zero what is now wall or solid, rebuild the pressure operator."""
        vx, vy = (f.astype(np.float64) for f in self._faces())
        s = self._scalars()
        self._solid, self._bc = solid, bc
        self._solid_tex.write(solid.astype(np.float32).tobytes())
        s[solid] = 0.0
        self._s.read.write(s.tobytes())
        self._upload_faces(vx, vy)
        self._pressure.set_operator(solid, bc)

    # ----------------------------------------------------------------------------------- textures

    @property
    def density_texture(self):
        """rgba32f (nx, ny) texture of the cell scalars: r density, g temperature, b fuel (a unused).
        The object changes after each step (ping-pong): fetch it every frame."""
        self._alive()
        return self._s.read

    @property
    def velocity_texture(self):
        """rg32f (nx, ny) texture of the cell-centre velocity (world units/s), refreshed on access."""
        self._alive()
        if self._centre_dirty:
            self._centre_velocity()
        return self._centre

    def _centre_velocity(self):
        prog = self._programs["centre_velocity"]
        self._common(prog)
        self._bind("B_SMOKE_VX", self._vx.read)
        self._bind("B_SMOKE_VY", self._vy.read)
        self._image("B_SMOKE_CENTRE_OUT", self._centre)
        _gl.dispatch(self.ctx, prog, self.nx, self.ny)
        self._centre_dirty = False

    # ------------------------------------------------------------------------------------- splats

    def splat(self, x, y, radius, velocity=(0.0, 0.0), density=1.0, temperature=0.0, fuel=0.0) -> None:
        """Add a smooth round brush w = (1 - (d/radius)^2)^2 around grid point (x, y) (cell [y, x]'s
        centre is (x, y)): velocity (world units/s) is added to the faces, density, temperature and fuel
        to the cells, each times w. An impulse, added once; walls and solid cells are left alone."""
        self._alive()
        x, y = check.real("x", x), check.real("y", y)
        radius = check.positive("radius", radius)
        if isinstance(velocity, (str, bytes)) or not hasattr(velocity, "__len__") or len(velocity) != 2:
            raise TypeError(f"velocity: expected (vx, vy), got {velocity!r}")
        vel = (check.real("velocity[0]", velocity[0]), check.real("velocity[1]", velocity[1]))
        amounts = (check.real("density", density), check.real("temperature", temperature),
                   check.real("fuel", fuel))
        x0, y0 = max(math.floor(x - radius) - 1, 0), max(math.floor(y - radius) - 1, 0)
        x1, y1 = min(math.ceil(x + radius) + 1, self.nx), min(math.ceil(y + radius) + 1, self.ny)
        if x1 < x0 or y1 < y0:
            return                               # the brush lies wholly outside the grid
        prog = self._programs["splat"]
        self._common(prog)
        _gl.set_uniforms(prog, u_origin=(x0, y0), u_center=(x, y), u_radius=radius, u_velocity=vel,
                         u_amounts=amounts)
        self._image("B_SMOKE_VX_OUT", self._vx.read, read=True)
        self._image("B_SMOKE_VY_OUT", self._vy.read, read=True)
        self._image("B_SMOKE_S_OUT", self._s.read, read=True)
        _gl.dispatch(self.ctx, prog, x1 - x0 + 1, y1 - y0 + 1)
        self._centre_dirty = True

    # ------------------------------------------------------------------------------------ stepping

    def step(self, dt, substeps=1) -> None:
        """Advance by dt seconds of simulated time in `substeps` equal steps (no readback, except one
        small one per multigrid cycle when pressure_tolerance is set)."""
        self._alive()
        dt = check.positive("dt", dt)
        substeps = check.integer("substeps", substeps, low=1, high=10_000)
        h = dt / substeps
        p = self.params
        for _ in range(substeps):
            if p.fire:
                self._combust(h)
            if p.vorticity > 0.0 or p.buoyancy != (0.0, 0.0):
                if p.vorticity > 0.0:
                    self._curl()
                self._forces(h)
                self._vx.swap()
                self._vy.swap()
            self._advect_all(h)
            if p.viscosity > 0.0:
                self._diffuse_all(h)
            self._project()
            self.iteration += 1
        self.sim_time += dt
        self._centre_dirty = True

    def _combust(self, dt):
        p = self.params
        prog = self._programs["combust"]
        self._common(prog)
        _gl.set_uniforms(prog, u_burn_fraction=-math.expm1(-p.burn_rate * dt), u_burn_heat=p.burn_heat,
                         u_smoke_yield=p.smoke_yield, u_cooling_dt=p.cooling * dt, u_ambient=p.ambient_temperature)
        self._image("B_SMOKE_S_OUT", self._s.read, read=True)
        _gl.dispatch(self.ctx, prog, self.nx, self.ny)

    def _curl(self):
        prog = self._programs["curl"]
        self._common(prog)
        _gl.set_uniforms(prog, u_inv_h=1.0 / self.params.cell_size)
        self._bind("B_SMOKE_VX", self._vx.read)
        self._bind("B_SMOKE_VY", self._vy.read)
        self._image("B_SMOKE_Q_OUT", self._curl_tex)
        _gl.dispatch(self.ctx, prog, self.nx, self.ny)

    def _forces(self, dt):
        """read -> write for vx, vy (the caller swaps)."""
        p = self.params
        prog = self._programs["forces"]
        self._common(prog)
        _gl.set_uniforms(prog, u_dt=dt, u_eps_h=p.vorticity * p.cell_size, u_buoyancy=tuple(map(float, p.buoyancy)),
                         u_ambient=p.ambient_temperature)
        self._bind("B_SMOKE_VX", self._vx.read)
        self._bind("B_SMOKE_VY", self._vy.read)
        self._bind("B_SMOKE_S", self._s.read)
        self._bind("B_SMOKE_CURL", self._curl_tex)
        self._image("B_SMOKE_VX_OUT", self._vx.write)
        self._image("B_SMOKE_VY_OUT", self._vy.write)
        _gl.dispatch(self.ctx, prog, self.nx + 1, self.ny + 1)

    def _decays(self, dt):
        p = self.params
        return (math.exp(-p.velocity_dissipation * dt), math.exp(-p.density_dissipation * dt), 1.0, 1.0)

    def _advect(self, vel, src, out, dt_h, decay):
        """One semi-Lagrangian pass: fields `src` (vx, vy, s textures) through velocity `vel` (vx, vy)
        into `out`."""
        prog = self._programs["advect"]
        self._common(prog)
        _gl.set_uniforms(prog, u_dt_h=dt_h, u_decay=decay)
        self._bind("B_SMOKE_VX", vel[0])
        self._bind("B_SMOKE_VY", vel[1])
        for name, tex in zip(("B_SMOKE_VX_HAT", "B_SMOKE_VY_HAT", "B_SMOKE_S_HAT"), src):
            self._bind(name, tex)
        for name, tex in zip(("B_SMOKE_VX_OUT", "B_SMOKE_VY_OUT", "B_SMOKE_S_OUT"), out):
            self._image(name, tex)
        _gl.dispatch(self.ctx, prog, self.nx + 1, self.ny + 1)

    def _maccormack(self, phi, hat, back, out, dt_h, decay):
        prog = self._programs["maccormack"]
        self._common(prog)
        _gl.set_uniforms(prog, u_dt_h=dt_h, u_decay=decay)
        for names, texs in ((("B_SMOKE_VX", "B_SMOKE_VY", "B_SMOKE_S"), phi),
                            (("B_SMOKE_VX_HAT", "B_SMOKE_VY_HAT", "B_SMOKE_S_HAT"), hat),
                            (("B_SMOKE_VX_BACK", "B_SMOKE_VY_BACK", "B_SMOKE_S_BACK"), back)):
            for name, tex in zip(names, texs):
                self._bind(name, tex)
        for name, tex in zip(("B_SMOKE_VX_OUT", "B_SMOKE_VY_OUT", "B_SMOKE_S_OUT"), out):
            self._image(name, tex)
        _gl.dispatch(self.ctx, prog, self.nx + 1, self.ny + 1)

    def _advect_all(self, dt):
        dt_h = dt / self.params.cell_size
        cur = (self._vx.read, self._vy.read, self._s.read)
        out = (self._vx.write, self._vy.write, self._s.write)
        if self.params.advection == "semi-lagrangian":
            self._advect(cur[:2], cur, out, dt_h, self._decays(dt))
        else:
            self._advect(cur[:2], cur, self._hat, dt_h, (1.0,) * 4)
            self._advect(cur[:2], self._hat, self._back, -dt_h, (1.0,) * 4)
            self._maccormack(cur, self._hat, self._back, out, dt_h, self._decays(dt))
        self._vx.swap()
        self._vy.swap()
        self._s.swap()

    def diffusion_sweeps(self, dt) -> int:
        """Red-black sweeps the viscosity solve takes for a step of dt: until the Gauss-Seidel error
        factor (4a / (1 + 4a))^2 per sweep, a = nu dt / h^2, falls below DIFFUSION_TOLERANCE."""
        a = self.params.viscosity * dt / self.params.cell_size ** 2
        rho = (4.0 * a / (1.0 + 4.0 * a)) ** 2
        if rho <= 0.0:
            return 0
        return max(1, min(self.params.diffusion_iterations, math.ceil(math.log(DIFFUSION_TOLERANCE) / math.log(rho))))

    def _diffuse(self, rhs, out, a, parity):
        prog = self._programs["diffuse"]
        self._common(prog)
        _gl.set_uniforms(prog, u_a=a, u_parity=parity)
        self._bind("B_SMOKE_VX_HAT", rhs[0])
        self._bind("B_SMOKE_VY_HAT", rhs[1])
        self._image("B_SMOKE_VX_OUT", out[0], read=True)
        self._image("B_SMOKE_VY_OUT", out[1], read=True)
        _gl.dispatch(self.ctx, prog, self.nx + 1, self.ny + 1)

    def _diffuse_all(self, dt):
        a = self.params.viscosity * dt / self.params.cell_size ** 2
        rhs, out = (self._vx.read, self._vy.read), (self._vx.write, self._vy.write)
        self._diffuse(rhs, out, a, -1)
        for _ in range(self.diffusion_sweeps(dt)):
            self._diffuse(rhs, out, a, 0)
            self._diffuse(rhs, out, a, 1)
        self._vx.swap()
        self._vy.swap()

    def _divergence(self, vel, rhs, q):
        prog = self._programs["divergence"]
        self._common(prog)
        self._bind("B_SMOKE_VX", vel[0])
        self._bind("B_SMOKE_VY", vel[1])
        self._image("B_SMOKE_RHS_OUT", rhs)
        self._image("B_SMOKE_Q_OUT", q)
        _gl.dispatch(self.ctx, prog, self.nx, self.ny)

    def _subtract_gradient(self, vel, q, out):
        prog = self._programs["subtract_gradient"]
        self._common(prog)
        self._bind("B_SMOKE_VX", vel[0])
        self._bind("B_SMOKE_VY", vel[1])
        self._bind("B_SMOKE_Q", q)
        self._image("B_SMOKE_VX_OUT", out[0])
        self._image("B_SMOKE_VY_OUT", out[1])
        _gl.dispatch(self.ctx, prog, self.nx + 1, self.ny + 1)

    def _project(self):
        p, pr = self.params, self._pressure
        self._divergence((self._vx.read, self._vy.read), pr.rhs[0], pr.q[0])
        q = pr.solve(p.pressure, p.iterations, p.pressure_tolerance if p.pressure == "multigrid" else None)
        self._subtract_gradient((self._vx.read, self._vy.read), q, (self._vx.write, self._vy.write))
        self._vx.swap()
        self._vy.swap()

    def project(self) -> None:
        """Run the projection alone on the current velocity (as at the end of step())."""
        self._alive()
        self._project()
        self._centre_dirty = True

    # -------------------------------------------------------------------------------- diagnostics

    @property
    def pressure_residual(self) -> float:
        """Relative residual |b - L q|_2 / |b|_2 of the last step's pressure solve over fluid cells,
        b = D v* the divergence before projection. On this MAC grid it is also the divergence left
        after projection relative to the divergence before it. 0 before the first step."""
        self._alive()
        return Pressure.read_norms(self._pressure.norms)["relative"]

    @property
    def pressure_cycles(self) -> int:
        """V-cycles (multigrid) or sweeps (jacobi, gauss-seidel) the last pressure solve took."""
        return self._pressure.cycles

    def divergence(self, norm="max") -> float:
        """Divergence of the current velocity, in 1/s: (net outflow of a cell) / cell_size, the same D
        the projection uses, over fluid cells. norm: "max" (max |div|) or "rms"."""
        self._alive()
        check.choice("norm", norm, ("max", "rms"))
        pr = self._pressure
        self._divergence((self._vx.read, self._vy.read), pr.rhs[0], pr.q[0])
        pr.residual(pr.q[0], pr.rhs[0], self._div_norms, with_operator=False)
        n = Pressure.read_norms(self._div_norms)
        fluid = max(int((~self._solid).sum()), 1)
        value = n["bmax"] if norm == "max" else n["b"] / math.sqrt(fluid)
        return value / self.params.cell_size

    def kinetic_energy(self) -> float:
        """0.5 * sum over faces of v^2 * cell area (unit density), world units^4/s^2."""
        vx, vy = (f.astype(np.float64) for f in self._faces())
        return 0.5 * float((vx ** 2).sum() + (vy ** 2).sum()) * self.params.cell_size ** 2

    # ----------------------------------------------------------------------------------- lifetime

    def _gpu_objects(self):
        return (self._vx, self._vy, self._s, *self._hat, *self._back, self._solid_tex, self._curl_tex,
                self._centre, self._pressure, self._div_norms)

    def __repr__(self):
        state = "released" if self._released else f"t={self.sim_time:.3f}s"
        return f"SmokeGrid({self.nx}x{self.ny}, cell_size={self.params.cell_size}, {state})"

