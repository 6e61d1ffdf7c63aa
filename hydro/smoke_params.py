"""SmokeGrid parameters: one frozen dataclass with units and effect, validated on creation."""
from __future__ import annotations

from dataclasses import dataclass

from . import _validate as check

ADVECTION = ("semi-lagrangian", "maccormack")
PRESSURE = ("multigrid", "jacobi", "gauss-seidel")
DEFAULT_ITERATIONS = {"multigrid": 20, "jacobi": 40, "gauss-seidel": 20}


@dataclass(frozen=True)
class SmokeParams:
    cell_size: float = 1.0            # world size of a cell, world units; > 0
    viscosity: float = 0.0            # kinematic viscosity nu, world units^2/s; >= 0 (0 = inviscid, no diffusion solve)
    advection: str = "maccormack"     # "maccormack" (2nd order, limited; Selle 2008) | "semi-lagrangian" (Stam 1999)
    vorticity: float = 0.0            # confinement strength eps, 1/s; >= 0; f = eps h (N x w) (Fedkiw 2001)
    buoyancy: tuple = (0.0, 0.0)      # (alpha, beta): f_up = -alpha density + beta (T - T_ambient), world units/s^2
    ambient_temperature: float = 0.0  # T_ambient of the buoyancy and cooling laws
    pressure: str = "multigrid"       # "multigrid" (V(2,2) cycles, red-black GS) | "jacobi" | "gauss-seidel"
    pressure_iterations: int | None = None   # multigrid: max V-cycles (20); jacobi: sweeps (40); gauss-seidel: red+black sweeps (20)
    pressure_tolerance: float | None = 1e-4  # multigrid only: stop when |b - Lq| / |b| <= this; None = run exactly
    #                                          pressure_iterations cycles without reading anything back
    diffusion_iterations: int = 200   # cap on red-black sweeps of the viscosity solve (run until the error factor < 1e-5)
    density_dissipation: float = 0.0  # 1/s; density *= exp(-k dt) each step (0 = none: the default is faithful)
    velocity_dissipation: float = 0.0  # 1/s; velocity *= exp(-k dt) each step
    fire: bool = False                # run the combustion pass: fuel -> heat + smoke, hot gas cools
    burn_rate: float = 2.0            # 1/s; fuel burns as exp(-rate t)
    burn_heat: float = 1.0            # temperature released per unit of fuel burned; also the cooling law's scale; > 0
    smoke_yield: float = 0.5          # density released per unit of fuel burned; >= 0
    cooling: float = 1.0              # 1/s; d(theta)/dt = -cooling theta^4, theta = (T - T_ambient) / burn_heat

    def __post_init__(self):
        check.positive("cell_size", self.cell_size)
        check.real("viscosity", self.viscosity, low=0.0)
        check.choice("advection", self.advection, ADVECTION)
        check.real("vorticity", self.vorticity, low=0.0)
        if isinstance(self.buoyancy, (str, bytes)) or not hasattr(self.buoyancy, "__len__") or len(self.buoyancy) != 2:
            raise TypeError(f"buoyancy: expected (alpha, beta), got {self.buoyancy!r}")
        check.real("buoyancy[0]", self.buoyancy[0])
        check.real("buoyancy[1]", self.buoyancy[1])
        check.real("ambient_temperature", self.ambient_temperature)
        check.choice("pressure", self.pressure, PRESSURE)
        if self.pressure_iterations is not None:
            check.integer("pressure_iterations", self.pressure_iterations, low=1, high=100_000)
        if self.pressure_tolerance is not None:
            check.real("pressure_tolerance", self.pressure_tolerance, low=0.0, high=1.0, low_open=True)
        check.integer("diffusion_iterations", self.diffusion_iterations, low=1, high=100_000)
        check.real("density_dissipation", self.density_dissipation, low=0.0)
        check.real("velocity_dissipation", self.velocity_dissipation, low=0.0)
        if not isinstance(self.fire, bool):
            raise TypeError(f"fire: expected True or False, got {self.fire!r}")
        check.real("burn_rate", self.burn_rate, low=0.0)
        check.positive("burn_heat", self.burn_heat)
        check.real("smoke_yield", self.smoke_yield, low=0.0)
        check.real("cooling", self.cooling, low=0.0)

    @property
    def iterations(self) -> int:
        return self.pressure_iterations or DEFAULT_ITERATIONS[self.pressure]
