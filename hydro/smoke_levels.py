"""The operators of SmokeGrid's multigrid levels, built in float64 on the CPU whenever obstacles or
boundaries change and uploaded by hydro.smoke_pressure.

Pressure: with q = p dt / (rho h) (a cell-unit potential) the projection is v_face -= q_to - q_from,
and the discrete Poisson equation is L q = D v with (L q)_c = sum_faces W (q_nb - q_c) - D_c q_c,
W = 1 between fluid cells, D_c = number of open (p = 0) sides: on the MAC grid D G == L (Harlow &
Welch 1965; Bridson 2015). A level's operator is stored per cell as (W_right, W_top, D, diagonal).
The coarse levels follow Trottenberg, Oosterlee & Schueller, Multigrid (2001): Galerkin sums over
2 x 2 children, scaled to each level's geometry (coarsen). hydro.reference.smoke states the same L as
the divergence of the gradient, independently; the tests hold the two together.
"""
from __future__ import annotations

import numpy as np

from .smoke_ops import OPEN, Bc


def coefficients(solid, bc: Bc):
    """Level-0 operator as (ny, nx, 4): W_right, W_top, D (open sides), diagonal."""
    ny, nx = solid.shape
    fluid = ~solid
    c = np.zeros((ny, nx, 4))
    c[:, :-1, 0] = fluid[:, :-1] & fluid[:, 1:]
    c[:-1, :, 1] = fluid[:-1] & fluid[1:]
    c[..., 2] = _open_sides(solid, bc).sum(axis=2)
    return _with_diagonal(c)


def _with_diagonal(c):
    wl = np.zeros(c.shape[:2])
    wl[:, 1:] = c[:, :-1, 0]
    wb = np.zeros(c.shape[:2])
    wb[1:] = c[:-1, :, 1]
    c[..., 3] = c[..., 0] + c[..., 1] + c[..., 2] + wl + wb
    return c


def coarse_shape(shape):
    return ((shape[0] + 1) // 2, (shape[1] + 1) // 2)


def _open_sides(solid, bc: Bc):
    """Level 0's open-side weights, one per side (left, right, bottom, top) and cell: 1 on the fluid
    cells along an open side."""
    ny, nx = solid.shape
    sides = np.zeros((ny, nx, 4))
    sides[:, 0, 0] = bc.kind[0] == OPEN
    sides[:, -1, 1] = bc.kind[1] == OPEN
    sides[0, :, 2] = bc.kind[2] == OPEN
    sides[-1, :, 3] = bc.kind[3] == OPEN
    return sides * ~solid[..., None]


def _extents(n, level):
    """Fine cells each cell of `level` spans along an axis of n fine cells: 2^level, fewer in the last
    one where n is not a multiple of it (the children past an odd edge are missing)."""
    size = 2 ** level
    return np.minimum(size, n - size * np.arange(-(-n // size))).astype(np.float64)


def coarsen(c, sides, level, shape):
    """The operator of multigrid `level` from that of level - 1 (c, and its open-side weights per side,
    `sides`), on a grid of `shape` fine cells: Galerkin sums over the 2x2 children with
    piecewise-constant transfers, halved (their coarse operator is twice too stiff for smooth errors;
    the half makes it the 2h rediscretisation on open regions). Odd sizes: missing children count as
    walls. Returns the operator and its open-side weights.

    Both are scaled to the level's geometry where its cells are not all alike. A cell past an odd edge
    spans fewer fine cells across than the others: the weight W of a face is the face's length over
    the distance between the two cells' centres, (e_a + e_b) / 2 fine cells rather than 2^level.
    An open side holds q = 0 at the fine ghost cell's centre, (e + 1) / 2 fine cells from the centre
    of a cell spanning e: its weight is the side's length over that. Where all four children are
    fluid the children's summed weights on that side (each (e_b + 1) / 2 from the child touching it)
    are scaled by (e_b + 1) / (e + 1): 2/3, 3/5, 5/9, ... -> 1/2 on the levels of a grid of 2^k
    cells. Where some are missing or solid the plain Galerkin sum (factor 1) is the one that keeps the
    V-cycle convergent. A factor of 2/3 on every level overweighted the open side ever more on coarse
    levels (64/27 against 16/9 on level 3), and where a level ended in a cell past an odd edge at the
    open side (ny of 2^k + 1, 100, 200 with an open top) the V-cycle cut the residual only 1.1-3x a
    cycle, 14-45x with these (float64, V(3,3); 20-40x on grids of 2^k cells)."""
    ny, nx = c.shape[:2]
    cy, cx = coarse_shape((ny, nx))
    fy, fx = _extents(shape[0], level - 1), _extents(shape[1], level - 1)     # the children's extents
    ey, ex = _extents(shape[0], level), _extents(shape[1], level)
    # the children's face weights without their own distance factors: the plain halved Galerkin sums
    hx, hy = _face_factors(sides, fx, fy, level - 1)
    p = np.zeros((2 * cy, 2 * cx, 4))
    p[:ny, :nx] = c
    p[:ny, :nx - 1, 0] /= hx[None, :]
    p[:ny - 1, :nx, 1] /= hy[:, None]
    ps = np.zeros((2 * cy, 2 * cx, 4))
    ps[:ny, :nx] = sides
    pfy, pfx = np.zeros(2 * cy), np.zeros(2 * cx)
    pfy[:ny], pfx[:nx] = fy, fx
    out = np.zeros((cy, cx, 4))
    full = (p[0::2, 0::2, 3] > 0) & (p[0::2, 1::2, 3] > 0) & (p[1::2, 0::2, 3] > 0) & (p[1::2, 1::2, 3] > 0)
    summed = ps[0::2, 0::2] + ps[0::2, 1::2] + ps[1::2, 0::2] + ps[1::2, 1::2]
    # the child touching each side: left -> column 2i, right -> 2i + 1, bottom -> row 2j, top -> 2j + 1
    touching = (pfx[0::2][None, :], pfx[1::2][None, :], pfy[0::2][:, None], pfy[1::2][:, None])
    across = (ex[None, :], ex[None, :], ey[:, None], ey[:, None])
    new_sides = np.zeros((cy, cx, 4))
    for k in range(4):
        factor = (touching[k] + 1.0) / (across[k] + 1.0)
        new_sides[..., k] = np.where(full, factor, 1.0) * summed[..., k]
    out[..., 2] = new_sides.sum(axis=2)
    gx, gy = _face_factors(new_sides, ex, ey, level)
    out[:, :-1, 0] = 0.5 * (p[0::2, 1::2, 0] + p[1::2, 1::2, 0])[:, :-1] * gx[None, :]
    out[:-1, :, 1] = 0.5 * (p[1::2, 0::2, 1] + p[1::2, 1::2, 1])[:-1] * gy[:, None]
    return _with_diagonal(out), new_sides  # no face above the top row, none right of the last column


def _face_factors(sides, ex, ey, level):
    """The distance factors of a level's x and y faces (coarsen): 2^level / ((e_a + e_b) / 2) for a
    face between columns (rows) spanning e_a and e_b fine cells next to a column (row) with an open
    left or right (bottom or top) side, 1 elsewhere (1 too wherever both span 2^level)."""
    size = 2.0 ** level
    open_cols = sides[..., :2].any(axis=(0, 2))
    open_rows = sides[..., 2:].any(axis=(1, 2))
    gx = np.where(open_cols[:-1] | open_cols[1:], 2.0 * size / (ex[:-1] + ex[1:]), 1.0)
    gy = np.where(open_rows[:-1] | open_rows[1:], 2.0 * size / (ey[:-1] + ey[1:]), 1.0)
    return gx, gy


def levels(solid, bc: Bc, coarsest=4):
    """Operators of every multigrid level, coarsening until both sides are <= `coarsest`."""
    out = [coefficients(solid, bc)]
    sides = _open_sides(solid, bc)
    while max(out[-1].shape[:2]) > coarsest:
        c, sides = coarsen(out[-1], sides, len(out), solid.shape)
        out.append(c)
    return out


def coarse_inverse(c):
    """The coarsest level's exact solve as a matrix M (cells x cells, cells in row-major order): the
    pseudo-inverse of L over the fluid cells, zero rows and columns for solid ones. Sweeps do not do
    there: with one open side L is nearly singular at that size, and 8 red-black sweeps left the
    V-cycle cutting the residual by only 1.7x a cycle at 1024^2 (3-4x with this). With no open side
    L is singular (q up to a constant) and M gives the smallest least-squares correction."""
    ny, nx = c.shape[:2]
    index = np.arange(ny * nx).reshape(ny, nx)
    a = np.diag(-c[..., 2].ravel())
    # each face with weight W adds W (q_nb - q_c) to both cells' rows
    for here, there, w in ((index[:, :-1], index[:, 1:], c[:, :-1, 0]), (index[:-1], index[1:], c[:-1, :, 1])):
        for i, j, wk in zip(here.ravel(), there.ravel(), w.ravel()):
            a[i, j] += wk
            a[j, i] += wk
            a[i, i] -= wk
            a[j, j] -= wk
    fluid = (c[..., 3] > 0).ravel()
    m = np.zeros_like(a)
    if fluid.any():
        m[np.ix_(fluid, fluid)] = np.linalg.pinv(a[np.ix_(fluid, fluid)])
    return m
