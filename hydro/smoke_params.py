"""SmokeGrid parameters: one frozen dataclass with units and effect, validated on creation."""
from __future__ import annotations

from dataclasses import dataclass

from . import _validate as check

ADVECTION = ("semi-lagrangian", "maccormack")
PRESSURE = ("multigrid", "jacobi", "gauss-seidel")
DEFAULT_ITERATIONS = {"multigrid": 20, "jacobi": 40, "gauss-seidel": 20}


@dataclass(frozen=True)
class SmokeParams:
    """SmokeGrid's parameters (its keywords), validated on creation; frozen. Rates are per second of
    simulated time.

    cell_size: world size of a cell, world units; > 0
    viscosity: kinematic viscosity nu, world units^2/s; >= 0 (0 = inviscid, no diffusion solve)
    advection: "maccormack" (2nd order, limited; Selle 2008) | "semi-lagrangian" (Stam 1999)
    vorticity: confinement strength eps, 1/s; >= 0; f = eps h (N x w) (Fedkiw 2001)
    buoyancy: (alpha, beta): f_up = -alpha density + beta (T - T_ambient), world units/s^2
    ambient_temperature: T_ambient of the buoyancy and cooling laws
    pressure: "multigrid" (V(3,3) cycles, red-black SOR) | "jacobi" | "gauss-seidel"
    pressure_iterations: multigrid: max V-cycles (20); jacobi: sweeps (40); gauss-seidel: red+black sweeps
        (20)
    pressure_tolerance: multigrid only: stop when |b - Lq| / |b| <= this (checked by a readback after the
        cycle count the last solve needed, then after each further cycle); None = run exactly
        pressure_iterations cycles, no readback
    pressure_warm_start: multigrid only: each step's solve starts from the last step's q, scaled by the
        alpha that minimises the start's residual (never worse than q = 0), so a slowly changing scene gets
        a lower residual for the same cycles; False = from q = 0 every step. jacobi / gauss-seidel always
        start at 0
    diffusion_iterations: cap on Chebyshev iterations of the viscosity solve; it runs until its error bound
        is < 1e-5 (DIFFUSION_TOLERANCE), which takes ~0.9 sqrt(nu dt) / h + 13 of them; a capped solve shows
        in SmokeGrid.diffusion_error_bound
    density_dissipation: 1/s; density *= exp(-k dt) each step (0 = none: the default is faithful)
    velocity_dissipation: 1/s; velocity *= exp(-k dt) each step
    fire: run the combustion pass: fuel -> heat + smoke, hot gas cools
    burn_rate: 1/s; fuel burns as exp(-rate t)
    burn_heat: temperature released per unit of fuel burned; also the cooling law's scale; > 0
    smoke_yield: density released per unit of fuel burned; >= 0
    cooling: 1/s; d(theta)/dt = -cooling theta^4, theta = (T - T_ambient) / burn_heat
    conserve: keep each scalar's total (density, heat T - T_ambient, fuel) at what the ledger books
        (SmokeGrid.ledger: splats, assignments, combustion, less what left through open sides and the
        dissipation) after every advection, by a correction in proportion to each cell's amount:
        one reduction and one fix-up pass a step (shaders/smoke/conserve.glsl). False =
        the schemes' own totals, which drift (a closed box: semi-Lagrangian loses, MacCormack gains)
    density_diffusion: kappa, world units^2/s; >= 0: the density diffuses, d(rho)/dt = kappa Laplacian rho,
        solved implicitly after each advection (the viscosity's Chebyshev iterations, on the cells),
        with no flux through walls, obstacles or open sides, so it keeps the total; soft smoke edges
        (0 = none). The iterations it needs grow as sqrt(kappa dt) / cell_size, capped by
        diffusion_iterations
    fixed_step: seconds, > 0, or None: SmokeGrid.step(dt) runs whole steps of this length, as many as
        the time given so far allows, and carries the rest of dt to the next call (a game's "fixed
        timestep"): the steps, and so the results, are the same at any frame rate, at the cost of
        running several steps in a slow frame (and none in some fast ones). None = one step of dt
        per call (the default), whose results change with dt by the schemes' time error
    max_cfl: cells, > 0, or None: step() splits each step into the substeps (cfl_substeps) that carry
        the gas at most this many cells each, planned from the largest face speed, buoyancy and fuel
        recorded at the end of the call before the previous one (a fenced ring: no wait on the last
        call, and the same substeps whatever the GPU's timing), grown by the splats since and the
        forces' bound over the time since; a hard push then runs the same substeps at any frame rate
        (0.25 keeps the pushed puff of docs/smoke.md within 1 %). None = no limit, no record (the
        default: a fast scene on a fine grid would take many substeps, docs/smoke.md)
    """
    cell_size: float = 1.0
    viscosity: float = 0.0
    advection: str = "maccormack"
    vorticity: float = 0.0
    buoyancy: tuple = (0.0, 0.0)
    ambient_temperature: float = 0.0
    pressure: str = "multigrid"
    pressure_iterations: int | None = None
    pressure_tolerance: float | None = 1e-4
    pressure_warm_start: bool = True
    diffusion_iterations: int = 500
    density_dissipation: float = 0.0
    velocity_dissipation: float = 0.0
    fire: bool = False
    burn_rate: float = 2.0
    burn_heat: float = 1.0
    smoke_yield: float = 0.5
    cooling: float = 1.0
    conserve: bool = True
    density_diffusion: float = 0.0
    fixed_step: float | None = None
    max_cfl: float | None = None

    def __post_init__(self):
        # every value here reaches a shader uniform, so each must also be a finite float32
        check.real32("cell_size", self.cell_size, low=0.0, low_open=True)
        check.real32("viscosity", self.viscosity, low=0.0)
        check.choice("advection", self.advection, ADVECTION)
        check.real32("vorticity", self.vorticity, low=0.0)
        object.__setattr__(self, "buoyancy", check.pair("buoyancy", self.buoyancy, "(alpha, beta)", check.real32))
        check.real32("ambient_temperature", self.ambient_temperature)
        check.choice("pressure", self.pressure, PRESSURE)
        if self.pressure_iterations is not None:
            check.integer("pressure_iterations", self.pressure_iterations, low=1, high=100_000)
        if self.pressure_tolerance is not None:
            check.real("pressure_tolerance", self.pressure_tolerance, low=0.0, high=1.0, low_open=True)
        if not isinstance(self.pressure_warm_start, bool):
            raise TypeError(f"pressure_warm_start: expected True or False, got {self.pressure_warm_start!r}")
        check.integer("diffusion_iterations", self.diffusion_iterations, low=1, high=100_000)
        if not isinstance(self.conserve, bool):
            raise TypeError(f"conserve: expected True or False, got {self.conserve!r}")
        check.real32("density_diffusion", self.density_diffusion, low=0.0)
        if self.fixed_step is not None:
            check.real32("fixed_step", self.fixed_step, low=0.0, low_open=True)
        if self.max_cfl is not None:
            check.real32("max_cfl", self.max_cfl, low=0.0, low_open=True)
        check.real32("density_dissipation", self.density_dissipation, low=0.0)
        check.real32("velocity_dissipation", self.velocity_dissipation, low=0.0)
        if not isinstance(self.fire, bool):
            raise TypeError(f"fire: expected True or False, got {self.fire!r}")
        check.real32("burn_rate", self.burn_rate, low=0.0)
        check.real32("burn_heat", self.burn_heat, low=0.0, low_open=True)
        check.real32("smoke_yield", self.smoke_yield, low=0.0)
        check.real32("cooling", self.cooling, low=0.0)

    @property
    def iterations(self) -> int:
        return self.pressure_iterations or DEFAULT_ITERATIONS[self.pressure]
