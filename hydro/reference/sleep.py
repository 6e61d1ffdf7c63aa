"""NumPy statement of which tiles a substep computes with sleeping tiles (hydro.water_sleep): a tile is
awake where it or one of the 3 x 3 tiles around it changed in the substep before (a cell's water, or a
face the cell stores: its left and bottom faces, hex also its z face toward (x - 1, y + 1)), where it
holds a cell beside a side that is not a wall, or where an edit woke it.
Conventions as hydro.reference.water: arrays [y, x]; flow_x (ny, nx+1), flow_y (ny+1, nx), hex flow_z
(ny+1, nx+1).
"""
from __future__ import annotations

import numpy as np


def changed_cells(before, after) -> np.ndarray:
    """(ny, nx) bools: the cells whose water, or one of whose stored faces, differ in any bit between two
    states (water, flow_x, flow_y[, flow_z]) of float32 arrays."""
    def differ(a, b):
        a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
        return a.view(np.uint32) != b.view(np.uint32)
    water = differ(before[0], after[0])
    ny, nx = water.shape
    cells = water | differ(before[1], after[1])[:, :nx] | differ(before[2], after[2])[:ny, :]
    if len(before) == 4:
        cells |= differ(before[3], after[3])[1:, :nx]
    return cells


def changed_texels(before, after) -> np.ndarray:
    """(ny + 1, nx + 1) bools: the blocked kernel's texels (hydro.water_kernels.Blocked: texel (x, y) holds
    cell (x, y)'s water and the faces flow_x[y, x], flow_y[y, x] and hex flow_z[y, x]) whose values differ
    in any bit between two states, as changed_cells takes them."""
    def differ(a, b):
        a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
        return a.view(np.uint32) != b.view(np.uint32)
    water = differ(before[0], after[0])
    ny, nx = water.shape
    texels = np.zeros((ny + 1, nx + 1), bool)
    texels[:ny, :nx] |= water
    texels[:ny, :] |= differ(before[1], after[1])
    texels[:, :nx] |= differ(before[2], after[2])
    if len(before) == 4:
        texels |= differ(before[3], after[3])
    return texels


def awake_tiles(changed, tile: int, open_cells=None, woken=None) -> np.ndarray:
    """(tiles y, tiles x) bools: the tiles of `tile` x `tile` cells the next substep computes, from the
    cells that changed in the substep before (with the tiles beside theirs), the cells beside a side that
    is not a wall (`open_cells`: their tiles) and the tiles an edit woke (`woken`); (ny, nx) bools, the
    last (tiles y, tiles x), or None."""
    changed = np.asarray(changed, bool)
    active = _tiles(changed, tile)
    ty, tx = active.shape
    grown = np.pad(active, 1)
    awake = np.zeros_like(active)
    for dy in range(3):
        for dx in range(3):
            awake |= grown[dy:dy + ty, dx:dx + tx]
    if open_cells is not None:
        awake |= _tiles(np.asarray(open_cells, bool), tile)
    return awake if woken is None else awake | woken


def _tiles(cells, tile: int) -> np.ndarray:
    ny, nx = cells.shape
    ty, tx = -(-ny // tile), -(-nx // tile)
    padded = np.zeros((ty * tile, tx * tile), bool)
    padded[:ny, :nx] = cells
    return padded.reshape(ty, tile, tx, tile).any(axis=(1, 3))
