"""Water model parameters: one frozen dataclass, validated on creation; derived values in Python."""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import _validate as check


@dataclass(frozen=True)
class WaterParams:
    """The water grids' physical parameters (WaterGrid and HexWaterGrid take them as arguments), validated
    on creation; frozen.

    cell_size: world size of a cell (hex: lattice spacing), world units; > 0
    gravity: world units/s^2; > 0; waves travel at sqrt(gravity * depth)
    friction: fraction of flow lost per second, in [0, 1]; 0 = none; 1 = no flow carries over between
        substeps (results then depend on the substep count)
    pipe_area: "depth": A = h_face * w (waves at sqrt(g h)); a float > 0: constant A in world units^2 (the
        classic game model)
    manning: Manning's n, s / world units^(1/3), >= 0; > 0 adds depth-dependent bed friction (Bates et al.
        2010, implicit): a thin sheet runs slower than a deep river, and steady flow down a slope S0
        reaches the normal depth (n q / sqrt(S0))^(3/5); 0 = none (typical: 0.01 smooth, 0.03 a river,
        0.1 a forest floor)
    fixed_substep: seconds, > 0, or None; step(dt) advances whole substeps of this length and carries the
        remainder to the next call, so the water does not depend on the frame rate
    inertia: the face flows carry momentum (advection of momentum, Stelling & Duinmeijer 2003, with de
        Almeida et al. 2012's weighting against the grid-scale ripple): dam breaks run at the speed of
        the Ritter and Stoker solutions, a jet carries on; False: the classic pipes
    """
    cell_size: float = 1.0
    gravity: float = 9.81
    friction: float = 0.02
    pipe_area: str | float = "depth"
    manning: float = 0.0
    fixed_substep: float | None = None
    inertia: bool = False

    def __post_init__(self):
        check.real32("cell_size", self.cell_size, low=0.0, low_open=True)
        check.real32("gravity", self.gravity, low=0.0, low_open=True)
        check.real("friction", self.friction, low=0.0, high=1.0)
        check.real32("manning", self.manning, low=0.0, high=10.0)
        if self.fixed_substep is not None:
            check.real32("fixed_substep", self.fixed_substep, low=0.0, low_open=True, high=60.0)
        if not isinstance(self.inertia, bool):
            raise TypeError(f"inertia: expected True or False, got {type(self.inertia).__name__} {self.inertia!r}")
        if isinstance(self.pipe_area, str):
            if self.pipe_area != "depth":
                raise ValueError(f"pipe_area: expected 'depth' or a number > 0, got {self.pipe_area!r}")
        else:
            try:
                check.real32("pipe_area", self.pipe_area, low=0.0, low_open=True)
            except TypeError:
                raise TypeError(f"pipe_area: expected 'depth' or a number > 0, got {self.pipe_area!r}") from None

    @property
    def depth_area(self) -> bool:
        return self.pipe_area == "depth"

    def friction_factor(self, dt: float) -> float:
        """(1 - friction)^dt: what is left of a flow after dt seconds of drag."""
        return (1.0 - self.friction) ** dt if self.friction < 1.0 else 0.0


@dataclass(frozen=True)
class Erosion:
    """Terrain that the water shapes (grid.erosion = hydro.Erosion(...)), validated on creation; frozen.
    After Mei et al. 2007 and Stava et al. 2008, made conservative (docs/design.md, "Erosion"): material
    (terrain + suspended sediment) only moves, and leaves only through open sides.

    capacity: s; the sediment the water carries, as settled height, is capacity x speed x max(sin slope,
        0.01), no more than its depth; >= 0
    dissolve: 1/s; the bed dissolves at dissolve x (capacity - sediment) where the water carries less;
        >= 0
    deposit: 1/s; sediment settles at deposit x (sediment - capacity) where it carries more; >= 0
    talus: degrees in (0, 90); beds steeper than this slump, wet or dry
    slump: 1/s; the share of a slope's excess height over the talus angle that moves down it a second;
        >= 0
    """
    capacity: float = 0.05
    dissolve: float = 0.3
    deposit: float = 0.3
    talus: float = 40.0
    slump: float = 0.5

    def __post_init__(self):
        for name in ("capacity", "dissolve", "deposit", "slump"):
            check.real32(name, getattr(self, name), low=0.0)
        check.real32("talus", self.talus, low=0.0, low_open=True, high=90.0, high_open=True)


@dataclass(frozen=True)
class Geometry:
    """Per-lattice constants of the pipe network (square grid or triangular lattice)."""
    cell_area: float                # S, world units^2
    face_width: float               # w
    pipe_length: float              # l
    mu: float                       # largest eigenvalue of the dimensionless graph Laplacian
    faces_per_cell: int             # 4 (square) or 6 (hex)

    @staticmethod
    def square(cell_size: float) -> "Geometry":
        return Geometry(cell_size * cell_size, cell_size, cell_size, 8.0, 4)

    @staticmethod
    def hexagonal(spacing: float) -> "Geometry":
        return Geometry(math.sqrt(3.0) / 2.0 * spacing * spacing, spacing / math.sqrt(3.0), spacing, 9.0, 6)


def stable(dt: float, coupling: float, geometry: Geometry, params: WaterParams) -> bool:
    """The symplectic-Euler pipe step is stable iff dt^2 * (K/S) * mu <= 2 (1 + r), r = (1-f)^dt,
    where `coupling` = K/S = g A / (l S) for the widest pipe (the scheme: hydro/reference/water.py)."""
    r = params.friction_factor(dt)
    return dt * dt * coupling * geometry.mu <= 2.0 * (1.0 + r)


def checked_substep(dt: float, substeps: int, coupling: float, geometry: Geometry, params: WaterParams,
                    water: str) -> float:
    """dt / substeps, where it is stable for pipes of `coupling`; else ValueError naming the limit for
    `water` (what the grid measured: "measured", "now")."""
    sub = dt / substeps
    if not stable(sub, coupling, geometry, params):
        limit = max_stable_dt(coupling, geometry, params)
        raise ValueError(f"substeps: dt/substeps = {sub:.4g} s is beyond the stable limit {limit:.4g} s for "
                         f"the deepest water {water} (max_stable_dt()); use substeps >= "
                         f"{math.ceil(dt / limit)} or omit substeps")
    return sub


def check_substep_count(n: int, dt: float, most: int) -> None:
    """Refuse a call that needs more than `most` substeps, before anything runs."""
    if n > most:
        raise ValueError(f"dt: {dt} s needs {n} substeps on this grid, more than {most}; "
                         f"call step() more often with a smaller dt")


def max_stable_dt(coupling: float, geometry: Geometry, params: WaterParams) -> float:
    """The largest stable substep (bisection on `stable`, which is monotone in dt)."""
    if coupling <= 0.0:
        return math.inf
    lo = math.sqrt(2.0 / (coupling * geometry.mu))          # r = 0 always passes
    hi = math.sqrt(4.0 / (coupling * geometry.mu))          # r = 1 is the best case
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if stable(mid, coupling, geometry, params):
            lo = mid
        else:
            hi = mid
    return lo


# Inertia: de Almeida et al.'s weighting against the grid-scale ripple keeps THETA of a face's flow at a
# Courant number of COURANT_0 (docs/design.md, "Inertia")
THETA, COURANT_0 = 0.8, 0.5


def smoothing_weight(dt: float, depth: float, geometry: Geometry, params: WaterParams) -> float:
    """1 - theta for a substep of dt on water `depth` deep: 1 - THETA at a Courant number sqrt(g depth)
    dt / l of COURANT_0, less in proportion below it, so it smooths as much per second whatever the
    substep."""
    courant = dt * math.sqrt(params.gravity * max(depth, 0.0)) / geometry.pipe_length
    return (1.0 - THETA) * min(courant / COURANT_0, 1.0)


# With inertia, momentum crosses at most this much of a cell a substep (upwind advection's bound)
ADVECTIVE_COURANT = 0.5


# A step() call's automatic substeps stay this far inside the stable limit, and plan for the deepest water
# having grown this much in each call since it was measured (hydro.water, hydro.water_fragment)
AUTO_SAFETY = 0.9
DEPTH_MARGIN = 1.25


def coupling(params: WaterParams, geometry: Geometry, depth: float, dt: float, *, max_cell_inflow: float = 0.0,
             max_supply: float = 0.0, max_level: float | None = None, min_edge_bed: float = 0.0) -> float:
    """Upper bound of K/S = g A / (l S) over every pipe during a coming `dt`: pipes of a constant area by
    that area; pipes of the water's depth `depth` deep (the deepest water, with its margin), plus what an
    inflow can pile into one cell (`max_cell_inflow`, volume/s) and what rain and springs add to one
    (`max_supply`, m/s) during dt, and at least a level face's pipe (the outside surface `max_level`
    over the lowest bed on the grid's edge)."""
    if not params.depth_area:
        return params.gravity * float(params.pipe_area) / (geometry.pipe_length * geometry.cell_area)
    depth += max_cell_inflow * dt / geometry.cell_area
    depth += max_supply * dt
    if max_level is not None:
        depth = max(depth, max_level - min_edge_bed)
    return params.gravity * depth * geometry.face_width / (geometry.pipe_length * geometry.cell_area)


def auto_substeps(params: WaterParams, geometry: Geometry, coupling_bound: float, dt: float,
                  speed: float = 0.0) -> int:
    """The fewest equal substeps of `dt` AUTO_SAFETY inside the stable limit of pipes of `coupling_bound`
    (coupling()), and with inertia inside the advective bound of water `speed` fast."""
    limit = max_stable_dt(coupling_bound, geometry, params)
    if params.inertia and speed > 0:
        limit = min(limit, ADVECTIVE_COURANT * geometry.pipe_length / speed)
    return max(1, math.ceil(dt / (AUTO_SAFETY * limit) - 1e-9))


def speed_cap(dt: float, geometry: Geometry) -> float:
    """The fastest a face's momentum moves in a substep of dt: ADVECTIVE_COURANT l / dt."""
    return ADVECTIVE_COURANT * geometry.pipe_length / dt


def stable_face_depth(dt: float, geometry: Geometry, params: WaterParams) -> float:
    """The deepest pipe (h_face, world units) a substep of dt is stable for in depth mode: the bound of
    `stable` solved for h, with K/S = g h w / (l S). The pipe equations cap h_face here, so water that
    got deeper during a step() than its substeps were chosen for moves as if it were this deep: waves in
    it slow down, nothing goes unstable. Capped at float32's range."""
    per_depth = params.gravity * geometry.face_width / (geometry.pipe_length * geometry.cell_area)
    cap = 2.0 * (1.0 + params.friction_factor(dt)) / (dt * dt * per_depth * geometry.mu)
    return min(cap, 3.0e38)


def model_uniforms(params: WaterParams, geometry: Geometry, size: tuple, dt: float, smoothing: float,
                   hexagonal: bool) -> dict:
    """common/model.glsl's uniforms for a substep of dt on an nx x ny grid (`size`), its constants worked
    out in float64 (the pipe equation's dt g / l times the face width, or times the constant area); with
    inertia, de Almeida's weight `smoothing` (smoothing_weight). Both backends set these."""
    p, geo = params, geometry
    gain = dt * p.gravity / geo.pipe_length * (geo.face_width if p.depth_area else float(p.pipe_area))
    return dict(u_size=size, u_dt=dt, u_friction_factor=p.friction_factor(dt), u_flow_gain=gain,
                u_cell_area=geo.cell_area, u_max_face_depth=stable_face_depth(dt, geo, p),
                u_manning_gain=dt * p.gravity * p.manning ** 2 / geo.face_width, u_smoothing=smoothing,
                u_advection_gain=dt / geo.pipe_length * (2.0 / 3.0 if hexagonal else 1.0),
                u_face_width=geo.face_width, u_speed_cap=speed_cap(dt, geo))


def fixed_substeps(carry: float, dt: float, fixed: float, substeps, most: int) -> tuple[int, float]:
    """step(dt) with fixed_substep `fixed`: the whole substeps that dt and the `carry` left by the last call
    hold, and the carry after them; ValueError where `substeps` is given or there are more than `most`."""
    if substeps is not None:
        raise ValueError(f"substeps: this grid steps in fixed substeps of {fixed} s (fixed_substep); "
                         f"call step(dt) alone")
    total = carry + dt
    n = math.floor(total / fixed + 1e-6)          # a rounding residue is not a substep short
    if n > most:
        raise ValueError(f"dt: {dt} s is {n} substeps of fixed_substep = {fixed} s, more than {most}; "
                         f"call step() more often with a smaller dt")
    return n, max(total - n * fixed, 0.0)
