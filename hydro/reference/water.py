"""NumPy float64 statement of the virtual-pipes water model (square grid and triangular lattice): the
oracle the GPU kernels are tested against. It states each piece of the model once, as
shaders/common/model.glsl does, and shares none of the product's arithmetic: it takes a WaterParams
record and a boundary table (their formats are the contract) and works out the rest itself.

A substep: accelerate (every pipe by its surface difference, friction (1-f)^dt; boundary faces by
their table entry), scale_outflow (every outgoing face by its upwind cell's outflow scale), move
(every column by its faces' net flow). Conventions: arrays [y, x]; flow_x (ny, nx+1) from (x-1, y) to
(x, y); flow_y (ny+1, nx) from (x, y-1) to (x, y); hex flow_z (ny+1, nx+1) from (x, y-1) to (x-1, y).
References: Mei, Decaudin & Hu 2007 (outflow scaling); lisyarus, "Simulating water over terrain" (2025,
signed staggered flows, friction (1-f)^dt); Bates, Horritt & Fewtrell 2010 (A = h_face * w).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..params import WaterParams

# table kinds (hydro.boundary's format)
WALL, INFLOW, OUTFLOW, LEVEL = 0, 1, 2, 3
SIDES = ("left", "right", "bottom", "top")


@dataclass(frozen=True)
class Lattice:
    """The pipe network's constants: cell area S, face width w, pipe length l, and mu, the largest
    eigenvalue of the lattice's graph Laplacian (the stability bound's)."""
    cell_area: float
    face_width: float
    pipe_length: float
    mu: float

    @staticmethod
    def of(hexagonal: bool, spacing: float) -> "Lattice":
        if hexagonal:               # hexagons of the triangular lattice: S = (sqrt 3 / 2) s^2, w = s / sqrt 3
            return Lattice(math.sqrt(3.0) / 2.0 * spacing ** 2, spacing / math.sqrt(3.0), spacing, 9.0)
        return Lattice(spacing ** 2, spacing, spacing, 8.0)


@dataclass
class State:
    """Everything one step reads and writes, in float64."""
    terrain: np.ndarray
    water: np.ndarray
    flow_x: np.ndarray
    flow_y: np.ndarray
    flow_z: np.ndarray | None = None
    table: np.ndarray | None = None                     # boundary table (hydro.boundary's format)
    ledger: np.ndarray | None = None                    # volume into the grid per boundary face
    params: WaterParams = field(default_factory=WaterParams)
    # the water cycle: rain (m/s, a number or (ny, nx)), evaporation (m/s), sources [(x, y, radius,
    # rate m^3/s)]; `owed` what the column is owed (cycled()); `cycle_ledger` what each part added
    rain: float | np.ndarray = 0.0
    evaporation: float = 0.0
    sources: list = field(default_factory=list)
    owed: np.ndarray | None = None
    cycle_ledger: dict = field(default_factory=lambda: {"rain": 0.0, "sources": 0.0, "evaporation": 0.0,
                                                        "drains": 0.0})
    # erosion (hydro.reference.erosion): the hydro.Erosion record or None, the suspended sediment and
    # bedrock (ny, nx), and the sediment that entered through the sides (negative: left)
    erosion: object = None
    sediment: np.ndarray | None = None
    bedrock: np.ndarray | None = None
    sediment_out: float = 0.0

    @property
    def hexagonal(self) -> bool:
        return self.flow_z is not None

    @property
    def lattice(self) -> Lattice:
        return Lattice.of(self.hexagonal, self.params.cell_size)

    def flows(self):
        return [self.flow_x, self.flow_y] + ([self.flow_z] if self.hexagonal else [])

    def volume(self) -> float:
        return float(self.water.sum() * self.lattice.cell_area)

    @staticmethod
    def new(terrain, water=None, *, hexagonal=False, params=None) -> "State":
        terrain = np.asarray(terrain, np.float64)
        ny, nx = terrain.shape
        water = np.zeros_like(terrain) if water is None else np.asarray(water, np.float64).copy()
        faces = len(boundary_faces(nx, ny, hexagonal)[0])
        table = np.zeros(faces, np.dtype([("kind", "<i4"), ("value", "<f4")]))
        return State(terrain.copy(), water, np.zeros((ny, nx + 1)), np.zeros((ny + 1, nx)),
                     np.zeros((ny + 1, nx + 1)) if hexagonal else None, table, np.zeros(faces),
                     params or WaterParams())


def boundary_faces(nx: int, ny: int, hexagonal: bool):
    """The boundary faces in table order, as (array, i, j) arrays (array 0: flow_x, 1: flow_y, 2: flow_z):
    every face with one end on the grid and one off it, ordered by side (left, right, bottom, top), then
    by array (x or y first, z after), then along the side. A face belongs to the side its outside end
    lies beyond; the hex lattice's two corner z faces joining a corner cell to a point beyond two sides
    go to the left and right sides."""
    faces = []
    arrays = [(0, 0, 1, -1, 0, 0), (1, 0, 0, 0, -1, 0)] + [(2, 0, 0, -1, 1, -1)] * hexagonal
    for a, *_ in arrays:
        rows, cols = {0: (ny, nx + 1), 1: (ny + 1, nx), 2: (ny + 1, nx + 1)}[a]
        for j in range(rows):
            for i in range(cols):
                if a == 0:
                    ends = ((i - 1, j), (i, j))
                elif a == 1:
                    ends = ((i, j - 1), (i, j))
                else:
                    ends = ((i, j - 1), (i - 1, j))
                inside = [0 <= x < nx and 0 <= y < ny for x, y in ends]
                if inside[0] == inside[1]:
                    continue
                ox, oy = ends[0] if not inside[0] else ends[1]
                cx, cy = ends[1] if not inside[0] else ends[0]
                if ox < 0:
                    side = "left"
                elif ox >= nx:
                    side = "right"
                else:
                    side = "bottom" if oy < 0 else "top"
                along = cy if side in ("left", "right") else cx
                faces.append((SIDES.index(side), a > 1, along, a, i, j))
    faces.sort()
    arr = np.array([f[3:] for f in faces], np.int64).reshape(-1, 3)
    return arr[:, 0], arr[:, 1], arr[:, 2]


def friction_factor(params: WaterParams, dt: float) -> float:
    """(1 - friction)^dt: what is left of a flow after dt seconds."""
    return 0.0 if params.friction >= 1.0 else (1.0 - params.friction) ** dt


def face_depth_cap(params: WaterParams, lat: Lattice, dt: float) -> float:
    """The deepest pipe a substep of dt is stable for (depth mode): dt^2 (g h w / (l S)) mu <= 2 (1 + r)
    solved for h, capped at float32's range."""
    per_depth = params.gravity * lat.face_width / (lat.pipe_length * lat.cell_area)
    return min(2.0 * (1.0 + friction_factor(params, dt)) / (dt * dt * per_depth * lat.mu), 3.0e38)


def face_depth(eta_a, eta_b, z_a, z_b, cap):
    """A face's flow depth: max(eta) - max(z), the water above the higher bed, capped at the stable depth."""
    return np.minimum(np.maximum(eta_a, eta_b) - np.maximum(z_a, z_b), cap)


def pipe_flow(params, lat, dt, q, depth, eta_a, eta_b, advected=0.0, q_old=None):
    """The pipe flow from column a to b: q (1 - f)^dt - (the momentum advected away, inertia) + dt g A / l
    (eta_a - eta_b), A = depth * w (or the constant area); with Manning's n, divided by
    1 + dt g n^2 |q_old / w| / depth^(7/3) (Bates et al. 2010), q_old the flow before (q where not given)."""
    area = depth * lat.face_width if params.depth_area else float(params.pipe_area)
    flow = q * friction_factor(params, dt) - advected + dt * params.gravity / lat.pipe_length * area * (eta_a - eta_b)
    if params.manning > 0:
        q_old = q if q_old is None else q_old
        flow = flow / (1.0 + dt * params.gravity * params.manning ** 2 * np.abs(q_old) / lat.face_width
                       / np.maximum(depth, 1e-6) ** (7.0 / 3.0))
    return flow


def _pairs(ny, nx, hexagonal):
    """(array index, face slice, from-cell slice, to-cell slice) for the faces between two cells."""
    pairs = [(0, np.s_[:, 1:nx], np.s_[:, 0:nx - 1], np.s_[:, 1:nx]),
             (1, np.s_[1:ny, :], np.s_[0:ny - 1, :], np.s_[1:ny, :])]
    if hexagonal:   # z face (x, y): from (x, y-1) to (x-1, y)
        pairs.append((2, np.s_[1:ny, 1:nx], np.s_[0:ny - 1, 1:nx], np.s_[1:ny, 0:nx - 1]))
    return pairs


def _boundary_cells(s: State):
    """Per boundary face: its array, column, row, its inside cell (x, y) and +1 where positive flow enters."""
    ny, nx = s.water.shape
    a, i, j = boundary_faces(nx, ny, s.hexagonal)
    fx = np.where(a == 0, i - 1, i)
    fy = np.where(a == 0, j, j - 1)
    tx = np.where(a == 2, i - 1, i)
    to_in = (tx >= 0) & (tx < nx) & (j >= 0) & (j < ny)
    return a, i, j, np.where(to_in, tx, fx), np.where(to_in, j, fy), np.where(to_in, 1.0, -1.0)


# Inertia: the smoothing weight theta of de Almeida et al. (2012) at a Courant number of COURANT_0, scaled
# to a face's own Courant number so that it smooths as much per second whatever the substep; faces
# shallower than MIN_DEPTH carry no momentum (their velocity is 0).
THETA, COURANT_0, MIN_DEPTH = 0.8, 0.5, 1e-4
# and a face's velocity is at most ADVECTIVE_COURANT cells a substep (upwind advection's bound)
ADVECTIVE_COURANT = 0.5

# Per lattice axis (x, y and hex z): the cell offset (dy, dx) of the neighbour across a face's positive
# direction, and the slices of the flows that enter and leave each cell (ny, nx) along it.
AXES = ((0, 1), (1, 0), (1, -1))


def _cell_faces(flows, ny, nx, k):
    """(entering, leaving) flows of every cell along axis k, each (ny, nx)."""
    q = flows[k]
    if k == 0:
        return q[:, :-1], q[:, 1:]
    if k == 1:
        return q[:-1, :], q[1:, :]
    return q[0:ny, 1:nx + 1], q[1:ny + 1, 0:nx]


def inertia_depth(h_a, h_b, depth):
    """The depth a face's momentum and pressure work with: the mean of its two columns' depths (the
    pressure term then conserves momentum, so shocks run at the right speed), no more than its flow
    depth (the water over the higher bed)."""
    return np.minimum(0.5 * (h_a + h_b), depth)


def _face_velocities(s, cap, dt):
    """Each face's velocity (world units / s): flow / (w * its inertia depth), 0 where that is below
    MIN_DEPTH, at most ADVECTIVE_COURANT l / dt; a boundary face takes its inside column for both sides,
    a face with no cell none."""
    lat, (ny, nx) = s.lattice, s.water.shape
    z, h = s.terrain, s.water
    eta = z + h
    flows = _standing(s)
    depths = [np.zeros_like(q) for q in flows]
    for k, face, a, b in _pairs(ny, nx, s.hexagonal):
        depths[k][face] = inertia_depth(h[a], h[b], face_depth(eta[a], eta[b], z[a], z[b], cap))
    arr, i, j, cx, cy, _ = _boundary_cells(s)
    hc, ec, zc = h[cy, cx], eta[cy, cx], z[cy, cx]
    for k, ii, jj, d in zip(arr, i, j, inertia_depth(hc, hc, face_depth(ec, ec, zc, zc, cap))):
        depths[k][jj, ii] = d
    top = ADVECTIVE_COURANT * lat.pipe_length / dt
    return [np.where(d > MIN_DEPTH, np.clip(q / (lat.face_width * np.maximum(d, MIN_DEPTH)), -top, top), 0.0)
            for q, d in zip(flows, depths)]


def _shifted(arr, face, dy, dx):
    """arr (a face array) at the faces of `face` (a slice pair) moved by (dy, dx), 0 past the edge."""
    padded = np.pad(arr, 1)
    (r0, r1, _), (c0, c1, _) = (sl.indices(n) for sl, n in zip(face, arr.shape))
    return padded[r0 + 1 + dy:r1 + 1 + dy, c0 + 1 + dx:c1 + 1 + dx]


def _standing(s: State) -> list[np.ndarray]:
    """The flows as a substep finds them: a wall's face carries nothing, whatever it held (a side opened
    before, the flow setters), nor does a face joining no cell of the grid."""
    ny, nx = s.water.shape
    out = [q.copy() for q in s.flows()]
    arr, i, j = boundary_faces(nx, ny, s.hexagonal)
    for k, ii, jj in zip(arr[s.table["kind"] == WALL], i[s.table["kind"] == WALL], j[s.table["kind"] == WALL]):
        out[k][jj, ii] = 0.0
    if s.hexagonal:
        out[2][0, 0] = out[2][ny, nx] = 0.0
    return out


def advection(s: State, dt: float, cap: float) -> list[np.ndarray]:
    """The momentum advection of every interior face, d(q u)/dx summed over the lattice's axes in flux
    form on the staggered grid (Stelling & Duinmeijer 2003): along a face's own axis the flux through
    each of its two cells is the cell's mean discharge times the upwind velocity of the two faces; across
    it, the flux between the face and its parallel neighbour is the mean of the two discharges joining
    them times the upwind one of their velocities. Volume rate per second (world units^3/s^2), to be
    multiplied by dt and taken from the flow; 0 on boundary faces. The hex lattice's three axes form a
    tight frame, so each sum is weighted 2/3."""
    lat, (ny, nx) = s.lattice, s.water.shape
    w, weight = lat.face_width, (2.0 / 3.0 if s.hexagonal else 1.0)
    flows, vel = _standing(s), _face_velocities(s, cap, dt)
    axes = range(3 if s.hexagonal else 2)
    out = [np.zeros_like(q) for q in flows]
    for k, face, a, b in _pairs(ny, nx, s.hexagonal):
        q_in, q_out = _cell_faces(flows, ny, nx, k)
        u_in, u_out = _cell_faces(vel, ny, nx, k)
        mean = 0.5 * (q_in + q_out) / w                 # per unit width, at the cells
        flux = mean * np.where(mean > 0, u_in, u_out)
        total = flux[b] - flux[a]
        u = vel[k][face]
        for m in axes:
            if m == k:
                continue
            dy, dx = AXES[m]
            m_in, m_out = _cell_faces(flows, ny, nx, m)
            ahead, behind = 0.5 * (m_out[a] + m_out[b]) / w, 0.5 * (m_in[a] + m_in[b]) / w
            u_ahead, u_behind = _shifted(vel[k], face, dy, dx), _shifted(vel[k], face, -dy, -dx)
            total = total + ahead * np.where(ahead > 0, u, u_ahead) - behind * np.where(behind > 0, u_behind, u)
        out[k][face] = weight * total * w / lat.pipe_length
    return out


def carried_flows(s: State) -> list[np.ndarray]:
    """Per interior face, the flow its water carries whatever its direction (Manning's friction with
    inertia): its own flow and, along each other axis, the mean of that axis's four faces around it,
    put together by the lattice's frame: sqrt(q^2 + sum of those^2), times 2/3 under the root on the hex
    lattice (its axes' tight frame: |v|^2 = 2/3 sum of (v.e_k)^2)."""
    ny, nx = s.water.shape
    flows = _standing(s)
    frame = 2.0 / 3.0 if s.hexagonal else 1.0
    out = [np.zeros_like(q) for q in flows]
    for k, face, a, b in _pairs(ny, nx, s.hexagonal):
        total = flows[k][face] ** 2
        for m in range(3 if s.hexagonal else 2):
            if m != k:
                m_in, m_out = _cell_faces(flows, ny, nx, m)
                total = total + (0.25 * (m_out[a] + m_out[b] + m_in[a] + m_in[b])) ** 2
        out[k][face] = np.sqrt(frame * total)
    return out


def smoothing_weight(params: WaterParams, lat: Lattice, dt: float, depth: float) -> float:
    """1 - theta of de Almeida et al. (2012) for a substep of dt on water `depth` deep: (1 - THETA) at a
    Courant number sqrt(g depth) dt / l of COURANT_0 and below it in proportion, so the weighting smooths
    as much per second whatever the substep."""
    courant = dt * math.sqrt(params.gravity * max(depth, 0.0)) / lat.pipe_length
    return (1.0 - THETA) * min(courant / COURANT_0, 1.0)


def smoothed(s: State, rest: float) -> list[np.ndarray]:
    """The flows with de Almeida's weighting against the grid-scale ripple: (1 - rest) q + rest / 2 times
    the two faces beside it on its axis; interior faces only."""
    ny, nx = s.water.shape
    flows = _standing(s)
    out = [q.copy() for q in flows]
    for k, face, a, b in _pairs(ny, nx, s.hexagonal):
        q_in, q_out = _cell_faces(flows, ny, nx, k)
        out[k][face] = (1.0 - rest) * flows[k][face] + 0.5 * rest * (q_in[a] + q_out[b])
    return out


def accelerate(s: State, dt: float, smoothing: float | None = None) -> list[np.ndarray]:
    """Accelerated (not yet scaled) flows, boundary faces by their table entry. With inertia, `smoothing`
    is de Almeida's weight (smoothing_weight; by default for the deepest water now)."""
    p, lat = s.params, s.lattice
    ny, nx = s.water.shape
    z, h = s.terrain, s.water
    eta = z + h
    cap = face_depth_cap(p, lat, dt)
    out = [np.zeros_like(q) for q in s.flows()]
    if p.inertia:
        if smoothing is None:
            smoothing = smoothing_weight(p, lat, dt, float(h.max()))
        start, adv, carried = smoothed(s, smoothing), advection(s, dt, cap), carried_flows(s)
    for k, face, a, b in _pairs(ny, nx, s.hexagonal):
        depth = face_depth(eta[a], eta[b], z[a], z[b], cap)
        if p.inertia:
            depth = inertia_depth(h[a], h[b], depth)
            out[k][face] = pipe_flow(p, lat, dt, start[k][face], depth, eta[a], eta[b], dt * adv[k][face],
                                     carried[k][face])
        else:
            out[k][face] = pipe_flow(p, lat, dt, s.flows()[k][face], depth, eta[a], eta[b])
    arr, i, j, cx, cy, sign = _boundary_cells(s)
    kind, value = s.table["kind"], s.table["value"].astype(np.float64)
    q_old = np.array([s.flows()[k][jj, ii] for k, ii, jj in zip(arr, i, j)])
    zc, etac = z[cy, cx], eta[cy, cx]
    depth = face_depth(value, etac, zc, zc, cap)
    q = np.select([kind == INFLOW, kind == OUTFLOW, kind == LEVEL],
                  [sign * value, -sign * value, pipe_flow(p, lat, dt, q_old, depth, sign * value, sign * etac)], 0.0)
    for k, ii, jj, qq in zip(arr, i, j, q):
        out[k][jj, ii] = qq
    return out


def outflow_scale(water, flows, dt, lat) -> np.ndarray:
    """K = min(1, h S / (dt * sum of outgoing flows)) per cell."""
    qx, qy = flows[0], flows[1]
    out = (np.maximum(-qx[:, :-1], 0) + np.maximum(qx[:, 1:], 0)
           + np.maximum(-qy[:-1, :], 0) + np.maximum(qy[1:, :], 0))
    if len(flows) == 3:
        ny, nx = water.shape
        qz = flows[2]
        out += np.maximum(-qz[0:ny, 1:nx + 1], 0) + np.maximum(qz[1:ny + 1, 0:nx], 0)
    held, leaving = water * lat.cell_area, out * dt
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(leaving > held, held / np.where(leaving > 0, leaving, 1.0), 1.0)


def scale_outflow(s: State, flows, dt: float):
    """Flows with every outgoing face scaled by its upwind cell's K (1 outside the grid), and the volume
    that crossed each boundary face into the grid."""
    ny, nx = s.water.shape
    kp = np.ones((ny + 2, nx + 2))
    kp[1:-1, 1:-1] = outflow_scale(s.water, flows, dt, s.lattice)
    qx, qy = flows[0], flows[1]
    res = [np.where(qx > 0, qx * kp[1:-1, 0:nx + 1], qx * kp[1:-1, 1:nx + 2]),
           np.where(qy > 0, qy * kp[0:ny + 1, 1:-1], qy * kp[1:ny + 2, 1:-1])]
    if s.hexagonal:
        qz = flows[2]
        res.append(np.where(qz > 0, qz * kp[0:ny + 1, 1:nx + 2], qz * kp[1:ny + 2, 0:nx + 1]))
    arr, i, j, _, _, sign = _boundary_cells(s)
    q = np.array([res[k][jj, ii] for k, ii, jj in zip(arr, i, j)])
    return res, dt * sign * q


def move(s: State, flows, dt: float) -> np.ndarray:
    """h + dt/S * (in - out), clamped at 0 against rounding."""
    ny, nx = s.water.shape
    qx, qy = flows[0], flows[1]
    net = qx[:, :-1] - qx[:, 1:] + qy[:-1, :] - qy[1:, :]
    if s.hexagonal:
        qz = flows[2]
        net = net + qz[0:ny, 1:nx + 1] - qz[1:ny + 1, 0:nx]
    return np.maximum(s.water + dt / s.lattice.cell_area * net, 0.0)


# ------------------------------------------------------------------------------------------ water cycle

def source_rates(s: State) -> tuple[np.ndarray, np.ndarray]:
    """(springs, drains): m/s of depth per cell from s.sources, each a brush (brush_weights) scaled to
    sum to its |rate| over the cell area."""
    springs, drains = np.zeros_like(s.water), np.zeros_like(s.water)
    for x, y, radius, rate in s.sources:
        w = brush_weights(s.water.shape, x, y, radius, s.hexagonal)
        (springs if rate > 0 else drains)[...] += w / w.sum() * abs(rate) / s.lattice.cell_area
    return springs, drains


def cycled(water, dt, supply, evaporation, drain, owed):
    """The water cycle after a substep's move: supply * dt added, then up to evaporation * dt and up to
    drain * dt taken, never more than is there. `owed` (supply, evaporation), what earlier substeps
    could not add or take, joins this one's (float64 adds the supply whole; what evaporation could not
    take is owed, as in float32). Returns (water, evaporated, drained, owed)."""
    total = water + dt * supply + owed[0]
    wet = np.maximum(total, 0.0)
    owed_supply = total - wet
    demand = owed[1] + dt * evaporation
    evaporated = np.minimum(wet, demand)
    left = wet - evaporated
    owed_evaporation = np.where(left > 0, demand - evaporated, 0.0)
    drained = np.minimum(left, dt * drain)
    return left - drained, evaporated, drained, np.stack([owed_supply, owed_evaporation])


def cycle(s: State, dt: float) -> None:
    """One substep of the water cycle on `s`, booked in s.cycle_ledger."""
    springs, drains = source_rates(s)
    rain = np.broadcast_to(np.asarray(s.rain, np.float64), s.water.shape)
    if s.owed is None:
        s.owed = np.zeros((2,) + s.water.shape)
    s.water, evaporated, drained, s.owed = cycled(s.water, dt, rain + springs, s.evaporation, drains, s.owed)
    area, book = s.lattice.cell_area, s.cycle_ledger
    book["rain"] += dt * rain.sum() * area
    book["sources"] += dt * springs.sum() * area
    book["evaporation"] -= evaporated.sum() * area
    book["drains"] -= drained.sum() * area


def has_cycle(s: State) -> bool:
    return bool(np.any(np.asarray(s.rain) > 0)) or s.evaporation > 0 or bool(s.sources)


def step(s: State, dt: float, substeps: int = 1, smoothing: float | None = None) -> State:
    """Advance `s` in place by dt in `substeps` equal substeps (no stability check here); `smoothing`:
    accelerate's. A substep: accelerate, scale_outflow, move, then the water cycle, then erosion
    (hydro.reference.erosion)."""
    h = dt / substeps
    for _ in range(substeps):
        flows, crossed = scale_outflow(s, accelerate(s, h, smoothing), h)
        s.water = move(s, flows, h)
        s.flow_x, s.flow_y = flows[0], flows[1]
        if s.hexagonal:
            s.flow_z = flows[2]
        s.ledger = s.ledger + crossed
        if has_cycle(s):
            cycle(s, h)
        if s.erosion is not None:
            from . import erosion
            if s.sediment is None:
                s.sediment = np.zeros_like(s.water)
            s.sediment_out += erosion.erode(s, s.erosion, h)
    return s


def stable(params: WaterParams, hexagonal: bool, dt: float, max_depth: float) -> bool:
    """Whether a substep of dt is stable for pipes of depth up to max_depth: dt^2 (K/S) mu <= 2 (1 + r),
    K/S = g A / (l S) (symplectic Euler on the lattice's Laplacian)."""
    lat = Lattice.of(hexagonal, params.cell_size)
    area = max_depth * lat.face_width if params.depth_area else float(params.pipe_area)
    coupling = params.gravity * area / (lat.pipe_length * lat.cell_area)
    return dt * dt * coupling * lat.mu <= 2.0 * (1.0 + friction_factor(params, dt))


# --------------------------------------------------------------------------------------------- brushes

def brush_weights(shape, x, y, radius, hexagonal: bool) -> np.ndarray:
    """A smooth round brush's weight at every cell of a (ny, nx) grid: (1 - (d/R)^2)^2 within R of grid
    point (x, y), d the world distance in lattice spacings; where it reaches no cell centre, 1 at the
    lattice point nearest (x, y) if that is a cell of the grid (all zeros otherwise)."""
    ny, nx = shape
    gy, gx = np.mgrid[0:ny, 0:nx].astype(np.float64)
    d2 = _distance2(gx, gy, x, y, hexagonal)
    w = np.maximum(1.0 - d2 / (radius * radius), 0.0) ** 2
    if w.any():
        return w
    w = np.zeros(shape)
    i, j = nearest_point(x, y, hexagonal)
    if 0 <= i < nx and 0 <= j < ny:
        w[j, i] = 1.0
    return w


def _distance2(gx, gy, x, y, hexagonal):
    """Squared world distance (in lattice spacings) between grid points (gx, gy) and (x, y)."""
    dx, dy = np.asarray(gx, np.float64) - x, np.asarray(gy, np.float64) - y
    if hexagonal:                   # axial: world offset dx (1, 0) + dy (1/2, sqrt(3)/2)
        return (dx + 0.5 * dy) ** 2 + 0.75 * dy * dy
    return dx * dx + dy * dy


def nearest_point(x, y, hexagonal: bool) -> tuple[int, int]:
    """The lattice point nearest to grid point (x, y), by distance among the points around it; of points
    as near, the one of larger x, then of larger y."""
    cands = [(i, j) for i in range(math.floor(x) - 1, math.floor(x) + 3)
             for j in range(math.floor(y) - 1, math.floor(y) + 3)]
    return min(cands, key=lambda c: (float(_distance2(c[0], c[1], x, y, hexagonal)), -c[0], -c[1]))


def dig(s: State, x, y, radius, depth) -> None:
    s.terrain = np.clip(s.terrain - depth * brush_weights(s.water.shape, x, y, radius, s.hexagonal), -3.0e38, 3.0e38)


def add_water(s: State, x, y, radius, volume) -> None:
    w = brush_weights(s.water.shape, x, y, radius, s.hexagonal)
    s.water = s.water + volume * w / (w.sum() * s.lattice.cell_area)
