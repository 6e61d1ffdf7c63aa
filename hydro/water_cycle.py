"""The water cycle on the GPU (docs/design.md, "The water cycle"): rain over every cell (a rate or a
field), evaporation where water is, and springs and drains (`Source`) that last until removed, with
no per-frame calls. Every water kernel runs the cycle's arithmetic (shaders/common/model.glsl's
cycled()) on each column after each substep's move (shaders/common/cycle.glsl); this module holds what
it reads (the rates: uniforms, a rain-field texture and a sources texture) and the record per cell of
what it took, which the grid's stats pass adds to the ledger (water/stats.comp), and what it owes the
column (what float32 rounding kept from it, added at the next substep).

What rain and springs add is booked here, in float64, from the float32 rates the GPU adds: rate x area
x time. What evaporation and drains take depends on the water there, so the kernels record it per cell.
"""
from __future__ import annotations

import math

import numpy as np

from . import _gl, lattice
from . import _validate as check
from ._owner import Held

# the sources field's sums are kept per block of BLOCK x BLOCK cells, so a change costs its own box
BLOCK = 64
# the rows of zeros a texture is cleared with at a time, so a large grid's clear stays small
CLEAR_BYTES = 1 << 26


class Source:
    """A spring (rate > 0: adds `rate` m^3/s, exactly) or a drain (rate < 0: takes up to |rate| m^3/s,
    never more than the water there) under a smooth round brush, from grid.add_source(x, y, radius,
    rate). It lasts until remove(); setting `rate` changes it from the next step() on."""

    def __init__(self, cycle: "Cycle", key: int, x: float, y: float, radius: float, rate: float):
        self._cycle, self._key = cycle, key
        self.x, self.y, self.radius = x, y, radius
        self._rate = rate

    @property
    def alive(self) -> bool:
        """False once removed (or its grid released)."""
        return self._key in self._cycle.sources and not self._cycle.grid._released

    @property
    def rate(self) -> float:
        """m^3/s: > 0 a spring, < 0 a drain, 0 idle."""
        return self._rate

    @rate.setter
    def rate(self, value) -> None:
        self._check_alive()
        value = check.real32("rate", value)
        self._rate = value
        self._cycle.changed(self._key)

    def remove(self) -> None:
        """Stop the source (idempotent)."""
        if self.alive:
            self._cycle.remove(self._key)

    def _check_alive(self):
        self._cycle.grid._alive()
        if not self.alive:
            raise RuntimeError("Source: removed (add a new one with grid.add_source)")

    def __repr__(self):
        kind = "spring" if self._rate > 0 else "drain" if self._rate < 0 else "idle source"
        state = "" if self.alive else ", removed"
        return f"Source({kind} at ({self.x}, {self.y}), radius {self.radius}, rate {self._rate} m^3/s{state})"


class Cycle(Held):
    """The water cycle of one grid: its rates and sources, the textures the kernels read them from and each
    cell's record (`record`, a vec4 a cell: depth taken by evaporation and drains, depth owed to the column
    from supply and evaporation; common/cycle.glsl)."""

    held = ("record", "record_out", "rain_texture", "sources_texture")

    def __init__(self, grid, state, records: bool = True):
        self.grid, self.ctx, self.state = grid, state.ctx, state
        self.nx, self.ny, self.cell_area = state.nx, state.ny, state.geometry.cell_area
        self.record = self.record_out = self.rain_texture = self.sources_texture = None
        self.rain = 0.0                 # m/s, a float32 value, or a float32 (ny, nx) field
        self.evaporation = 0.0
        self.sources: dict[int, Source] = {}
        self._shapes = {}               # key -> (x0, y0, weights float32 (h, w) summing to about 1)
        self._next_key = 1
        self._springs = {}              # block (bx, by) -> (float64 sum, max) of its springs' rates, m/s
        self.rain_rate = 0.0            # m^3/s the rain adds over the grid (float64 of its float32 rates)
        self.rain_max = 0.0             # the fastest rain on a cell, m/s
        # the records (rgba32f textures, which any grid fits) as they are, and the texture a dispatch with
        # halos writes them to (swap_records); a grid that keeps them itself (`records` False: the
        # fragment backend's render targets) has none
        if records:
            self.record = self._texture(4)
            self.record_out = self._texture(4)

    # ------------------------------------------------------------------------------------------ rates

    def set_rain(self, value) -> None:
        if np.ndim(value) == 0:
            rate = check.real32("rain", value, low=0.0)
            self.rain, self.rain_rate = float(np.float32(rate)), float(np.float32(rate)) * self.cell_area * self.nx * self.ny
            self.rain_max = self.rain
            return
        field = check.field("rain", value, (self.ny, self.nx), nonnegative=True)
        if self.rain_texture is None:
            self.rain_texture = self._texture(1)
        self.rain_texture.write(field.tobytes())
        self.rain = field
        self.rain_rate = float(field.sum(dtype=np.float64)) * self.cell_area
        self.rain_max = float(field.max())

    def set_evaporation(self, value) -> None:
        self.evaporation = float(np.float32(check.real32("evaporation", value, low=0.0)))

    @property
    def spring_rate(self) -> float:
        """m^3/s the springs add (float64 of the float32 rates the GPU adds)."""
        return math.fsum(total for total, _ in self._springs.values()) * self.cell_area

    @property
    def max_supply(self) -> float:
        """The most depth a second rain and springs add to any cell (a bound, for the stable substep)."""
        return self.rain_max + max((top for _, top in self._springs.values()), default=0.0)

    @property
    def takes(self) -> bool:
        """Whether evaporation or a drain takes water, which the cells' records sum until the stats pass."""
        return self.evaporation > 0 or any(source.rate < 0 for source in self.sources.values())

    @property
    def defines(self) -> dict:
        rain_field = isinstance(self.rain, np.ndarray)
        on = rain_field or self.rain > 0 or self.evaporation > 0 or bool(self.sources)
        return {"CYCLE": on, "RAIN_FIELD": on and rain_field, "SOURCES": on and bool(self.sources)}

    def uniforms(self) -> dict:
        return {"u_rain": 0.0 if isinstance(self.rain, np.ndarray) else self.rain, "u_evaporation": self.evaporation}

    def bind(self, in_place: bool = False) -> None:
        """Bind what the kernels read: the rates, and the records to read and to write (`in_place`: the
        same texture, for passes in which each cell is read and written by its owner alone)."""
        b = _gl.BINDINGS
        self.bind_records(in_place)
        if self.rain_texture is not None:
            self.rain_texture.use(b["B_RAIN_FIELD"])
        if self.sources_texture is not None:
            self.sources_texture.use(b["B_SOURCES"])

    def bind_records(self, in_place: bool = False) -> None:
        b = _gl.BINDINGS
        self.record.use(b["B_CYCLE_RECORD"])
        (self.record if in_place else self.record_out).bind_to_image(b["B_CYCLE_RECORD_OUT"], read=False, write=True)

    def bind_for_stats(self) -> None:
        """Bind the records for the stats pass, which reads and clears them and clears the other texture
        alike (water/stats.comp)."""
        b = _gl.BINDINGS
        self.record.bind_to_image(b["B_CYCLE_RECORD_IMAGE"], read=True, write=True)
        self.record_out.bind_to_image(b["B_CYCLE_RECORD_OUT"], read=False, write=True)

    def swap_records(self) -> None:
        """A dispatch with halos wrote every cell's record to record_out: it becomes the records."""
        self.record, self.record_out = self.record_out, self.record
        self.bind_records()

    # ---------------------------------------------------------------------------------------- sources

    def add(self, x, y, radius, rate) -> Source:
        """A new source; the caller has checked x, y, radius and rate."""
        box = lattice.brush_box((self.ny, self.nx), x, y, radius, self.grid._hexagonal)
        if box is None:
            raise ValueError(f"x, y: a source of radius {radius} at ({x}, {y}) reaches no cell of the "
                             f"{self.nx} x {self.ny} grid (cells are at x = 0 .. {self.nx - 1}, "
                             f"y = 0 .. {self.ny - 1})")
        x0, y0, weights = box
        if self.sources_texture is None:
            self.sources_texture = self._texture(2)
        key, self._next_key = self._next_key, self._next_key + 1
        self._shapes[key] = (x0, y0, (weights / weights.sum()).astype(np.float32))
        self.sources[key] = source = Source(self, key, x, y, radius, rate)
        self._refresh(key)
        return source

    def changed(self, key: int) -> None:
        self._refresh(key)
        self.grid._cycle_changed()

    def remove(self, key: int) -> None:
        del self.sources[key]
        self._refresh(key)
        del self._shapes[key]
        self.grid._cycle_changed()

    def _refresh(self, key: int) -> None:
        """Write the rates of the blocks source `key`'s brush touches, from every live source there."""
        x0, y0, w = self._shapes[key]
        bx0, by0 = x0 // BLOCK, y0 // BLOCK
        bx1, by1 = (x0 + w.shape[1] - 1) // BLOCK, (y0 + w.shape[0] - 1) // BLOCK
        rx0, ry0 = bx0 * BLOCK, by0 * BLOCK
        rx1, ry1 = min((bx1 + 1) * BLOCK, self.nx), min((by1 + 1) * BLOCK, self.ny)
        rates = np.zeros((ry1 - ry0, rx1 - rx0, 2))        # springs, drains: m/s of depth
        for k, source in self.sources.items():
            sx0, sy0, sw = self._shapes[k]
            ix0, iy0 = max(sx0, rx0), max(sy0, ry0)
            ix1, iy1 = min(sx0 + sw.shape[1], rx1), min(sy0 + sw.shape[0], ry1)
            if ix0 >= ix1 or iy0 >= iy1 or source.rate == 0:
                continue
            part = sw[iy0 - sy0:iy1 - sy0, ix0 - sx0:ix1 - sx0].astype(np.float64) * (abs(source.rate) / self.cell_area)
            rates[iy0 - ry0:iy1 - ry0, ix0 - rx0:ix1 - rx0, 0 if source.rate > 0 else 1] += part
        rates = rates.astype(np.float32)
        self.sources_texture.write(rates.tobytes(), viewport=(rx0, ry0, rx1 - rx0, ry1 - ry0))
        for by in range(by0, by1 + 1):
            for bx in range(bx0, bx1 + 1):
                block = rates[by * BLOCK - ry0:(by + 1) * BLOCK - ry0, bx * BLOCK - rx0:(bx + 1) * BLOCK - rx0, 0]
                if block.any():
                    self._springs[bx, by] = (float(block.sum(dtype=np.float64)), float(block.max()))
                else:
                    self._springs.pop((bx, by), None)

    def _texture(self, components: int):
        tex = self.ctx.texture((self.nx, self.ny), components, dtype="f4")
        row = 4 * components * self.nx
        rows = max(1, CLEAR_BYTES // row)
        for y in range(0, self.ny, rows):              # zeros, a band of rows at a time
            tex.write(bytes(row * min(rows, self.ny - y)), viewport=(0, y, self.nx, min(rows, self.ny - y)))
        tex.filter = (0x2600, 0x2600)       # GL_NEAREST: read with texelFetch only
        tex.repeat_x = tex.repeat_y = False
        return tex
