"""Terrain that the water shapes (docs/design.md, "Erosion"): after each water substep, three passes on
the GPU (water/erode_mix.comp, water/erode.comp, water/slump.comp, their arithmetic in
shaders/common/erosion.glsl; the float64 twin hydro/reference/erosion.py) carry the suspended sediment
with the substep's own face flows, exchange material between the bed and the water, and slump beds
steeper than the talus angle. Material (bed + sediment) only moves: it leaves through open sides,
booked per boundary face, and what float32 rounding drops from a bed is owed to it (`owed`).

The passes read the substep's scaled flows and the water it left where the cell-wise kernel has them:
calls that erode on that kernel (CPU rasterisers, calls of one substep) run them after each substep
(the kernel's hook). GPU calls of several substeps erode inside the blocked kernel's tile program
instead (water_kernels.ErodingBlocked), on this state's textures, ledger and uniforms.
"""
from __future__ import annotations

import math

import numpy as np

from . import _gl, _native
from ._owner import Held
from .params import Erosion

SPEED_DEPTH_CELLS = 1e-3    # velocities only in water deeper than this many cells (a film's flow / depth is no speed)
NEIGHBOUR_UNITS = _gl.BINDINGS["B_ERODED_IMAGE"] + 1     # image units the passes' neighbour images take
NO_FLOOR = -3.0e38          # the bedrock where none is set


def erosion_uniforms(p: Erosion, geo, dt: float) -> dict:
    """common/erosion.glsl's uniforms for substeps of dt (every erosion pass's, with the model's)."""
    return dict(u_capacity=p.capacity, u_dissolve_rate=min(p.dissolve * dt, 1.0),
                u_deposit_rate=min(p.deposit * dt, 1.0),
                u_talus_drop=geo.pipe_length * math.tan(math.radians(p.talus)),
                u_slump_rate=min(p.slump * dt, 1.0 / geo.faces_per_cell))


def erode_uniforms(geo, cell_size: float) -> dict:
    """The erode pass's own uniforms: the pipe length (the bed's gradient) and the depth speeds need."""
    return dict(u_pipe_length=geo.pipe_length, u_speed_depth=SPEED_DEPTH_CELLS * cell_size)


def fill_texture(tex, value: float) -> None:
    """Set every texel of an r32f texture to `value`, a band of rows at a time (no host array the size of
    the grid)."""
    nx, ny = tex.size
    rows = max(1, (1 << 20) // nx)
    band = np.full((rows, nx), value, np.float32).tobytes()
    for y in range(0, ny, rows):
        n = min(rows, ny - y)
        tex.write(band[:4 * n * nx], viewport=(0, y, nx, n))


class ErosionState(Held):
    """A grid's erosion: suspended sediment, the bedrock, what rounding owes each bed, scratch textures,
    the sediment ledger (per boundary face, fp64) and the passes."""

    held = ("sediment", "bedrock", "owed", "concentration", "eroded", "ledger", "columns")

    def __init__(self, state, faces: int):
        self.state, self.ctx = state, state.ctx
        self.params: Erosion | None = None
        self.has_bedrock = False
        for name in self.held:
            setattr(self, name, None)
        try:
            self.sediment, self.owed, self.concentration, self.eroded = (self._texture() for _ in range(4))
            self.bedrock = self._texture(NO_FLOOR)
            self.ledger = self.ctx.buffer(reserve=8 * max(faces, 1))
            self.ledger.clear()
            self.columns = self.ctx.buffer(reserve=8 * state.nx)
        except BaseException:
            self.release()
            raise
        self._programs = None
        self.images = False             # the passes read neighbours through image units (prepare())
        self.views = False              # and the flows through the cell-wise kernel's views (prepare())
        self._image_units = _native.image_units(self.ctx)

    def _texture(self, value: float = 0.0):
        s = self.state
        tex = self.ctx.texture((s.nx, s.ny), 1, dtype="f4")
        tex.filter = (0x2600, 0x2600)           # GL_NEAREST: read with texelFetch only
        tex.repeat_x = tex.repeat_y = False
        fill_texture(tex, value)
        return tex

    def programs(self) -> dict:
        """The passes for the state's model (its defines) and neighbour reads, made on first use after they
        change."""
        defines = dict(self.state.defines, NEIGHBOUR_IMAGES=self.images, BUFFER_VIEWS=self.views)
        if self._programs is None or self._programs[0] != defines:
            made = {name: _gl.program(self.ctx, f"water/{name}.comp", dict(defines))
                    for name in ("erode_mix", "erode", "slump")}
            made["erode_ring"] = _gl.program(self.ctx, "water/erode.comp", dict(defines, RING=True))
            self._programs = (dict(defines), made)
        return self._programs[1]

    def prepare(self, dt: float, images: bool = False, views: bool = False) -> None:
        """Set the passes' uniforms for a call's substeps of dt (before its first substep); `images`: read
        the neighbours through image units (water_plan.Tuning.erosion_images), where the context has them;
        `views`: read the flows through the buffer-texture views the cell-wise kernel binds (its
        BUFFER_VIEWS), which CPU rasterisers load several times faster than storage buffers."""
        self.images = images and self._image_units >= NEIGHBOUR_UNITS
        self.views = views
        s = self.state
        progs = self.programs()
        uniforms = dict(s.model_uniforms(dt), **erosion_uniforms(self.params, s.geometry, dt))
        for prog in progs.values():
            _gl.set_uniforms(prog, **uniforms)
        for prog in (progs["erode"], progs["erode_ring"]):
            _gl.set_uniforms(prog, **erode_uniforms(s.geometry, s.params.cell_size))

    def substep(self) -> None:
        """The three passes after a water substep whose scaled flows are at B_FLOW_* and whose water is in
        the state's texture (the cell-wise kernel's hook), with the uniforms prepare() set for the call;
        the kernel's bindings are left as found."""
        s, b = self.state, _gl.BINDINGS
        progs = self._programs[1]
        self.sediment.bind_to_image(b["B_SEDIMENT"], read=True, write=True)
        self.owed.bind_to_image(b["B_TERRAIN_OWED"], read=True, write=True)
        self.concentration.bind_to_image(b["B_OUT_IMAGE"], read=False, write=True)
        _gl.dispatch(self.ctx, progs["erode_mix"], s.nx, s.ny)
        if self.images:
            self.concentration.bind_to_image(b["B_CONCENTRATION_IMAGE"], read=True, write=False)
            self.bedrock.bind_to_image(b["B_BEDROCK_IMAGE"], read=True, write=False)
        else:
            self.concentration.use(b["B_CONCENTRATION"])
            self.bedrock.use(b["B_BEDROCK"])
        self.eroded.bind_to_image(b["B_OUT_IMAGE"], read=False, write=True)
        self.ledger.bind_to_storage_buffer(b["B_SEDIMENT_LEDGER"])
        if s.nx > 2 and s.ny > 2:           # the cells inside the edge, then the edge's (erode.comp)
            _gl.dispatch(self.ctx, progs["erode"], s.nx - 2, s.ny - 2)
        ring = s.nx * min(s.ny, 2) + min(s.nx, 2) * max(s.ny - 2, 0)
        _gl.dispatch(self.ctx, progs["erode_ring"], ring, 1, local=(64, 1))
        if self.images:
            self.eroded.bind_to_image(b["B_ERODED_IMAGE"], read=True, write=False)
        else:
            self.eroded.use(b["B_ERODED"])
        s.terrain.bind_to_image(b["B_TERRAIN"], read=False, write=True)
        _gl.dispatch(self.ctx, progs["slump"], s.nx, s.ny)
        s.terrain.bind_to_image(b["B_TERRAIN"], read=True, write=False)

    def material(self) -> float:
        """(bed + sediment + what rounding owes the bed) x cell area over the grid, fp64 on the GPU; waits."""
        s, b = self.state, _gl.BINDINGS
        prog = _gl.program(self.ctx, "water/material.comp")
        _gl.set_uniforms(prog, u_size=s.size)
        s.terrain.bind_to_image(b["B_TERRAIN"], read=True, write=False)
        self.sediment.bind_to_image(b["B_SEDIMENT"], read=True, write=False)
        self.owed.bind_to_image(b["B_TERRAIN_OWED"], read=True, write=False)
        self.columns.bind_to_storage_buffer(b["B_PARTIALS"])
        _gl.dispatch(self.ctx, prog, s.nx, 1, local=(64, 1))
        return math.fsum(np.frombuffer(self.columns.read(), np.float64)) * s.geometry.cell_area

    def sediment_entered(self) -> float:
        """The sediment volume that crossed the sides into the grid (negative: out); waits."""
        return math.fsum(np.frombuffer(self.ledger.read(), np.float64))
