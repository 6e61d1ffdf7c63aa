"""NumPy float64 statement of SmokeGrid's model (Stable Fluids on a staggered MAC grid): the twin of
every pass, written apart from the product's code, which the tests compare against.

Each pass function mirrors one shader in shaders/smoke/ and the SmokeGrid method that dispatches it
(`advect` <-> advect.comp <-> SmokeGrid._advect, ...); `step` puts them together in SmokeGrid.step's
order. Conventions:
  vx (ny, nx+1): x-velocity on vertical faces; face [j, i] sits at grid point (i - 1/2, j)
  vy (ny+1, nx): y-velocity on horizontal faces; face [j, i] sits at grid point (i, j - 1/2)
  s  (ny, nx, 3): density, temperature, fuel at cell centres, cell [j, i] at grid point (i, j)
  solid (ny, nx) bool; y points up (row 0 is the bottom side).
Grid points are in cells; `dt_h` = dt / cell_size turns world velocities into cells per second * dt.

Pressure: with q = p dt / (rho h) (a cell-unit potential) the projection is v_face -= q_to - q_from
(gradient), and the pressure equation is L q = D v with L = D G (laplacian), solved here by conjugate
gradients (pressure_solve) where SmokeGrid runs multigrid V-cycles; on the MAC grid the projected
field's divergence is the solver's residual (Harlow & Welch 1965; Bridson 2015). The V-cycle's passes
(smooth, restrict, prolong, coarse_solve, v_cycle) take the level operators (W_right, W_top, D,
diagonal per cell) as inputs, as the GPU passes do. Viscosity is solved exactly too
(viscosity_solve), where SmokeGrid runs Chebyshev iterations to a bound.
References: Stam, Stable Fluids (SIGGRAPH 1999); Selle et al., An Unconditionally Stable MacCormack
Method (J. Sci. Comput. 2008); Fedkiw, Stam & Jensen, Visual Simulation of Smoke (SIGGRAPH 2001);
Nguyen, Fedkiw & Jensen, Physically Based Modeling and Animation of Fire (SIGGRAPH 2002);
Trottenberg, Oosterlee & Schueller, Multigrid (2001) for the V-cycle.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FREE_SLIP, NO_SLIP, OPEN = 0, 1, 2
KINDS = {"free-slip": FREE_SLIP, "no-slip": NO_SLIP, "open": OPEN}
SIDES = ("left", "right", "bottom", "top")
FACE_FLUID, FACE_FIXED, FACE_OPEN = 0, 1, 2
NORMAL_EPS = 1e-6           # |grad |w|| below this (1/s per cell) gives no confinement direction


@dataclass
class Bc:
    """Per side (left, right, bottom, top): kind code and the wall's tangential velocity
    (v for left/right walls, u for bottom/top walls; used by no-slip walls: a sliding lid)."""
    kind: tuple = (FREE_SLIP,) * 4
    tangent: tuple = (0.0,) * 4


# ------------------------------------------------------------------------------------------ geometry

def face_types(solid: np.ndarray, bc: Bc):
    """FACE_FLUID / FACE_FIXED (wall or obstacle: velocity 0) / FACE_OPEN for every vx and vy face."""
    ny, nx = solid.shape
    tx = np.full((ny, nx + 1), FACE_FLUID, np.int32)
    tx[:, 1:-1][solid[:, :-1] | solid[:, 1:]] = FACE_FIXED
    for col, side, cell in ((0, 0, 0), (nx, 1, nx - 1)):
        tx[:, col] = np.where((bc.kind[side] == OPEN) & ~solid[:, cell], FACE_OPEN, FACE_FIXED)
    ty = np.full((ny + 1, nx), FACE_FLUID, np.int32)
    ty[1:-1][solid[:-1] | solid[1:]] = FACE_FIXED
    for row, side, cell in ((0, 2, 0), (ny, 3, ny - 1)):
        ty[row] = np.where((bc.kind[side] == OPEN) & ~solid[cell], FACE_OPEN, FACE_FIXED)
    return tx, ty


def ghost_rows_vx(vx, bc: Bc):
    """vx padded with one ghost row below and above: no-slip 2 u_wall - u, else u (zero shear)."""
    below = 2.0 * bc.tangent[2] - vx[0] if bc.kind[2] == NO_SLIP else vx[0]
    above = 2.0 * bc.tangent[3] - vx[-1] if bc.kind[3] == NO_SLIP else vx[-1]
    return np.vstack([below[None], vx, above[None]])


def ghost_cols_vy(vy, bc: Bc):
    """vy padded with one ghost column left and right, as ghost_rows_vx."""
    left = 2.0 * bc.tangent[0] - vy[:, 0] if bc.kind[0] == NO_SLIP else vy[:, 0]
    right = 2.0 * bc.tangent[1] - vy[:, -1] if bc.kind[1] == NO_SLIP else vy[:, -1]
    return np.hstack([left[:, None], vy, right[:, None]])


# ------------------------------------------------------------------------------------------ sampling

def bilinear(a, gx, gy):
    """Bilinear sample of `a` (H, W[, C]) at array coordinates (gx, gy), clamped to the array;
    also returns the min and max of the four nodes (the MacCormack limiter's bounds)."""
    h, w = a.shape[:2]
    gx = np.clip(gx, 0.0, w - 1.0)
    gy = np.clip(gy, 0.0, h - 1.0)
    i0 = np.minimum(np.floor(gx).astype(np.int64), w - 2)
    j0 = np.minimum(np.floor(gy).astype(np.int64), h - 2)
    fx, fy = gx - i0, gy - j0
    if a.ndim == 3:
        fx, fy = fx[..., None], fy[..., None]
    a00, a10, a01, a11 = a[j0, i0], a[j0, i0 + 1], a[j0 + 1, i0], a[j0 + 1, i0 + 1]
    value = (a00 * (1 - fx) + a10 * fx) * (1 - fy) + (a01 * (1 - fx) + a11 * fx) * fy
    lo = np.minimum(np.minimum(a00, a10), np.minimum(a01, a11))
    hi = np.maximum(np.maximum(a00, a10), np.maximum(a01, a11))
    return value, lo, hi


def bilinear_fluid(a, solid, gx, gy, own):
    """Bilinear sample of the cell-centred field `a` (H, W, C) at grid points (gx, gy) over fluid
    nodes only: a solid node's weight is zeroed and the rest renormalised, so what solid cells
    store never leaks into the gas. Also returns the min / max over the fluid nodes among the four
    (the MacCormack limiter's bounds). Where no fluid node carries weight the value is `own` (the
    updated cell's own value), and where no node is fluid the bounds are `own` too."""
    h, w = a.shape[:2]
    gx = np.clip(gx, 0.0, w - 1.0)
    gy = np.clip(gy, 0.0, h - 1.0)
    i0 = np.minimum(np.floor(gx).astype(np.int64), w - 2)
    j0 = np.minimum(np.floor(gy).astype(np.int64), h - 2)
    fx, fy = (gx - i0)[..., None], (gy - j0)[..., None]
    shape = gx.shape + a.shape[2:]
    total = np.zeros(shape)
    weight = np.zeros(gx.shape + (1,))
    lo, hi = np.full(shape, np.inf), np.full(shape, -np.inf)
    for di, dj in ((0, 0), (1, 0), (0, 1), (1, 1)):
        node = a[j0 + dj, i0 + di]
        fluid = ~solid[j0 + dj, i0 + di][..., None]
        wk = (fx if di else 1.0 - fx) * (fy if dj else 1.0 - fy) * fluid
        total += wk * node
        weight += wk
        lo = np.where(fluid, np.minimum(lo, node), lo)
        hi = np.where(fluid, np.maximum(hi, node), hi)
    value = np.where(weight > 0, total / np.where(weight > 0, weight, 1.0), own)
    return value, np.where(np.isfinite(lo), lo, own), np.where(np.isfinite(hi), hi, own)


def solid_scalars(t_ambient):
    """What a solid cell stores: no density or fuel, the ambient temperature."""
    return np.array([0.0, t_ambient, 0.0])


def velocity_at(vx, vy, px, py):
    """World velocity at grid points (px, py), bilinear on each staggered component."""
    return bilinear(vx, px + 0.5, py)[0], bilinear(vy, px, py + 0.5)[0]


def trace(vx, vy, px, py, dt_h):
    """Back-trace by dt (forward when dt_h < 0): explicit midpoint (RK2) through the MAC field."""
    ux, uy = velocity_at(vx, vy, px, py)
    mx, my = px - 0.5 * dt_h * ux, py - 0.5 * dt_h * uy
    ux, uy = velocity_at(vx, vy, mx, my)
    return px - dt_h * ux, py - dt_h * uy


def _points(ny, nx):
    jx, ix = np.mgrid[0:ny, 0:nx + 1].astype(np.float64)
    jy, iy = np.mgrid[0:ny + 1, 0:nx].astype(np.float64)
    jc, ic = np.mgrid[0:ny, 0:nx].astype(np.float64)
    return (ix - 0.5, jx), (iy, jy - 0.5), (ic, jc)


# ------------------------------------------------------------------------------------------- passes

def splat(vx, vy, s, solid, bc: Bc, x, y, radius, velocity, amounts):
    """Adds the smooth brush w = (1 - (d/R)^2)^2 times `velocity` to the free faces and `amounts`
    (density, temperature, fuel) to the fluid cells. Returns new arrays."""
    ny, nx = s.shape[:2]
    tx, ty = face_types(solid, bc)
    (ax, ay), (bx, by), (cx, cy) = _points(ny, nx)

    def w(px, py):
        r2 = ((px - x) ** 2 + (py - y) ** 2) / radius ** 2
        return np.maximum(1.0 - r2, 0.0) ** 2

    return (np.where(tx == FACE_FIXED, vx, vx + w(ax, ay) * velocity[0]),
            np.where(ty == FACE_FIXED, vy, vy + w(bx, by) * velocity[1]),
            np.where(solid[..., None], s, s + w(cx, cy)[..., None] * np.asarray(amounts, np.float64)))


def splat_impulse(solid, bc: Bc, x, y, radius, velocity):
    """The velocity a splat adds to the free faces, (ix, iy): what SmokeGrid holds apart until its
    next step adds it after the velocity's advection (step's `impulse`)."""
    ny, nx = solid.shape
    ix, iy, _ = splat(np.zeros((ny, nx + 1)), np.zeros((ny + 1, nx)), np.zeros((ny, nx, 3)), solid, bc,
                      x, y, radius, velocity, (0.0, 0.0, 0.0))
    return ix, iy


def combust(s, dt, burn_rate, burn_heat, smoke_yield, cooling, t_ambient):
    """Game fire after Nguyen et al. 2002: fuel burns at `burn_rate` (1/s, exact exponential), each
    unit releasing `burn_heat` of temperature and `smoke_yield` of smoke; hot gas cools by the
    radiative law d(theta)/dt = -cooling theta^4, theta = (T - T_amb) / burn_heat, integrated exactly:
    theta' = theta / (1 + 3 cooling dt |theta|^3)^(1/3). Exact integration keeps it frame-rate free."""
    out = s.copy()
    burned = s[..., 2] * (1.0 - np.exp(-burn_rate * dt))
    out[..., 2] = s[..., 2] - burned
    out[..., 0] = s[..., 0] + smoke_yield * burned
    theta = (s[..., 1] + burn_heat * burned - t_ambient) / burn_heat
    theta = theta / np.cbrt(1.0 + 3.0 * cooling * dt * np.abs(theta) ** 3)
    out[..., 1] = t_ambient + burn_heat * theta
    return out


def scalar_phi(s, t_ambient):
    """What each scalar's total sums: density, heat T - T_ambient, fuel."""
    return s - np.array([0.0, t_ambient, 0.0])


def outflow(s, vx, vy, solid, bc: Bc, dt_h, t_ambient):
    """What each cell's scalars lose through open sides in a step of dt_h (cell units): over the
    cell's open faces, the outward velocity times dt_h times the cell's value (first-order upwind;
    gas entering through an open side carries the edge cell's value, as the advection's clamped
    sampling has it). (ny, nx, 3), the heat T - T_ambient for temperature."""
    tx, ty = face_types(solid, bc)
    out = np.zeros(solid.shape)
    out[:, 0] -= np.where(tx[:, 0] == FACE_OPEN, vx[:, 0], 0.0)
    out[:, -1] += np.where(tx[:, -1] == FACE_OPEN, vx[:, -1], 0.0)
    out[0] -= np.where(ty[0] == FACE_OPEN, vy[0], 0.0)
    out[-1] += np.where(ty[-1] == FACE_OPEN, vy[-1], 0.0)
    return (out * dt_h)[..., None] * scalar_phi(s, t_ambient)


def conserve_weights(before, flux, after, absolute, decay):
    """The conservation fix's weight w per scalar: each fluid cell's phi becomes phi + w |phi|, so
    the total after the step is E = (sum before - what left) * decay exactly: w = (E - A) / M with
    A = sum phi after the advection, M = sum |phi| after it (0 where M = 0: nothing to scale). A
    global correction in proportion to each cell's amount (Rasch & Williamson's proportional mass
    fixer): it moves no gas, keeps density and fuel >= 0 (w >= -1) and the heat's sign in each cell
    (|w| <= 1 for temperature); what a clamp leaves out stays missing from the total.
    Arguments are per scalar (3,): sums over the fluid cells and the step's decay factors."""
    target = (np.asarray(before) - np.asarray(flux)) * np.asarray(decay)
    m = np.asarray(absolute, np.float64)
    w = np.where(m > 0.0, (target - np.asarray(after)) / np.where(m > 0.0, m, 1.0), 0.0)
    return np.clip(w, -1.0, np.array([np.inf, 1.0, np.inf]))


def conserve(s_new, s_old, vx, vy, solid, bc: Bc, dt_h, decay, t_ambient):
    """The scalars `s_new` carried from `s_old` by (vx, vy) over dt_h, made to keep their totals
    (conserve_weights; conserve.comp), and what the step books in the ledger per scalar (cell
    units): "outflow" (net, through open sides), "dissipation" (the decay's share), "drift" (what
    the advection alone changed the total by, which the fix takes back)."""
    fluid = ~solid[..., None]
    phi_old, phi_new = scalar_phi(s_old, t_ambient) * fluid, scalar_phi(s_new, t_ambient) * fluid
    before = phi_old.sum(axis=(0, 1))
    flux = (outflow(s_old, vx, vy, solid, bc, dt_h, t_ambient) * fluid).sum(axis=(0, 1))
    after, absolute = phi_new.sum(axis=(0, 1)), np.abs(phi_new).sum(axis=(0, 1))
    w = conserve_weights(before, flux, after, absolute, decay)
    fixed = np.where(fluid, s_new + w * np.abs(phi_new), s_new)
    kept = (before - flux) * np.asarray(decay)
    return fixed, {"outflow": flux, "dissipation": (before - flux) - kept, "drift": after - kept}


def curl(vx, vy, solid, bc: Bc, h):
    """Vorticity w = dv/dx - du/dy (1/s) at cell centres: the mean of the four corner values
    (natural on the MAC grid), walls through their ghost values; 0 in solid cells."""
    gx = ghost_rows_vx(vx, bc)                  # (ny+2, nx+1), row k = vx row k-1
    gy = ghost_cols_vy(vy, bc)                  # (ny+1, nx+2)
    # corner [j, i] at (i - 1/2, j - 1/2), j in 0..ny, i in 0..nx
    corner = (gy[:, 1:] - gy[:, :-1]) - (gx[1:] - gx[:-1])
    w = 0.25 * (corner[:-1, :-1] + corner[:-1, 1:] + corner[1:, :-1] + corner[1:, 1:]) / h
    return np.where(solid, 0.0, w)


def confinement(w, eps, h):
    """Vorticity confinement force (Fedkiw, Stam & Jensen 2001) at cell centres:
    f = eps h (N x w), N = grad|w| / |grad|w||, in 2D f = eps h w (N_y, -N_x)."""
    a = np.abs(w)
    p = np.pad(a, 1, mode="edge")
    gx = 0.5 * (p[1:-1, 2:] - p[1:-1, :-2])
    gy = 0.5 * (p[2:, 1:-1] - p[:-2, 1:-1])
    norm = np.sqrt(gx * gx + gy * gy)
    inv = np.where(norm > NORMAL_EPS, 1.0 / np.maximum(norm, NORMAL_EPS), 0.0)
    return eps * h * w * gy * inv, -eps * h * w * gx * inv


def forces(vx, vy, s, w, solid, bc: Bc, dt, eps, h, alpha, beta, t_ambient):
    """v += dt * f on fluid faces: vorticity confinement (cell forces averaged to the face) and
    buoyancy (FSJ01) f_y = -alpha density + beta (T - T_ambient), cell values averaged to the face."""
    tx, ty = face_types(solid, bc)
    fx, fy = confinement(w, eps, h)
    out_x, out_y = vx.copy(), vy.copy()
    ax = 0.5 * (fx[:, :-1] + fx[:, 1:])
    out_x[:, 1:-1] += dt * ax
    b = -alpha * s[..., 0] + beta * (s[..., 1] - t_ambient) + fy
    out_y[1:-1] += dt * 0.5 * (b[:-1] + b[1:])
    return np.where(tx == FACE_FLUID, out_x, vx), np.where(ty == FACE_FLUID, out_y, vy)


def advect(vel_x, vel_y, src_x, src_y, src_s, solid, bc: Bc, dt_h, decay_v=1.0, decay_s=(1.0, 1.0, 1.0),
           t_ambient=0.0):
    """Semi-Lagrangian advection (Stam 1999) of the fields src_* through the velocity vel_*:
    trace each face / cell centre back by dt (RK2) and sample bilinearly, the scalars over fluid
    cells only (bilinear_fluid). Fixed faces get 0, solid cells solid_scalars(t_ambient). dt_h < 0
    traces forward (MacCormack's reverse step). Returns (x, y, s): advect.comp computes the faces
    (SCALARS 0) or the cells (SCALARS 1) of it, in two passes of a step (see step)."""
    ny, nx = solid.shape
    tx, ty = face_types(solid, bc)
    (ax, ay), (bx, by), (cx, cy) = _points(ny, nx)
    px, py = trace(vel_x, vel_y, ax, ay, dt_h)
    out_x = bilinear(src_x, px + 0.5, py)[0] * decay_v
    px, py = trace(vel_x, vel_y, bx, by, dt_h)
    out_y = bilinear(src_y, px, py + 0.5)[0] * decay_v
    px, py = trace(vel_x, vel_y, cx, cy, dt_h)
    out_s = bilinear_fluid(src_s, solid, px, py, src_s)[0] * np.asarray(decay_s)
    return (np.where(tx == FACE_FIXED, 0.0, out_x), np.where(ty == FACE_FIXED, 0.0, out_y),
            np.where(solid[..., None], solid_scalars(t_ambient), out_s))


def maccormack(vx, vy, s, hat, back, solid, bc: Bc, dt_h, decay_v=1.0, decay_s=(1.0, 1.0, 1.0), t_ambient=0.0,
               vel=None):
    """MacCormack (Selle et al. 2008): phi = hat + (phi_n - back)/2, where hat = A(phi_n) and
    back = A^R(hat); limited by clamping to the min/max of the four nodes of phi_n around the
    back-traced point (the GPU Gems 3 ch. 30 form of the limiter), so no new extrema appear; for the
    scalars the min/max over the fluid nodes only. Solid cells get solid_scalars(t_ambient).
    phi_n = (vx, vy, s), carried by `vel` = (x, y), by default (vx, vy) itself; hat and back must
    have been traced through the same velocity. maccormack.comp computes the faces (SCALARS 0: the
    velocity carrying itself) or the cells (SCALARS 1) of it."""
    ny, nx = solid.shape
    tx, ty = face_types(solid, bc)
    (ax, ay), (bx, by), (cx, cy) = _points(ny, nx)
    carrier = (vx, vy) if vel is None else vel
    outs = []
    for (qx, qy), src, off, h_, b_ in (((ax, ay), vx, (0.5, 0.0), hat[0], back[0]),
                                       ((bx, by), vy, (0.0, 0.5), hat[1], back[1]),
                                       ((cx, cy), s, (0.0, 0.0), hat[2], back[2])):
        px, py = trace(*carrier, qx, qy, dt_h)
        if src.ndim == 3:
            _, lo, hi = bilinear_fluid(src, solid, px, py, src)
        else:
            _, lo, hi = bilinear(src, px + off[0], py + off[1])
        outs.append(np.clip(h_ + 0.5 * (src - b_), lo, hi))
    return (np.where(tx == FACE_FIXED, 0.0, outs[0] * decay_v), np.where(ty == FACE_FIXED, 0.0, outs[1] * decay_v),
            np.where(solid[..., None], solid_scalars(t_ambient), outs[2] * np.asarray(decay_s)))


def _helmholtz_component(f, types, a, pad_ghost, axis_tangent):
    """(A f) = (1 + 4a) f - a sum(neighbours) on one staggered component (see diffuse); fixed faces
    (walls, obstacles) are not unknowns and give f itself."""
    p = pad_ghost(f)                                          # ghosts across the tangential walls
    if axis_tangent == 0:                                     # vx: ghost rows; x-neighbours clamp (Neumann)
        left = np.hstack([p[1:-1, :1], p[1:-1, :-1]])
        right = np.hstack([p[1:-1, 1:], p[1:-1, -1:]])
        nb = left + right + p[:-2] + p[2:]
    else:                                                     # vy: ghost columns; y-neighbours clamp
        down = np.vstack([p[:1, 1:-1], p[:-1, 1:-1]])
        up = np.vstack([p[1:, 1:-1], p[-1:, 1:-1]])
        nb = down + up + p[:, :-2] + p[:, 2:]
    return np.where(types == FACE_FIXED, f, (1.0 + 4.0 * a) * f - a * nb)


def helmholtz(vx, vy, solid, bc: Bc, a):
    """The viscosity operator A v = (I - nu dt Laplacian) v (h = 1 units, a = nu dt / h^2) on both
    components, wall ghosts included (affine where a no-slip wall slides)."""
    tx, ty = face_types(solid, bc)
    return (_helmholtz_component(vx, tx, a, lambda f: ghost_rows_vx(f, bc), 0),
            _helmholtz_component(vy, ty, a, lambda f: ghost_cols_vy(f, bc), 1))


def diffuse(cur_x, cur_y, prev_x, prev_y, rhs_x, rhs_y, solid, bc: Bc, a, c1, c2):
    """One Chebyshev iteration of implicit viscosity (Stam 1999), (I - nu dt Laplacian) v = v*:
    v_next = v + c1 (v - v_prev) + c2 (v* - A v) on free faces; fixed faces keep their value. Walls:
    no-slip ghost 2 u_wall - u, free-slip / open ghost u; along the normal the neighbour is clamped."""
    tx, ty = face_types(solid, bc)
    ax, ay = helmholtz(cur_x, cur_y, solid, bc, a)
    nx_ = cur_x + c1 * (cur_x - prev_x) + c2 * (rhs_x - ax)
    ny_ = cur_y + c1 * (cur_y - prev_y) + c2 * (rhs_y - ay)
    return np.where(tx == FACE_FIXED, cur_x, nx_), np.where(ty == FACE_FIXED, cur_y, ny_)


def conjugate_gradient(apply, b, tol, max_iter=10_000):
    """x with apply(x) = b by conjugate gradients (apply symmetric, positive semi-definite; b in its
    range), from x = 0, until |b - apply(x)| <= tol |b|. Returns x and the relative residual."""
    x = np.zeros_like(b)
    r = b.copy()
    rr = float((r * r).sum())
    nb = np.sqrt(rr)
    if nb == 0.0:
        return x, 0.0
    d = r.copy()
    for _ in range(max_iter):
        ad = apply(d)
        alpha = rr / float((d * ad).sum())
        x += alpha * d
        r -= alpha * ad
        rr, rr_last = float((r * r).sum()), rr
        if np.sqrt(rr) <= tol * nb:
            break
        d = r + (rr / rr_last) * d
    return x, np.sqrt(rr) / nb


def viscosity_solve(vx, vy, solid, bc: Bc, a, tol=1e-12):
    """(I - nu dt Laplacian) v = v* (a = nu dt / h^2) solved exactly (conjugate gradients over the free
    faces; a sliding wall makes the operator affine, its constant part goes to the right-hand side).
    SmokeGrid runs Chebyshev iterations (diffuse) to a bound instead."""
    tx, ty = face_types(solid, bc)
    free = np.concatenate([(tx != FACE_FIXED).ravel(), (ty != FACE_FIXED).ravel()])
    cut = vx.size

    def split(v):
        return v[:cut].reshape(vx.shape), v[cut:].reshape(vy.shape)

    def linear(v):
        full = np.where(free, v, 0.0)
        out = np.concatenate([f.ravel() for f in helmholtz(*split(full), solid, bc, a)]) - offset
        return np.where(free, out, 0.0)

    offset = np.concatenate([f.ravel() for f in helmholtz(np.zeros_like(vx), np.zeros_like(vy), solid, bc, a)])
    rhs = np.concatenate([vx.ravel(), vy.ravel()])
    v, _ = conjugate_gradient(linear, np.where(free, rhs - offset, 0.0), tol)
    return split(np.where(free, v, rhs))


def density_helmholtz(rho, solid, a):
    """(I - a L) rho on the cells (a = kappa dt / h^2), L rho summing rho_nb - rho over the fluid
    neighbours: no flux through walls, open sides or obstacles, so the total is kept (L's columns sum
    to 0); solid cells give rho itself."""
    fluid = ~solid
    p, f = np.pad(rho, 1), np.pad(fluid, 1)
    lap = np.zeros_like(rho)
    for dj, di in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        nb = (slice(1 + dj, p.shape[0] - 1 + dj), slice(1 + di, p.shape[1] - 1 + di))
        lap += np.where(f[nb], p[nb] - rho, 0.0)
    return np.where(fluid, rho - a * lap, rho)


def diffuse_density(cur, prev, rhs, solid, a, c1, c2):
    """One Chebyshev iteration (diffuse's, on the cells) of the implicit density diffusion
    (I - kappa dt L) rho = rho*: the density of scalars `cur` (ny, nx, 3) moves to
    rho + c1 (rho - rho_prev) + c2 (rho* - A rho) in fluid cells; the other scalars are `cur`'s."""
    out = cur.copy()
    rho = cur[..., 0]
    step = rho + c1 * (rho - prev[..., 0]) + c2 * (rhs[..., 0] - density_helmholtz(rho, solid, a))
    out[..., 0] = np.where(solid, rho, step)
    return out


def density_diffusion_solve(s, solid, a, tol=1e-12):
    """(I - a L) rho = rho* solved exactly (conjugate gradients), the density of scalars s; SmokeGrid
    runs Chebyshev iterations (diffuse_density) to a bound instead."""
    fluid = ~solid
    rho, _ = conjugate_gradient(lambda r: np.where(fluid, density_helmholtz(r, solid, a), 0.0),
                                np.where(fluid, s[..., 0], 0.0), tol)
    out = s.copy()
    out[..., 0] = np.where(fluid, rho, s[..., 0])
    return out


def divergence(vx, vy, solid):
    """Net outflow of each fluid cell, D v = (vx_R - vx_L) + (vy_T - vy_B), world velocity units
    (divide by cell_size for 1/s); 0 in solid cells."""
    d = vx[:, 1:] - vx[:, :-1] + vy[1:] - vy[:-1]
    return np.where(solid, 0.0, d)


def gradient(q, solid, bc: Bc):
    """G q on the faces: q_to - q_from across fluid faces, q = 0 outside an open side (p = 0), 0 on
    walls and obstacle faces."""
    tx, ty = face_types(solid, bc)
    qx = np.pad(q, ((0, 0), (1, 1)))
    qy = np.pad(q, ((1, 1), (0, 0)))
    return (np.where(tx == FACE_FIXED, 0.0, qx[:, 1:] - qx[:, :-1]), np.where(ty == FACE_FIXED, 0.0, qy[1:] - qy[:-1]))


def laplacian(q, solid, bc: Bc):
    """L q = D G q: the pressure operator as the model states it (SmokeGrid builds the same L per
    cell, hydro.smoke_levels.coefficients)."""
    return divergence(*gradient(q, solid, bc), solid)


def subtract_gradient(vx, vy, q, solid, bc: Bc):
    """v_face -= q_to - q_from on fluid faces; open faces see q = 0 outside (p = 0)."""
    gx, gy = gradient(q, solid, bc)
    return vx - gx, vy - gy


def step(vx, vy, s, solid, bc: Bc, dt, p, tol=1e-10, impulse=None):
    """One substep of dt of SmokeGrid.step, from the twins of its passes in its order: combustion
    (p.fire), forces (curl, confinement, buoyancy), the velocity carried by itself (advect, or
    MacCormack), `impulse` (ix, iy) added to its free faces (the velocity splats added since the last
    step, which SmokeGrid holds apart until then: splat_impulse), viscosity (viscosity_solve), the
    projection (solved to `tol`), and then the scalars
    carried by the velocity just projected: Stam's order ("Real-Time Fluid Dynamics for Games", 2003:
    dens_step after vel_step), with one projection. The scalars must not move with the velocity
    before the projection: a splat's impulse and the forces make it divergent, and a divergent
    velocity compresses or spreads the gas, changing its total. With p.conserve the scalars' totals
    are then fixed (conserve), and the density diffuses (density_diffusion_solve) where
    p.density_diffusion > 0. p: the grid's SmokeParams (only its fields are read). s: (ny, nx, 3).
    Returns (vx, vy, s)."""
    h, t_amb = p.cell_size, p.ambient_temperature
    dt_h = dt / h
    decays = (np.exp(-p.velocity_dissipation * dt), (np.exp(-p.density_dissipation * dt), 1.0, 1.0))
    if p.fire:
        s = combust(s, dt, p.burn_rate, p.burn_heat, p.smoke_yield, p.cooling, t_amb)
    if p.vorticity > 0.0 or tuple(p.buoyancy) != (0.0, 0.0):
        w = curl(vx, vy, solid, bc, h)
        vx, vy = forces(vx, vy, s, w, solid, bc, dt, p.vorticity, h, *p.buoyancy, t_amb)

    def carried(vel, fields):
        """`fields` (x, y, s) carried by `vel` (x, y), by the grid's advection scheme."""
        if p.advection == "semi-lagrangian":
            return advect(*vel, *fields, solid, bc, dt_h, *decays, t_ambient=t_amb)
        hat = advect(*vel, *fields, solid, bc, dt_h, t_ambient=t_amb)
        back = advect(*vel, *hat, solid, bc, -dt_h, t_ambient=t_amb)
        return maccormack(*fields, hat, back, solid, bc, dt_h, *decays, t_ambient=t_amb, vel=vel)

    vx, vy, _ = carried((vx, vy), (vx, vy, s))
    if impulse is not None:
        tx, ty = face_types(solid, bc)
        vx = np.where(tx == FACE_FIXED, vx, vx + impulse[0])
        vy = np.where(ty == FACE_FIXED, vy, vy + impulse[1])
    if p.viscosity > 0.0:
        vx, vy = viscosity_solve(vx, vy, solid, bc, p.viscosity * dt / h ** 2)
    vx, vy, _ = project(vx, vy, solid, bc, tol)
    carried_s = carried((vx, vy), (vx, vy, s))[2]
    if p.conserve:
        carried_s = conserve(carried_s, s, vx, vy, solid, bc, dt_h, (decays[1][0], 1.0, 1.0), t_amb)[0]
    if p.density_diffusion > 0.0:
        carried_s = density_diffusion_solve(carried_s, solid, p.density_diffusion * dt / h ** 2)
    return vx, vy, carried_s


def max_speed(vx, vy):
    """The largest |velocity| over the vx and vy faces (max_speed.comp): what a step with max_cfl
    sizes its substeps by."""
    return float(max(np.abs(vx).max(), np.abs(vy).max()))


def max_lift(s, alpha, beta, t_amb):
    """The largest |buoyancy| -alpha density + beta (T - T_ambient) over the cells, and the most fuel
    (max_speed.comp): the acceleration a step with max_cfl bounds the speed's growth by."""
    lift = -alpha * s[..., 0] + beta * (s[..., 1] - t_amb)
    return float(np.abs(lift).max()), float(max(s[..., 2].max(), 0.0))


def centre_velocity(vx, vy):
    """Velocity at cell centres (ny, nx, 2): the mean of each component's two faces."""
    return np.stack([0.5 * (vx[:, :-1] + vx[:, 1:]), 0.5 * (vy[:-1] + vy[1:])], axis=-1)


# ----------------------------------------------------------------------------------------- multigrid

def apply_operator(q, c):
    """(L q) = sum_faces W (q_nb - q) - D q."""
    wr, wt, d = c[..., 0], c[..., 1], c[..., 2]
    out = -d * q
    fr = wr[:, :-1] * (q[:, 1:] - q[:, :-1])
    out[:, :-1] += fr
    out[:, 1:] -= fr
    ft = wt[:-1] * (q[1:] - q[:-1])
    out[:-1] += ft
    out[1:] -= ft
    return out


def residual(q, b, c):
    """r = b - L q, 0 where the diagonal is 0 (solid)."""
    return np.where(c[..., 3] > 0, b - apply_operator(q, c), 0.0)


def _neighbour_sum(q, c):
    wr, wt = c[..., 0], c[..., 1]
    s = np.zeros_like(q)
    s[:, :-1] += wr[:, :-1] * q[:, 1:]
    s[:, 1:] += wr[:, :-1] * q[:, :-1]
    s[:-1] += wt[:-1] * q[1:]
    s[1:] += wt[:-1] * q[:-1]
    return s


def smooth(q, b, c, parity, omega=1.0):
    """One colour of red-black SOR: q_c += omega ((sum W q_nb - b) / diag - q_c) on cells with
    (i + j) % 2 == parity (the other colour is only read, so in-place updates are exact); omega 1 is
    Gauss-Seidel. Solid cells (diag 0) get 0."""
    diag = c[..., 3]
    new = np.where(diag > 0, q + omega * ((_neighbour_sum(q, c) - b) / np.where(diag > 0, diag, 1.0) - q), 0.0)
    jj, ii = np.indices(q.shape)
    return np.where((ii + jj) % 2 == parity, new, q)


def jacobi(q, b, c):
    """The popular demos' Jacobi sweep (Harris, GPU Gems ch. 38): q = (sum of 4 neighbours - b) / 4
    with clamp-to-edge at walls and solids (their ghost is the cell itself) and 0 past open sides."""
    diag = c[..., 3]
    walls = 4.0 - (diag - c[..., 2]) - c[..., 2]
    new = (_neighbour_sum(q, c) + walls * q - b) / 4.0
    return np.where(diag > 0, new, 0.0)


def restrict(q, b, c):
    """Coarse right-hand side: the sum of the children's residuals (and the coarse guess 0)."""
    r = residual(q, b, c)
    ny, nx = r.shape
    cy, cx = (ny + 1) // 2, (nx + 1) // 2
    p = np.zeros((2 * cy, 2 * cx))
    p[:ny, :nx] = r
    return p[0::2, 0::2] + p[0::2, 1::2] + p[1::2, 0::2] + p[1::2, 1::2], np.zeros((cy, cx))


def prolong(q, c, qc, cc):
    """q += bilinear interpolation of the coarse correction (cell-centred weights 9/16, 3/16, 3/16,
    1/16); coarse cells outside the grid or without fluid are left out and the weights renormalised."""
    ny, nx = q.shape
    cy, cx = qc.shape
    jj, ii = np.indices((ny, nx))
    bi, bj = ii // 2, jj // 2
    si = np.where(ii % 2 == 0, -1, 1)
    sj = np.where(jj % 2 == 0, -1, 1)
    total = np.zeros((ny, nx))
    weight = np.zeros((ny, nx))
    for di, dj, w in ((0, 0, 9.0), (1, 0, 3.0), (0, 1, 3.0), (1, 1, 1.0)):
        ci, cj = bi + di * si, bj + dj * sj
        ok = (ci >= 0) & (ci < cx) & (cj >= 0) & (cj < cy)
        ci, cj = np.clip(ci, 0, cx - 1), np.clip(cj, 0, cy - 1)
        ok &= cc[cj, ci, 3] > 0
        total += np.where(ok, w * qc[cj, ci], 0.0)
        weight += np.where(ok, w, 0.0)
    corr = np.where(weight > 0, total / np.maximum(weight, 1e-30), 0.0)
    return np.where(c[..., 3] > 0, q + corr, q)


def coarse_solve(q, b, c):
    """The coarsest level solved exactly: q plus the smallest correction that minimises |b - L q|
    over the fluid cells (with no open side L is singular, q up to a constant)."""
    n = q.size
    a = np.stack([apply_operator(e.reshape(q.shape), c).ravel() for e in np.eye(n)], axis=1)
    fluid = (c[..., 3] > 0).ravel()
    corr = np.zeros(n)
    if fluid.any():
        corr[fluid] = np.linalg.lstsq(a[np.ix_(fluid, fluid)], residual(q, b, c).ravel()[fluid], rcond=None)[0]
    return q + corr.reshape(q.shape)


def v_cycle(q, b, lv, sweeps, omega, level=0):
    """One V(sweeps, sweeps) cycle with red-black SOR smoothing (omega) on every level of the operators
    `lv` (finest first) and the coarsest level solved exactly."""
    c = lv[level]
    if level == len(lv) - 1:
        return coarse_solve(q, b, c)
    for _ in range(sweeps):
        q = smooth(smooth(q, b, c, 0, omega), b, c, 1, omega)
    bc_, qc = restrict(q, b, c)
    qc = v_cycle(qc, bc_, lv, sweeps, omega, level + 1)
    q = prolong(q, c, qc, lv[level + 1])
    for _ in range(sweeps):
        q = smooth(smooth(q, b, c, 0, omega), b, c, 1, omega)
    return q


def warm_scale(q0, b, c):
    """The scale alpha of a warm start (divergence.comp's warm sums, warm.glsl): the alpha that
    minimises |b - alpha L q0|_2 over fluid cells, <b, L q0> / |L q0|^2 (0 when L q0 = 0). So the
    start's residual is never above |b| (a cold start's), and a last q from a step of another dt
    (q = p dt / (rho h) grows with dt) or an unrelated flow is rescaled or dropped, not trusted."""
    lq = np.where(c[..., 3] > 0, apply_operator(q0, c), 0.0)
    d = float((lq * lq).sum())
    return float((np.where(c[..., 3] > 0, b, 0.0) * lq).sum()) / d if d > 0 else 0.0


def warm_start(q0, b, c):
    """Where a warm solve starts: alpha q0 (warm_scale), 0 in solid cells (divergence.comp keeps the
    last solve's q but clears the cells an obstacle now covers)."""
    q0 = np.where(c[..., 3] > 0, q0, 0.0)
    return warm_scale(q0, b, c) * q0


def solve(b, lv, tol=1e-10, max_cycles=50, q0=None, sweeps=2, omega=1.0):
    """Multigrid V-cycles on the operators `lv` (v_cycle; by default V(2,2) Gauss-Seidel) until
    |r| / |b| <= tol, from q = 0, or with q0 (the last solve's q) from warm_start(q0); returns q and
    the residual history."""
    q = np.zeros_like(b) if q0 is None else warm_start(np.asarray(q0, np.float64), b, lv[0])
    nb = np.linalg.norm(b)
    hist = []
    if nb == 0:
        return q, hist                      # q = 0: warm_scale is 0 when b is
    for _ in range(max_cycles):
        q = v_cycle(q, b, lv, sweeps, omega)
        hist.append(np.linalg.norm(residual(q, b, lv[0])) / nb)
        if hist[-1] <= tol:
            break
    return q, hist


def pressure_solve(b, solid, bc: Bc, tol=1e-10):
    """L q = b over the fluid cells by conjugate gradients on -L (laplacian; positive semi-definite,
    and b = D v is in its range: with no open side its sum is 0). Returns q and the relative residual."""
    fluid = ~solid
    return conjugate_gradient(lambda q: np.where(fluid, -laplacian(q, solid, bc), 0.0), np.where(fluid, -b, 0.0), tol)


def project(vx, vy, solid, bc: Bc, tol=1e-10):
    """The exact discrete projection: solve L q = D v (pressure_solve), subtract the gradient. Returns
    (vx, vy, relative residual)."""
    q, rel = pressure_solve(divergence(vx, vy, solid), solid, bc, tol)
    return (*subtract_gradient(vx, vy, q, solid, bc), rel)
