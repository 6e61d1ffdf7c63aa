"""Boundary faces of the pipe grids: which faces each side owns, and the per-face table the GPU reads.

A side's boundary faces join a cell on that side to a point outside the grid. The table lists them
side by side (left, right, bottom, top); on the hex lattice each side lists its x (left/right) or
y (bottom/top) faces first, then its z faces, and the two corner z faces belong to the left and right
sides. `shaders/common/water.glsl` computes the same indices; `Layout.faces` spells them out.

Each entry holds a kind and a value:
  wall     0, no flow
  inflow   discharge per face (volume/s) entering the grid; never scaled, so it adds exactly rate*dt
  outflow  discharge per face leaving the grid; limited by the water present (outflow scaling)
  level    height of an outside water surface the face exchanges with (a sea or lake)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import _validate as check

SIDES = ("left", "right", "bottom", "top")
KINDS = {"wall": 0, "inflow": 1, "outflow": 2, "level": 3}
TABLE_DTYPE = np.dtype([("kind", "<i4"), ("value", "<f4")])


@dataclass(frozen=True)
class Layout:
    """Boundary faces of one grid. Arrays run over table entries."""
    side_slices: dict           # side -> slice of the table
    side_cells: dict            # side -> number of cells along that side
    cell: np.ndarray            # index of the face's cell along its side (for spans)
    array: np.ndarray           # 0: flow_x, 1: flow_y, 2: flow_z
    i: np.ndarray               # face column
    j: np.ndarray               # face row

    @property
    def size(self) -> int:
        return len(self.cell)

    @cached_property
    def inside_cell(self) -> np.ndarray:
        """Per entry, the linear index y * nx + x of its cell inside the grid (worked out once)."""
        nx, ny = self.side_cells["bottom"], self.side_cells["left"]
        (fx, fy), (tx, ty) = self.endpoints()
        to_in = (tx >= 0) & (tx < nx) & (ty >= 0) & (ty < ny)
        return np.where(to_in, ty * nx + tx, fy * nx + fx)

    def endpoints(self):
        """(from, to) cells of every entry as (x, y) integer arrays; one of them lies outside."""
        fx = np.where(self.array == 2, self.i, np.where(self.array == 0, self.i - 1, self.i))
        fy = np.where(self.array == 0, self.j, self.j - 1)
        tx = np.where(self.array == 2, self.i - 1, self.i)
        ty = self.j.copy()
        return (fx, fy), (tx, ty)


def layout(nx: int, ny: int, hexagonal: bool) -> Layout:
    parts = {side: [] for side in SIDES}      # side -> list of (cell, array, i, j)
    ys, xs = np.arange(ny), np.arange(nx)
    parts["left"].append((ys, 0, np.zeros(ny, int), ys))
    parts["right"].append((ys, 0, np.full(ny, nx), ys))
    parts["bottom"].append((xs, 1, xs, np.zeros(nx, int)))
    parts["top"].append((xs, 1, xs, np.full(nx, ny)))
    if hexagonal:
        inner = np.arange(1, nx)
        parts["left"].append((ys, 2, np.zeros(ny, int), ys + 1))          # (0, y) -> (-1, y+1)
        parts["right"].append((ys, 2, np.full(ny, nx), ys))              # (nx, y-1) -> (nx-1, y)
        parts["bottom"].append((inner - 1, 2, inner, np.zeros(nx - 1, int)))  # (x, -1) -> (x-1, 0)
        parts["top"].append((inner, 2, inner, np.full(nx - 1, ny)))          # (x, ny-1) -> (x-1, ny)
    slices, cells, arrays, iis, jjs, start = {}, [], [], [], [], 0
    for side in SIDES:
        for cell, arr, i, j in parts[side]:
            cells.append(cell)
            arrays.append(np.full(len(cell), arr))
            iis.append(i)
            jjs.append(j)
        stop = start + sum(len(p[0]) for p in parts[side])
        slices[side] = slice(start, stop)
        start = stop
    return Layout(slices, {"left": ny, "right": ny, "bottom": nx, "top": nx},
                  np.concatenate(cells), np.concatenate(arrays), np.concatenate(iis), np.concatenate(jjs))


def new_table(lay: Layout) -> np.ndarray:
    return np.zeros(lay.size, TABLE_DTYPE)          # all walls


def with_boundary(table: np.ndarray, lay: Layout, side, kind, value=0.0, span=None) -> np.ndarray:
    """A copy of `table` with `side` (or its `span` of cells) set to `kind`; validates everything first."""
    check.choice("side", side, SIDES)
    check.choice("kind", kind, tuple(KINDS))
    n_cells = lay.side_cells[side]
    if span is None:
        first, stop = 0, n_cells
    else:
        try:
            first, stop = span
        except (TypeError, ValueError):
            raise TypeError(f"span: expected (first, stop) cell indices along the {side} side, got {span!r}") from None
        first = check.integer("span[0]", first, low=0)
        stop = check.integer("span[1]", stop, high=n_cells)
        if stop <= first:
            raise ValueError(f"span: expected 0 <= first < stop <= {n_cells} on the {side} side, got {span!r}")
    if kind == "wall":
        value = check.real32("value", value)
        if value != 0.0:
            raise ValueError(f"value: a wall takes no value, got {value}")
    elif kind in ("inflow", "outflow"):
        value = check.real32("value", value, low=0.0)     # total discharge, volume per second
    else:
        value = check.real32("value", value)              # outside surface height
    sl = lay.side_slices[side]
    idx = np.arange(sl.start, sl.stop)
    idx = idx[(lay.cell[idx] >= first) & (lay.cell[idx] < stop)]
    out = table.copy()
    out["kind"][idx] = KINDS[kind]
    out["value"][idx] = value / len(idx) if kind in ("inflow", "outflow") else value
    return out


def max_cell_inflow(table: np.ndarray, lay: Layout) -> float:
    """The largest inflow (volume/s) entering any one cell through boundary faces (a corner cell can
    have inflow faces on two sides; a hex corner, up to four)."""
    sel = table["kind"] == KINDS["inflow"]
    if not sel.any():
        return 0.0
    _, cell = np.unique(lay.inside_cell[sel], return_inverse=True)     # the inflow faces' cells, not the grid's
    return float(np.bincount(cell, weights=table["value"][sel].astype(np.float64)).max())


def describe(table: np.ndarray, lay: Layout) -> dict:
    """Per side, runs of (kind, first cell, stop cell, value) as set_boundary takes them: consecutive
    cells of one kind whose faces carry the same setting; the value is the run's total discharge
    (inflow/outflow), the outside surface (level) or 0 (wall)."""
    names = {v: k for k, v in KINDS.items()}
    result = {}
    for side in SIDES:
        sl = lay.side_slices[side]
        kinds, values, cells = table["kind"][sl], table["value"][sl].astype(np.float64), lay.cell[sl]
        runs = []                                   # [kind, first, stop, per-face setting, total]
        for c in range(lay.side_cells[side]):
            sel = cells == c                        # a cell's faces are always set together
            kind, setting = names[int(kinds[sel][0])], float(values[sel][0])
            total = float(values[sel].sum())
            if runs and runs[-1][0] == kind and runs[-1][3] == setting:
                runs[-1][2], runs[-1][4] = c + 1, runs[-1][4] + total
            else:
                runs.append([kind, c, c + 1, setting, total])
        result[side] = [(k, a, b, t if k in ("inflow", "outflow") else v) for k, a, b, v, t in runs]
    return result
