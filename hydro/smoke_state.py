"""SmokeGrid's state access and diagnostics: the NumPy getters and setters (velocity, face velocity,
density, temperature, fuel, obstacles), boundaries, the textures a game samples, the scalars' ledger
and totals, and the measures of the last step (pressure residual, divergence, kinetic energy,
viscosity-solve bound).

A mixin of hydro.smoke.SmokeGrid, apart so that smoke.py keeps to construction and the passes of a
step. Every setter validates before touching the GPU; solid cells always hold no density or fuel and
the ambient temperature (smoke_ops.solid_scalars), walls and obstacle faces velocity 0.
"""
from __future__ import annotations

import math

import numpy as np

from . import _gl
from . import _validate as check
from . import smoke_ops as ops
from .smoke_ledger import SCALARS, scalar_totals
from .smoke_pressure import Pressure


class SmokeState:
    """State access of SmokeGrid (see hydro.smoke). Expects ny, nx, params, _vx, _vy, _s, _solid,
    _solid_tex, _bc, _pressure, _div_norms, _centre, _impulse, _impulse_box, _ledger and the pass
    helpers of SmokeGrid."""

    @property
    def shape(self) -> tuple[int, int]:
        return (self.ny, self.nx)

    @staticmethod
    def _read_tex(tex, shape, comps=1) -> np.ndarray:
        arr = np.frombuffer(tex.read(), np.float32)
        return arr.reshape(shape + ((comps,) if comps > 1 else ())).copy()

    def _faces(self, pending=True):
        """The faces' velocity; with `pending`, plus what splats added since the last step (held apart
        until the step adds it, hydro.smoke impulse.comp)."""
        faces = (self._read_tex(self._vx.read, (self.ny, self.nx + 1)),
                 self._read_tex(self._vy.read, (self.ny + 1, self.nx)))
        if self._impulse_box is None or not pending:
            return faces
        return tuple(f + self._read_tex(t, f.shape) for f, t in zip(faces, self._impulse))

    def _scalars(self):
        return self._read_tex(self._s.read, (self.ny, self.nx), 4)

    # --------------------------------------------------------------------------------- velocity

    @property
    def velocity(self) -> np.ndarray:
        """Velocity at cell centres (ny, nx, 2), world units/s, the mean of each component's two faces.

        Setting it is not a round trip: the velocity lives on faces, so each face takes the mean of the
        two cells beside it, and the faces of walls and obstacles hold 0. Reading back averages the
        faces again: what was set comes back smoothed by [1, 2, 1] / 4 along each component's own axis
        (vx along x, vy along y), and a cell beside a wall reads (v_0 + v_1) / 4 of the component
        normal to it. For exact values set and read face_velocity."""
        self._alive()
        return ops.centre_velocity(*[f.astype(np.float64) for f in self._faces()]).astype(np.float32)

    @velocity.setter
    def velocity(self, value):
        """Cell-centre values averaged onto the faces (see the getter: not a round trip)."""
        self._alive(settle=False)              # the velocity is replaced: _upload_faces drops a queued check
        v = check.field("velocity", value, (self.ny, self.nx, 2), dtype=np.float64)
        vx = np.zeros((self.ny, self.nx + 1))
        vy = np.zeros((self.ny + 1, self.nx))
        vx[:, 1:-1] = 0.5 * (v[:, :-1, 0] + v[:, 1:, 0])
        vx[:, 0], vx[:, -1] = v[:, 0, 0], v[:, -1, 0]
        vy[1:-1] = 0.5 * (v[:-1, :, 1] + v[1:, :, 1])
        vy[0], vy[-1] = v[0, :, 1], v[-1, :, 1]
        self._upload_faces(vx, vy)
        self._q_kept = False                    # a new flow: the next solve starts from q = 0

    @property
    def face_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        """The staggered velocity as stored: vx (ny, nx+1) on vertical faces (face [j, i] between cells
        [j, i-1] and [j, i]) and vy (ny+1, nx) on horizontal faces; NumPy copies."""
        self._alive()
        return self._faces()

    @face_velocity.setter
    def face_velocity(self, value):
        self._alive(settle=False)              # as velocity's setter
        if isinstance(value, np.ndarray) or not hasattr(value, "__len__") or len(value) != 2:
            raise TypeError("face_velocity: expected a pair (vx, vy) of arrays (ny, nx+1), (ny+1, nx)")
        vx = check.field("face_velocity[0]", value[0], (self.ny, self.nx + 1), dtype=np.float64)
        vy = check.field("face_velocity[1]", value[1], (self.ny + 1, self.nx), dtype=np.float64)
        self._upload_faces(vx, vy)
        self._q_kept = False                    # a new flow: the next solve starts from q = 0

    def _upload_faces(self, vx, vy, keep_pending=False):
        """Walls and obstacle faces always hold 0. The splats' pending impulse is dropped (it was
        part of the velocity replaced) unless `keep_pending`."""
        tx, ty = ops.face_types(self._solid, self._bc)
        vx = np.where(tx == ops.FACE_FIXED, 0.0, vx).astype(np.float32)
        vy = np.where(ty == ops.FACE_FIXED, 0.0, vy).astype(np.float32)
        if not (np.all(np.isfinite(vx)) and np.all(np.isfinite(vy))):
            raise ValueError("velocity: values overflow float32")
        self._pressure.drop()                   # a step's queued check was of the velocity replaced here
        if self._impulse_box is not None and not keep_pending:
            self._impulse_pass(add=False)
        self._vx.read.write(vx.tobytes())
        self._vy.read.write(vy.tobytes())
        self._centre_dirty = True
        self._sync_next = True                  # max_cfl plans the next call from this velocity

    # ---------------------------------------------------------------------------------- scalars

    # the projection changes no scalar, so scalar access does not wait for a step's residual check
    def _scalar_get(self, k):
        self._alive(settle=False)
        return self._scalars()[..., k].copy()

    def _scalar_set(self, k, name, value, nonnegative):
        self._alive(settle=False)
        arr = check.field(name, value, self.shape, nonnegative=nonnegative)
        s = self._scalars()
        before = self._totals_of(s)
        s[..., k] = np.where(self._solid, ops.solid_scalars(self.params.ambient_temperature)[k], arr)
        self._s.read.write(s.tobytes())
        self._ledger.book("assigned", self._totals_of(s) - before)
        self._sync_next = True                  # max_cfl plans the next call from this buoyancy

    def _totals_of(self, s):
        """The totals (density, heat, fuel; world units) of scalars s as the GPU holds them."""
        return scalar_totals(s, self._solid, self.params.ambient_temperature) * self.params.cell_size ** 2

    density = property(lambda self: self._scalar_get(0),
                       lambda self, v: self._scalar_set(0, "density", v, True),
                       doc="Smoke density (ny, nx), >= 0, arbitrary units (what the buoyancy alpha multiplies); "
                           "0 in solid cells.")
    temperature = property(lambda self: self._scalar_get(1),
                           lambda self, v: self._scalar_set(1, "temperature", v, False),
                           doc="Temperature (ny, nx), same units as ambient_temperature; a new grid and every "
                               "solid cell hold ambient_temperature.")
    fuel = property(lambda self: self._scalar_get(2),
                    lambda self, v: self._scalar_set(2, "fuel", v, True),
                    doc="Unburnt fuel (ny, nx), >= 0; burns only with fire=True; 0 in solid cells.")

    # ------------------------------------------------------------------------------ geometry

    @property
    def obstacles(self) -> np.ndarray:
        """Solid cells (ny, nx) bool; a NumPy copy."""
        self._alive(settle=False)
        return self._solid.copy()

    @obstacles.setter
    def obstacles(self, mask):
        self._alive(settle=False)              # the arguments first: a bad call does no GPU work
        if isinstance(mask, (str, bytes)) or mask is None:
            raise TypeError(f"obstacles: expected a (ny, nx) bool array, got {type(mask).__name__}")
        arr = np.asarray(mask)
        if arr.dtype != bool:
            raise TypeError(f"obstacles: expected a bool array, got dtype {arr.dtype}")
        if arr.shape != self.shape:
            raise ValueError(f"obstacles: expected shape {self.shape} (indexed [y, x]), got {arr.shape}")
        if arr.all():
            raise ValueError("obstacles: every cell is solid; at least one cell must hold gas")
        self._settle()                          # the new operator needs the queued solve finished
        self._apply_geometry(arr.copy(), self._bc)

    def set_boundary(self, side, kind, velocity=(0.0, 0.0)) -> None:
        """What one side of the box does to the gas.

        side: "left" | "right" | "bottom" | "top".
        kind: "free-slip" (a wall the gas slides along), "no-slip" (a wall that holds the gas; with a
        tangential `velocity` it slides, e.g. the lid of a cavity), "open" (pressure 0: gas leaves and
        enters freely). velocity = (vx, vy) world units/s of a wall; its normal component must be 0
        (walls do not move into the box) and open sides take none.
        """
        self._alive(settle=False)              # the arguments first: a bad call does no GPU work
        check.choice("side", side, ops.SIDES)
        check.choice("kind", kind, tuple(ops.KINDS))
        vel = check.pair("velocity", velocity, "(vx, vy)", check.real32)
        k = ops.SIDES.index(side)
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
        kinds[k], tangents[k] = ops.KINDS[kind], tangent
        self._settle()                          # the new operator needs the queued solve finished
        self._apply_geometry(self._solid, ops.Bc(tuple(kinds), tuple(tangents)))

    @property
    def boundaries(self) -> dict:
        names = {v: k for k, v in ops.KINDS.items()}
        return {side: (names[self._bc.kind[i]], self._bc.tangent[i]) for i, side in enumerate(ops.SIDES)}

    def _apply_geometry(self, solid, bc):
        """New obstacles / boundaries: solid cells get solid_scalars, walls and obstacle faces 0, and the
        pressure operator is rebuilt."""
        vx, vy = (f.astype(np.float64) for f in self._faces(pending=False))
        s = self._scalars()
        before = self._totals_of(s)
        self._solid, self._bc = solid, bc
        self._solid_tex.write(solid.astype(np.float32).tobytes())
        s[solid, :3] = ops.solid_scalars(self.params.ambient_temperature)
        s[solid, 3] = 0.0
        self._s.read.write(s.tobytes())
        self._ledger.book("assigned", self._totals_of(s) - before)      # the gas new obstacles took
        self._upload_faces(vx, vy, keep_pending=True)    # a pending push waits for the step, which
        self._pressure.set_operator(solid, bc)          # adds it to the faces still free then

    # ----------------------------------------------------------------------------------- textures

    @property
    def density_texture(self):
        """rgba32f (nx, ny) texture of the cell scalars: r density, g temperature, b fuel (a unused).
        The object changes after each step (ping-pong): fetch it every frame. The projection does not
        change it, so this does not wait for the step's residual check."""
        self._alive(settle=False)
        return self._s.read

    @property
    def obstacle_texture(self):
        """r32f (nx, ny) texture of the obstacles: 1 in solid cells, 0 in the gas (for drawing)."""
        self._alive(settle=False)
        return self._solid_tex

    @property
    def velocity_texture(self):
        """rg32f (nx, ny) texture of the cell-centre velocity (world units/s), refreshed on access: the
        velocity as the last step (or project()) left it, without splats' pushes since, which the next
        step adds (velocity and face_velocity include them)."""
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

    # ------------------------------------------------------------------------------------ ledger

    def ledger(self) -> dict:
        """Where each scalar's total came from, per scalar ("density", "heat": T - T_ambient, "fuel";
        world units: the scalar times area): "assigned" (setters, new obstacles), "splats",
        "combustion", "outflow" (through open sides, negative out), "dissipation" (negative), and
        "expected", their sum, which totals() matches with conserve=True (to float32 rounding; not
        where the conservation fix had nothing left to scale, such as gas gone while the books say
        some is left). "drift" (outside the sum) is what the advection alone changed the total by,
        which the fix took back (with conserve=False, totals() is expected + drift). Booked on the GPU
        as the steps run; reading it waits for the passes queued so far. A game's shader that writes
        density_texture is not booked."""
        self._alive(settle=False)
        return self._ledger.report(self.params.cell_size ** 2)

    def totals(self) -> dict:
        """Each scalar's total now over the fluid cells (a readback), as ledger() names them:
        density, heat (T - T_ambient) and fuel, times the cell area."""
        self._alive(settle=False)
        return dict(zip(SCALARS, (float(v) for v in self._totals_of(self._scalars()))))

    # -------------------------------------------------------------------------------- diagnostics

    @property
    def pressure_residual(self) -> float:
        """Relative residual |b - L q|_2 / |b|_2 of the last step's pressure solve over fluid cells,
        b = D v* the divergence before projection. On this MAC grid it is also the divergence left
        after projection relative to the divergence before it. 0 before the first step."""
        self._alive()
        pr = self._pressure
        # a solve to a tolerance keeps what its check read (the norms buffer may hold a dropped solve's)
        return pr.relative if pr.relative is not None else Pressure.read_norms(pr.norms)["relative"]

    @property
    def pressure_cycles(self) -> int:
        """V-cycles (multigrid) or sweeps (jacobi, gauss-seidel) the last pressure solve took."""
        self._alive()
        return self._pressure.cycles

    @property
    def diffusion_error_bound(self) -> float:
        """Bound on the relative error |v - v_exact|_2 / |v*|_2 the last step's viscosity solve left
        (Chebyshev: 1 / T_m(sigma) after m iterations). At most DIFFUSION_TOLERANCE unless the
        diffusion_iterations cap stopped it earlier; 0 when no solve ran (viscosity 0, or no step yet)."""
        self._alive(settle=False)
        return self._diffusion_bound

    @property
    def diffusion_iterations_run(self) -> int:
        """Chebyshev iterations the last step's viscosity solve took (0 when none ran)."""
        self._alive(settle=False)
        return self._diffusion_count

    def divergence(self, norm="max") -> float:
        """Divergence of the velocity as the last step (or project()) left it, in 1/s: (net outflow of
        a cell) / cell_size, the same D the projection uses, over fluid cells; splats' pushes since are
        left out (the next step adds them before its projection). norm: "max" (max |div|) or "rms"."""
        self._alive(settle=False)
        check.choice("norm", norm, ("max", "rms"))
        self._settle()
        pr = self._pressure
        # into the textures the next projection writes (Pressure.begin): the last solve's q, the next
        # warm start, and its right-hand side stay as they are
        self._divergence((self._vx.read, self._vy.read), pr.rhs_last, pr.q_last)
        pr.residual(pr.q_last, pr.rhs_last, self._div_norms, with_operator=False)
        n = Pressure.read_norms(self._div_norms)
        fluid = max(int((~self._solid).sum()), 1)
        value = n["bmax"] if norm == "max" else n["b"] / math.sqrt(fluid)
        return value / self.params.cell_size

    def kinetic_energy(self) -> float:
        """0.5 * sum over faces of v^2 * cell area (unit density), world units^4/s^2; of the velocity
        with splats' pushes since the last step, as face_velocity shows it."""
        self._alive()
        vx, vy = (f.astype(np.float64) for f in self._faces())
        return 0.5 * float((vx ** 2).sum() + (vy ** 2).sum()) * self.params.cell_size ** 2
