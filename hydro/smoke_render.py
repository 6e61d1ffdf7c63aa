"""SmokeRenderer: draws a SmokeGrid's gas as smoke (and flame) on the caller's context, straight from its
textures, in 2D: the grid fills a rectangle of a framebuffer.

    renderer = hydro.smoke_render.SmokeRenderer(ctx, grid)   # ctx: the game's moderngl.Context
    renderer.draw()                                          # into the bound framebuffer, all of it
    renderer.draw(framebuffer=fbo, viewport=(x, y, w, h))    # or into a rectangle of the game's own

What it draws (shaders/render/smoke_shade.comp at the grid's resolution, then smoke_quad.* per pixel):
- opacity from density, 1 - exp(-opacity * density), over a dim background gradient: thin smoke is
  faint and dense smoke opaque, never a flat white blob;
- a soft light: from each cell the shading pass marches towards the light through the density (and
  the obstacles, which cast shadows), and the smoke is lit by what gets through plus an ambient
  term, so thick smoke darkens inside and glows at its lit rim;
- flame: gas hotter than the ambient emits a blackbody-like ramp (red, orange, yellow-white);
- exposure and a filmic tone curve (1 - exp(-x)) and the sRGB transfer, so bright flame and lit smoke
  roll off instead of clipping;
- all of it per cell, then scaled up to the screen by a cubic B-spline (no cell staircase), with the
  obstacles in a flat slate over it: a big window costs five texture samples a pixel, which keeps a
  software rasteriser at frame rate. How it looks is a SmokeStyle (lengths in cells, colours linear RGB).

GL state: draws one opaque quad with blending and depth testing off inside a moderngl scope, which puts
the framebuffer and the enable flags back afterwards; the viewport of the framebuffer it drew into is
put back too. It binds its two texture units (`texture_units`) and the texture and image units of its
shading pass (hydro's own binding points), with a sampler on the obstacles' and the density's, which
it unbinds again, and does not restore the current program or vertex array. This module imports moderngl and numpy only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import moderngl
import numpy as np

from . import _gl, _owner
from . import _validate as check

__all__ = ["SmokeRenderer", "SmokeStyle"]


@dataclass(frozen=True)
class SmokeStyle:
    """How the gas looks. Colours are linear RGB (> 1 allowed for lights)."""
    background_top: tuple = (0.012, 0.014, 0.022)      # behind the gas, at the top of the rectangle
    background_bottom: tuple = (0.003, 0.003, 0.005)   # ... and at its bottom
    smoke_color: tuple = (0.80, 0.80, 0.82)            # what the smoke reflects (albedo)
    light_color: tuple = (1.30, 1.18, 1.00)            # the light the smoke is lit by
    ambient_color: tuple = (0.16, 0.18, 0.24)          # light that reaches the smoke everywhere (sky)
    light_direction: tuple = (-0.55, 0.84)             # towards the light, in the grid's plane (x right, y up)
    opacity: float = 1.2                               # per unit density: alpha = 1 - exp(-opacity * density)
    shadow: float = 0.35                               # light's extinction per unit density per cell crossed
    shadow_length: int = 24                            # cells the light pass marches towards the light
    flame_temperature: float = 2.0                     # T - T_ambient at which flame glows yellow-white
    flame_brightness: float = 3.0                      # emission of the hottest flame
    exposure: float = 1.6                              # before the tone curve 1 - exp(-exposure * colour)
    obstacle_color: tuple = (0.06, 0.075, 0.10)        # solid cells

    def __post_init__(self):
        for name in ("background_top", "background_bottom", "smoke_color", "light_color", "ambient_color",
                     "obstacle_color"):
            value = getattr(self, name)
            if np.shape(value) != (3,) or not np.all(np.isfinite(np.asarray(value, float))) or min(value) < 0:
                raise ValueError(f"{name}: expected three finite numbers >= 0 (linear RGB), got {value!r}")
        direction = check.pair("light_direction", self.light_direction, "(x, y)")
        if math.hypot(*direction) == 0.0:
            raise ValueError("light_direction: must not be zero")
        for name in ("opacity", "flame_temperature", "exposure"):
            check.positive(name, getattr(self, name))
        for name in ("shadow", "flame_brightness"):
            check.real(name, getattr(self, name), low=0.0)
        check.integer("shadow_length", self.shadow_length, low=0, high=256)


def _srgb(linear):
    """The sRGB transfer of linear values (smoke_shade.comp's srgb())."""
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * np.power(linear, 1.0 / 2.4) - 0.055)


class SmokeRenderer(_owner.Owner):
    """Draws one SmokeGrid (hydro.smoke) as smoke and flame.

    ctx: the moderngl.Context that owns `grid`. grid: the SmokeGrid to draw, read through its
    textures (density_texture, obstacle_texture) at every draw, never copied. style: a SmokeStyle,
    settable. texture_units: the two texture units the draw binds (the shaded cells, the obstacles).
    """

    _kind = "SmokeRenderer"

    def __init__(self, ctx, grid, *, style: SmokeStyle | None = None, texture_units=(14, 15)):
        self._released = True
        _gl.require_compute(ctx)
        if not hasattr(type(grid), "density_texture") or not hasattr(type(grid), "obstacle_texture"):
            raise TypeError(f"grid: expected a hydro SmokeGrid, got {type(grid).__name__}")
        if getattr(grid, "ctx", None) is not ctx:
            raise ValueError("grid: it belongs to another moderngl context than ctx")
        units = tuple(texture_units)
        if len(units) != 2 or len(set(units)) != 2 or not all(isinstance(u, int) and 0 <= u < 32 for u in units):
            raise ValueError(f"texture_units: expected two distinct ints in [0, 32), got {texture_units!r}")
        self.style = style if style is not None else SmokeStyle()
        self.ctx, self.grid, self.texture_units = ctx, grid, units
        self._made = []
        try:
            self._quad_prog = _gl.program(ctx, "render/smoke_quad.vert", fragment="render/smoke_quad.frag")
            self._shade_prog = _gl.program(ctx, "render/smoke_shade.comp")
            self._shade = self._keep(ctx.texture((grid.nx, grid.ny), 4, dtype="f1"))
            self._shade.filter = (moderngl.LINEAR, moderngl.LINEAR)
            self._shade.repeat_x = self._shade.repeat_y = False
            self._sampler = self._keep(ctx.sampler(filter=(moderngl.LINEAR, moderngl.LINEAR), repeat_x=False,
                                                   repeat_y=False))
            self._vbo = self._keep(ctx.buffer(np.array([-1, -1, 1, -1, -1, 1, 1, 1], np.float32).tobytes()))
            self._vao = self._keep(ctx.vertex_array(self._quad_prog, [(self._vbo, "2f", "in_pos")]))
        except BaseException:
            for obj in reversed(self._made):
                obj.release()
            raise
        self._released = False
        self._seal()

    def _keep(self, obj):
        self._made.append(obj)
        return obj

    def _set_style(self, value):
        if not isinstance(value, SmokeStyle):
            raise TypeError(f"style: expected a SmokeStyle, got {type(value).__name__}")
        self._style = value

    style = property(lambda self: self._style, _set_style,
                     doc="How the gas looks; settable (a SmokeStyle), read at every draw.")

    def draw(self, framebuffer=None, viewport=None) -> None:
        """Draw the grid over `viewport` (x, y, width, height in pixels; default the whole
        framebuffer) of `framebuffer` (default the one moderngl has bound). The grid's y points up, as
        GL's does."""
        self._alive()
        if framebuffer is not None and not isinstance(framebuffer, moderngl.Framebuffer):
            raise TypeError(f"framebuffer: expected a moderngl.Framebuffer, got {type(framebuffer).__name__}")
        if viewport is not None and (isinstance(viewport, (str, bytes)) or not hasattr(viewport, "__len__")
                                     or len(viewport) != 4 or not all(isinstance(v, (int, np.integer)) for v in viewport)
                                     or viewport[2] <= 0 or viewport[3] <= 0):
            raise ValueError(f"viewport: expected (x, y, width, height) ints with width, height > 0, got {viewport!r}")
        target = framebuffer if framebuffer is not None else self.ctx.fbo
        if target is None:
            raise ValueError("framebuffer: none given and none bound")
        if viewport is None:
            viewport = (0, 0, *target.size)
        self._shade_pass()
        shade, solid = self.texture_units
        self._shade.use(shade)
        self.grid.obstacle_texture.use(solid)
        self._sampler.use(solid)
        _gl.set_uniforms(self._quad_prog, u_shade=shade, u_solid=solid,
                         u_obstacle_color=tuple(float(v) for v in _srgb(np.asarray(self.style.obstacle_color))))
        before = target.viewport
        scope = self.ctx.scope(target, enable_only=moderngl.NOTHING)
        try:
            with scope:
                target.viewport = tuple(int(v) for v in viewport)
                self._vao.render(moderngl.TRIANGLE_STRIP)
                target.viewport = before
        finally:
            scope.release()
            self._sampler.clear(solid)

    def _shade_pass(self) -> None:
        """The gas's premultiplied colour and opacity at each cell (smoke_shade.comp), lit from
        style.light_direction."""
        s, grid = self.style, self.grid
        d = np.asarray(s.light_direction, float)
        d /= np.linalg.norm(d)
        prog = self._shade_prog
        _gl.set_uniforms(prog, u_size=(grid.nx, grid.ny), u_step=(float(d[0]), float(d[1])),
                         u_samples=int(s.shadow_length), u_extinction=float(s.shadow), u_opacity=float(s.opacity),
                         u_ambient_temperature=float(grid.params.ambient_temperature),
                         u_smoke_color=tuple(map(float, s.smoke_color)), u_light_color=tuple(map(float, s.light_color)),
                         u_ambient_color=tuple(map(float, s.ambient_color)),
                         u_flame_temperature=float(s.flame_temperature), u_flame_brightness=float(s.flame_brightness),
                         u_background_top=tuple(map(float, s.background_top)),
                         u_background_bottom=tuple(map(float, s.background_bottom)),
                         u_exposure=float(s.exposure))
        units = (_gl.BINDINGS["B_SMOKE_S"], _gl.BINDINGS["B_SMOKE_SOLID"])
        for tex, unit in zip((grid.density_texture, grid.obstacle_texture), units):
            tex.use(unit)
            self._sampler.use(unit)
        self._shade.bind_to_image(_gl.BINDINGS["B_SMOKE_SHADE_OUT"], read=False, write=True)
        try:
            _gl.dispatch(self.ctx, prog, grid.nx, grid.ny)
        finally:
            for unit in units:
                self._sampler.clear(unit)

    # ------------------------------------------------------------------------------------ lifetime

    def _alive(self):
        super()._alive()
        self.grid._alive(settle=False)          # the grid's own: not released, its context current

    def _gpu_objects(self):
        """The renderer's own resources; the grid is not touched."""
        return tuple(reversed(self._made))

    def __repr__(self):
        state = ", released" if self._released else ""
        return f"SmokeRenderer({self.grid.nx}x{self.grid.ny}{state})"
