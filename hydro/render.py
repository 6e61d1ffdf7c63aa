"""Renderer: draws a water grid's terrain and water on the caller's context, straight from its textures.

    renderer = hydro.render.Renderer(ctx, grid)         # ctx: the game's moderngl.Context
    renderer.draw(view_projection)                      # into whatever framebuffer is bound
    renderer.draw(view_projection, framebuffer=fbo)     # or into the game's own framebuffer

What it draws (shaders/render/):
- a heightfield mesh built from `gl_VertexID` alone and displaced in the vertex shader by
  `grid.terrain_texture` / `grid.water_texture` (no vertex buffer, no per-frame CPU readback), closed
  by a skirt along the edges of the world like a diorama;
- terrain lit by a sun and a sky/ground hemisphere, coloured by height (sand, grass, highland, rock,
  snow) and slope (rock); ground under a thin film of water (rain, run-off) is drawn soaked, darker,
  deeper in colour and faintly glossy, as is a damp band just above the waterline;
- water whose colour and opacity follow its depth (1 - exp(-d/D)), with a Fresnel sky reflection, a
  sun glint, and foam streaks on fast water (and where moving water meets the shore) carried along a
  velocity texture; the water's whole look fades in with depth up to `film_depth`, so a film reads as
  wet ground and foam never shows on water merely because it is thin;
- the velocity texture (`velocity_texture`, rg32f, world units/s) comes from the grid's face flows in
  a small pass run at every draw: mean face flow / (depth * face width) (common/velocity.glsl), a compute
  pass (`velocity.comp`) or, for a grid of the fragment backend (GL 3.3-4.2, `grid.backend == "fragment"`),
  a render-to-texture pass (`velocity.frag`) reading the grid's flow textures;
- fresh sediment, once asked (`track_deposits()`: a grid with erosion on, hydro.Erosion): ground the
  water has raised above the terrain as it was then, or carries sediment over, drawn as silt, and
  sediment-laden water drawn muddy, from a small pass run at every draw over the terrain, a copy of it
  taken on the GPU (the reference) and `grid.sediment_texture`, render/deposits.glsl's arithmetic: a
  compute pass (`deposits.comp`, the copy `deposit_reference.comp`) or, on the fragment backend, a
  render-to-texture pass (`deposits.frag`, the copy `deposit_reference.frag` in a viewport of the
  rectangle copied). A renderer that tracks no deposits reads none of this and draws as before.

Square grids (`WaterGrid`) and triangular-lattice grids (`HexWaterGrid`) are both drawn; the lattice is
a define, not a second shader tree. The drawing shaders are GLSL 4.10 (3.30 on older contexts, hydro._gl):
a grid of the compute backend needs a GL 4.3 context, one of the fragment backend draws on GL 3.3 and up
(macOS: 4.1).

Coordinates: world x, y are the grid's horizontal axes in world units (square cell [y, x] centred at
((x + 0.5), (y + 0.5)) * cell_size; hex vertex (x, y) at x * (s, 0) + y * (s/2, s*sqrt(3)/2)) and z is
height, up. `view_projection` maps world points to clip space: clip = M @ (x, y, z, 1). Pass M as a
(4, 4) array in that usual mathematical layout (it is uploaded column-major, transposed, as GL wants),
or as a flat sequence of 16 numbers already in GL's column-major order (e.g. a pyglet `Mat4`).
`perspective()` and `look_at()` below build such matrices.

GL state: with no `framebuffer`, `draw` draws into the framebuffer GL has bound, inside GL's viewport
and scissor box, whether the game set them through moderngl or not (pyglet sets the viewport on a
resize behind moderngl's back). It blends the water over the terrain with its own blend function
(SRC_ALPHA, ONE_MINUS_SRC_ALPHA, added), whatever the game had set; afterwards that framebuffer,
viewport, scissor, the enable flags (DEPTH_TEST, BLEND, CULL_FACE, ...), the blend function and
equation, the depth and colour write masks and the active texture unit are as GL had them. The depth function is the game's (it goes
with the game's projection: a reversed-depth game sets GREATER), and is not changed.
Given a `framebuffer`, it draws into it with that framebuffer's own viewport. It cannot restore: the
textures bound to its texture units (`texture_units`, default 13, 14, 15 and, while it tracks deposits,
12), the image unit and storage-buffer bindings of the velocity and deposits passes (hydro's own
binding points, shaders/common/bindings.glsl), and the current program and vertex array. On the
fragment backend the velocity and deposits passes (in `draw`, `update_velocity`, `update_deposits`
and `track_deposits`) bind their input textures to those texture units and render into a framebuffer
of the texture they write; the framebuffer GL had bound, its viewport and scissor, and the state above
are put back after them.

This module imports moderngl and numpy only.
"""
from __future__ import annotations

import contextlib
import ctypes
import math
from dataclasses import dataclass

import moderngl
import numpy as np

from . import _gl, _native, _owner
from . import _validate as check
from .water_fragment import FragmentWaterGrid

__all__ = ["Renderer", "RenderStyle", "perspective", "look_at", "orbit_eye"]


@dataclass(frozen=True)
class RenderStyle:
    """How the world looks. Lengths, depths included, are in cells (multiplied by the grid's cell_size)
    unless noted, so the depth thresholds keep their proportions to one another at any cell size."""
    sun_direction: tuple = (-0.70, 0.35, 0.62)      # toward the sun, world axes; normalised
    sun_color: tuple = (1.05, 0.98, 0.88)            # linear RGB; > 1 allowed
    sky_color: tuple = (0.62, 0.76, 0.90)            # ambient from above, water reflection and fog
    ground_color: tuple = (0.30, 0.26, 0.22)         # ambient from below
    fog_density: float = 0.0                         # per cell of distance from the camera; 0 = no fog
    depth_scale: float = 2.5                         # water depth at which it is 63 % opaque
    foam_depth: float = 0.12                         # surf on a shore of moving water fades out by this depth
    wet_depth: float = 0.003                         # soaking takes a few mm: this film looks fully wet
    film_depth: float = 0.05                         # thinner water shows no colour or foam of its own:
                                                     # drawn as wet ground, the water fading in up to here
    streak_speed: float = 3.0                        # cells/s at which flow streaks are fully formed
    dry_depth: float = 1e-3                          # shallower columns are drawn dry
    skirt_depth: float = 2.0                         # skirt bottom, below the lowest terrain at creation
    # fresh sediment (Renderer.track_deposits): its colour, the depth of it that covers the ground,
    # and the sediment per depth of water at which the water looks all mud (a ratio, not in cells)
    silt_color: tuple = (0.74, 0.60, 0.40)
    silt_depth: float = 0.08
    mud_concentration: float = 0.08

    def __post_init__(self):
        for name in ("sun_direction", "sun_color", "sky_color", "ground_color", "silt_color"):
            value = getattr(self, name)
            if np.shape(value) != (3,) or not np.all(np.isfinite(np.asarray(value, float))):
                raise ValueError(f"{name}: expected three finite numbers, got {value!r}")
        if np.linalg.norm(self.sun_direction) == 0.0:
            raise ValueError("sun_direction: must not be zero")
        check.real("fog_density", self.fog_density, low=0.0)
        for name in ("depth_scale", "foam_depth", "wet_depth", "film_depth", "streak_speed", "dry_depth",
                     "skirt_depth", "silt_depth", "mud_concentration"):
            check.positive(name, getattr(self, name))


def perspective(fovy_degrees: float, aspect: float, near: float, far: float) -> np.ndarray:
    """The GL perspective projection (math layout: clip = P @ view_point), camera looking down -z."""
    f = 1.0 / math.tan(math.radians(fovy_degrees) / 2.0)
    return np.array([[f / aspect, 0.0, 0.0, 0.0],
                     [0.0, f, 0.0, 0.0],
                     [0.0, 0.0, (far + near) / (near - far), 2.0 * far * near / (near - far)],
                     [0.0, 0.0, -1.0, 0.0]])


def look_at(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """The view matrix (math layout) of a camera at `eye` looking at `target`; world z is up."""
    eye, target, up = (np.asarray(v, float) for v in (eye, target, up))
    forward = target - eye
    forward /= np.linalg.norm(forward)
    side = np.cross(forward, up)
    if np.linalg.norm(side) < 1e-9:                    # looking straight up or down
        side = np.cross(forward, (0.0, 1.0, 0.0))
    side /= np.linalg.norm(side)
    true_up = np.cross(side, forward)
    view = np.identity(4)
    view[0, :3], view[1, :3], view[2, :3] = side, true_up, -forward
    view[:3, 3] = -view[:3, :3] @ eye
    return view


def orbit_eye(target, distance: float, yaw_degrees: float, pitch_degrees: float) -> np.ndarray:
    """Camera position on a sphere around `target`: yaw about world z, pitch above the horizon."""
    yaw, pitch = math.radians(yaw_degrees), math.radians(pitch_degrees)
    offset = distance * np.array([math.cos(pitch) * math.cos(yaw), math.cos(pitch) * math.sin(yaw),
                                  math.sin(pitch)])
    return np.asarray(target, float) + offset


# vertices a side of the mesh by default (mesh_step): more than a whole-world view has pixels across
MESH_VERTICES = 2048

# The game's drawing state as GL holds it (not as moderngl remembers it: a pyglet game sets it behind
# moderngl's back), read before a draw and put back after, through moderngl's function loader.
GL_VIEWPORT, GL_SCISSOR_BOX, GL_SCISSOR_TEST, GL_ACTIVE_TEXTURE = 0x0BA2, 0x0C10, 0x0C11, 0x84E0
GL_DEPTH_WRITEMASK, GL_COLOR_WRITEMASK = 0x0B72, 0x0C23     # a framebuffer's use() sets both
# glBlendFuncSeparate's and glBlendEquationSeparate's arguments, in their order
GL_BLEND_FUNC = (0x80C9, 0x80C8, 0x80CB, 0x80CA)     # SRC_RGB, DST_RGB, SRC_ALPHA, DST_ALPHA
GL_BLEND_EQUATION = (0x8009, 0x883D)                 # RGB, ALPHA
_ENABLE_FLAGS = {moderngl.DEPTH_TEST: 0x0B71, moderngl.BLEND: 0x0BE2, moderngl.CULL_FACE: 0x0B44,
                 moderngl.RASTERIZER_DISCARD: 0x8C89, moderngl.PROGRAM_POINT_SIZE: 0x8642}
_STATE_FUNCTIONS = {"glGetIntegerv": (None, [ctypes.c_uint, ctypes.POINTER(ctypes.c_int)]),
                    "glIsEnabled": (ctypes.c_ubyte, [ctypes.c_uint]), "glActiveTexture": (None, [ctypes.c_uint]),
                    "glBlendFuncSeparate": (None, [ctypes.c_uint] * 4),
                    "glBlendEquationSeparate": (None, [ctypes.c_uint] * 2),
                    "glDepthMask": (None, [ctypes.c_ubyte]), "glColorMask": (None, [ctypes.c_ubyte] * 4)}


def _drawing_state(ctx) -> dict | None:
    """The viewport, scissor box (None: scissor test off), moderngl enable flags, blend function and
    equation, depth and colour write masks and active texture unit GL has now, and `restore()`, which
    puts back all but the first two (moderngl's scope puts those back); None where moderngl's loader is
    missing."""
    gl = {name: _native.loaded_function(ctx, name, *signature) for name, signature in _STATE_FUNCTIONS.items()}
    if None in gl.values():
        return None

    def ints(name, n):
        out = (ctypes.c_int * 4)()
        gl["glGetIntegerv"](name, out)
        return tuple(out[:n])

    flags = moderngl.NOTHING
    for flag, name in _ENABLE_FLAGS.items():
        if gl["glIsEnabled"](name):
            flags |= flag
    blend_func = [ints(name, 1)[0] for name in GL_BLEND_FUNC]
    blend_equation = [ints(name, 1)[0] for name in GL_BLEND_EQUATION]
    active_texture = ints(GL_ACTIVE_TEXTURE, 1)[0]
    depth_mask, color_mask = ints(GL_DEPTH_WRITEMASK, 1)[0], ints(GL_COLOR_WRITEMASK, 4)

    def restore():
        ctx.enable_only(flags)
        gl["glBlendFuncSeparate"](*blend_func)
        gl["glBlendEquationSeparate"](*blend_equation)
        gl["glDepthMask"](depth_mask)
        gl["glColorMask"](*color_mask)
        gl["glActiveTexture"](active_texture)

    return {"viewport": ints(GL_VIEWPORT, 4), "scissor": ints(GL_SCISSOR_BOX, 4) if gl["glIsEnabled"](GL_SCISSOR_TEST)
            else None, "restore": restore}


def _bound_framebuffer(ctx, state):
    """The framebuffer the game has bound now (through moderngl or not), with GL's viewport and scissor
    (`state`: _drawing_state's): moderngl's own record of it where that is what GL has, so the game's
    object stays bound."""
    record, bound = ctx.fbo, ctx.detect_framebuffer()
    if record is not None and (state is None or (record.glo == bound.glo and state["scissor"] is None
                                                 and tuple(record.viewport) == state["viewport"])):
        return record
    if state is not None:
        bound.viewport, bound.scissor = state["viewport"], state["scissor"]
    return bound


def _gl_matrix(view_projection) -> np.ndarray:
    """(4, 4) math layout or 16 numbers in column-major order -> 16 float32 in column-major order."""
    try:
        m = np.asarray(view_projection, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"view_projection: expected a (4, 4) array or 16 numbers, got {view_projection!r}") from None
    if m.shape == (4, 4):
        flat = m.T.reshape(16)
    elif m.shape == (16,):
        flat = m
    else:
        raise ValueError(f"view_projection: expected a (4, 4) array or 16 numbers, got shape {m.shape}")
    if not np.all(np.isfinite(flat)):
        raise ValueError("view_projection: contains NaN or infinity")
    return flat.astype(np.float32)


def _eye_from(gl_matrix: np.ndarray) -> np.ndarray:
    """The camera position (w = 1) or, for an orthographic camera, the direction toward it (w = 0)."""
    m = gl_matrix.astype(np.float64).reshape(4, 4).T
    try:
        inv = np.linalg.inv(m)
    except np.linalg.LinAlgError:
        raise ValueError("view_projection: the matrix is singular") from None
    eye = inv @ np.array([0.0, 0.0, -1.0, 0.0])          # the point that maps to w = 0 at x = y = 0
    if abs(eye[3]) > 1e-9 * max(1.0, np.abs(eye[:3]).max()):
        return np.array([*(eye[:3] / eye[3]), 1.0])
    near = inv @ np.array([0.0, 0.0, -1.0, 1.0])
    far = inv @ np.array([0.0, 0.0, 1.0, 1.0])
    toward = near[:3] / near[3] - far[:3] / far[3]
    return np.array([*(toward / np.linalg.norm(toward)), 0.0])


def _vector3(name: str, value) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{name}: expected three finite numbers, got {value!r}")
    return v


def _velocity_program(ctx, hexagonal: bool):
    """The fragment backend's velocity pass: fragment/pass.vert's triangle over the target,
    render/velocity.frag with the lattice's define."""
    return _gl.program(ctx, "fragment/pass.vert", fragment="render/velocity.frag", fragment_defines={"HEX": hexagonal})


def _deposit_program(ctx, name: str):
    """A deposits pass of the fragment backend (`deposits` or `deposit_reference`): fragment/pass.vert's
    triangle, render/<name>.frag (the same on either lattice)."""
    return _gl.program(ctx, "fragment/pass.vert", fragment=f"render/{name}.frag")


def _set(prog, **values):
    """Set uniforms that the driver kept (an unused one is optimised away, which is fine here);
    bytes are written raw (the column-major matrix)."""
    for name, value in values.items():
        if name in prog:
            if isinstance(value, bytes):
                prog[name].write(value)
            else:
                prog[name].value = value


class Renderer(_owner.Owner):
    """Draws one water grid (WaterGrid or HexWaterGrid) with the caller's camera.

    ctx: the moderngl.Context that owns `grid` (a game window's, or hydro.create_context()): GL 4.3, or
    GL 3.3 and up where the grid is of the fragment backend (`grid.backend == "fragment"`).
    grid: the grid to draw; it is read through its textures and flow buffers (the fragment backend's
    flow textures), never copied.
    style: a RenderStyle. height_range: (low, high) terrain heights spanning the colour bands; by
    default the terrain's range when the renderer is made (one readback, here only).
    texture_units: the texture units the draw may bind (terrain, water, velocity, and the fresh deposits
    while they are tracked): four, or three where deposits are never tracked; a hex grid of the
    fragment backend takes four (its velocity pass reads the water and three flow textures).
    mesh_step: cells between two vertices of the drawn heightfield (an int >= 1); by default 1 up to
    MESH_VERTICES (2048) cells a side and enough to keep that many vertices on larger grids (2 at 4096²),
    whose full-resolution meshes cost a GPU more to draw than the water costs to step.
    Once made, `style` can be set (a RenderStyle); the other attributes are read-only, and a name the
    renderer does not have is refused, as on the grids (`renderer.stlye = ...` would draw nothing new).
    """

    _kind = "Renderer"
    _deposits = None
    _deposit_targets = None

    @property
    def style(self) -> RenderStyle:
        """How the world looks; settable (a RenderStyle), read at every draw."""
        return self._style

    @style.setter
    def style(self, value):
        if not isinstance(value, RenderStyle):
            raise TypeError(f"style: expected a RenderStyle, got {type(value).__name__}")
        self._style = value

    def __init__(self, ctx, grid, *, style: RenderStyle | None = None, height_range=None,
                 texture_units=(13, 14, 15, 12), mesh_step=None):
        self._released = True
        # a grid of the fragment backend (below GL 4.3) has flow textures; the compute grids flow buffers
        fragment = isinstance(grid, FragmentWaterGrid)
        if not fragment and getattr(type(grid), "flow_buffers", None) is None:
            raise TypeError(f"grid: expected a hydro WaterGrid or HexWaterGrid, got {type(grid).__name__}")
        if not fragment:
            _gl.require_compute(ctx)
        elif not isinstance(ctx, moderngl.Context):
            raise TypeError(f"ctx: expected a moderngl.Context, got {type(ctx).__name__}")
        if getattr(grid, "ctx", None) is not ctx:
            raise ValueError("grid: it belongs to another moderngl context than ctx")
        self.style = style if style is not None else RenderStyle()
        units = tuple(texture_units)
        if len(units) not in (3, 4) or len(set(units)) != len(units) or not all(isinstance(u, int) and 0 <= u < 32
                                                                             for u in units):
            raise ValueError(f"texture_units: expected three or four distinct ints in [0, 32), got {texture_units!r}")
        self.ctx, self.grid, self.texture_units = ctx, grid, units
        self.hexagonal = bool(getattr(grid, "_hexagonal", False))
        self.nx, self.ny = grid.nx, grid.ny
        if mesh_step is None:           # a vertex a pixel or so of a whole-world view
            mesh_step = max(1, -(-max(self.nx, self.ny) // MESH_VERTICES))
        elif isinstance(mesh_step, bool) or not isinstance(mesh_step, (int, np.integer)) or mesh_step < 1:
            raise ValueError(f"mesh_step: expected an int >= 1 (cells between two vertices) or None, got {mesh_step!r}")
        self.mesh_step = int(mesh_step)
        self.mesh = tuple(-(-(n - 1) // self.mesh_step) + 1 for n in (self.nx, self.ny))
        self.cell_size = float(grid.params.cell_size)
        self._fragment = fragment
        flows = self._flow_textures() if fragment else getattr(grid, "flow_buffers", None)
        if flows is None or len(flows) != (3 if self.hexagonal else 2):
            raise TypeError(f"grid: expected a hydro WaterGrid or HexWaterGrid, got {type(grid).__name__}")
        if fragment and len(units) < 1 + len(flows):
            raise ValueError(f"texture_units: a hex grid of the fragment backend needs four (its velocity pass "
                             f"reads the water and three flow textures), got {texture_units!r}")

        terrain = grid.terrain
        try:
            low, high = ((float(terrain.min()), float(terrain.max())) if height_range is None
                         else (float(height_range[0]), float(height_range[1])))
            if height_range is not None and len(height_range) != 2:
                raise ValueError
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"height_range: expected (low, high) numbers, got {height_range!r}") from None
        if not (math.isfinite(low) and math.isfinite(high) and high >= low):
            raise ValueError(f"height_range: expected finite (low, high) with high >= low, got {height_range!r}")
        self.height_range = (low, max(high, low + 1e-6))
        self.base = float(terrain.min()) - self.style.skirt_depth * self.cell_size

        defines = {"HEX": self.hexagonal}
        self._terrain_prog = _gl.program(ctx, "render/terrain.vert", defines, fragment="render/terrain.frag")
        self._water_prog = _gl.program(ctx, "render/water.vert", defines, fragment="render/water.frag")
        self._velocity_prog = (_velocity_program(ctx, self.hexagonal) if fragment
                               else _gl.program(ctx, "render/velocity.comp", defines))
        self._deposits = None               # (reference, deposits) textures while deposits are tracked
        # and on the fragment backend their passes' targets: pass name -> (framebuffer, vertex array)
        self._deposit_targets = None

        self.velocity_texture = ctx.texture((self.nx, self.ny), 2, dtype="f4")
        self.velocity_texture.repeat_x = self.velocity_texture.repeat_y = False
        self.velocity_texture.write(np.zeros((self.ny, self.nx, 2), np.float32).tobytes())
        # the fragment backend's velocity pass renders into the velocity texture: its framebuffer and the
        # pass's vertex array (no vertices: fragment/pass.vert makes its triangle from gl_VertexID)
        self._velocity_target = ((ctx.framebuffer(color_attachments=[self.velocity_texture]),
                                  ctx.vertex_array(self._velocity_prog, [])) if fragment else ())
        self._indices = ctx.buffer(self._mesh_indices(self.mesh[0] + 2, self.mesh[1] + 2).tobytes())
        self._vaos = {name: ctx.vertex_array(prog, [], index_buffer=self._indices, index_element_size=4)
                      for name, prog in (("terrain", self._terrain_prog), ("water", self._water_prog))}
        self._released = False
        self._seal()

    @staticmethod
    def _mesh_indices(w: int, h: int) -> np.ndarray:
        """Two triangles per quad of a w x h vertex lattice, split along (i+1, j)-(i, j+1): the
        neighbour diagonal of the triangular lattice, and as good as any on the square one."""
        i, j = np.meshgrid(np.arange(w - 1, dtype=np.uint32), np.arange(h - 1, dtype=np.uint32))
        a = (j * w + i).ravel()
        b, c, d = a + 1, a + w, a + w + 1
        return np.stack([a, b, c, b, d, c], axis=1).ravel()

    # ------------------------------------------------------------------------------ fresh deposits

    @property
    def tracking_deposits(self) -> bool:
        """Whether fresh sediment is drawn (track_deposits() called, forget_deposits() not since)."""
        return self._deposits is not None

    @property
    def deposits_texture(self):
        """The fresh sediment drawn, an rg32f (nx, ny) texture (texel (x, y) is cell [y, x]): r the ground
        raised above the reference plus the sediment the water carries, g that sediment over the water's
        depth (render/deposits.glsl), as the last draw or update_deposits() left it; None where deposits
        are not tracked."""
        self._alive()
        return None if self._deposits is None else self._deposits[1]

    @property
    def deposit_reference(self) -> np.ndarray | None:
        """(ny, nx) float32: the heights fresh deposits are measured from (read back), or None where
        deposits are not tracked. A renderer made for a new grid on the same heights takes it on
        (`track_deposits(reference)`), so the silt keeps its colour."""
        self._alive()
        if self._deposits is None:
            return None
        return np.frombuffer(self._deposits[0].read(), np.float32).reshape(self.ny, self.nx).copy()

    def track_deposits(self, reference=None, *, region=None) -> None:
        """Draw fresh sediment from now on: ground above `reference` ((ny, nx) heights; default: the
        grid's terrain as it is now, copied on the GPU) as silt, fully at `style.silt_depth` cells of
        it, and the ground under water that carries sediment too (`grid.sediment_texture`, made on
        first use), with the water itself drawn muddy by how much it carries. Meant for a grid with
        erosion on (hydro.Erosion); without it nothing is deposited and nothing changes colour.

        region: (x0, y0, x1, y1) cells, ends excluded, clipped to the grid: while deposits are
        tracked, take the terrain as it is now as the reference there only (after a game's own edit
        of the ground, which is no deposit; an empty rectangle does nothing).
        Needs a fourth texture unit (`texture_units`)."""
        self._alive()
        if len(self.texture_units) < 4:
            raise ValueError("track_deposits: the renderer was made with three texture_units; deposits need a "
                             "fourth (texture_units=(a, b, c, d))")
        if region is not None:
            if reference is not None:
                raise ValueError("track_deposits: give a reference or a region, not both")
            if self._deposits is None:
                raise ValueError("region: no deposits are tracked (call track_deposits() first)")
            try:
                x0, y0, x1, y1 = (int(v) for v in region)
            except (TypeError, ValueError):
                raise ValueError(f"region: expected (x0, y0, x1, y1) cells, got {region!r}") from None
            x0, x1 = max(x0, 0), min(x1, self.nx)
            y0, y1 = max(y0, 0), min(y1, self.ny)
            if x1 > x0 and y1 > y0:
                self._take_reference((x0, y0), (x1 - x0, y1 - y0))
            return
        if reference is not None:
            reference = np.asarray(reference, dtype=np.float64)
            if reference.shape != (self.ny, self.nx) or not np.all(np.isfinite(reference)):
                raise ValueError(f"reference: expected finite heights of shape {(self.ny, self.nx)} (ny, nx), got "
                                 f"shape {reference.shape}")
        if self._deposits is None:
            made = []
            try:
                for components in (1, 2):
                    tex = self.ctx.texture((self.nx, self.ny), components, dtype="f4")
                    made.append(tex)
                    tex.repeat_x = tex.repeat_y = False
                    tex.write(np.zeros((self.ny, self.nx, components), np.float32).tobytes())
                targets = {}
                if self._fragment:          # each pass renders into the texture it writes
                    for name, tex in zip(("deposit_reference", "deposits"), made[:2]):
                        fbo = self.ctx.framebuffer(color_attachments=[tex])
                        made.append(fbo)
                        vao = self.ctx.vertex_array(_deposit_program(self.ctx, name), [])
                        made.append(vao)
                        targets[name] = (fbo, vao)
                _ = self.grid.sediment_texture      # made now, not in the middle of a draw
            except BaseException:
                for obj in made:
                    obj.release()
                raise
            self._deposits, self._deposit_targets = tuple(made[:2]), targets
        if reference is None:
            self._take_reference((0, 0), (self.nx, self.ny))
        else:
            self._deposits[0].write(reference.astype(np.float32).tobytes())

    def forget_deposits(self) -> None:
        """Stop drawing fresh sediment, and free what tracking it holds."""
        self._alive()
        if self._deposits is not None:
            for obj in (*self._deposits, *self._deposit_target_objects()):
                obj.release()
            self._deposits = self._deposit_targets = None

    def _deposit_target_objects(self) -> tuple:
        return tuple(obj for target in (self._deposit_targets or {}).values() for obj in target)

    def _take_reference(self, origin, extent) -> None:
        """The terrain in the rectangle at `origin` (x0, y0) of `extent` (w, h) cells becomes the
        reference (at B_DEPOSIT_REFERENCE; on the fragment backend a pass in that rectangle's viewport)."""
        if self._fragment:
            target = self._deposit_targets["deposit_reference"]
            target[0].viewport = (*origin, *extent)
            with self._game_state_kept():
                self._render_pass(_deposit_program(self.ctx, "deposit_reference"), target,
                                  {"u_terrain": self.grid.terrain_texture})
            return
        b = _gl.BINDINGS
        prog = _gl.program(self.ctx, "render/deposit_reference.comp")
        self.grid.terrain_texture.bind_to_image(b["B_TERRAIN"], read=True, write=False)
        self._deposits[0].bind_to_image(b["B_DEPOSIT_REFERENCE"], read=False, write=True)
        _gl.set_uniforms(prog, u_origin=tuple(origin), u_extent=tuple(extent))
        _gl.dispatch(self.ctx, prog, *extent)

    def update_deposits(self) -> None:
        """Recompute the fresh sediment drawn (one compute pass, or on the fragment backend one
        render-to-texture pass), where deposits are tracked."""
        self._alive()
        if self._deposits is None:
            return
        if self._fragment:
            with self._game_state_kept():
                self._render_deposits()
            return
        grid, b = self.grid, _gl.BINDINGS
        prog = _gl.program(self.ctx, "render/deposits.comp")
        grid.terrain_texture.bind_to_image(b["B_TERRAIN"], read=True, write=False)
        grid.water_texture.bind_to_image(b["B_WATER"], read=True, write=False)
        grid.sediment_texture.bind_to_image(b["B_SEDIMENT"], read=True, write=False)
        self._deposits[0].bind_to_image(b["B_DEPOSIT_REFERENCE"], read=True, write=False)
        self._deposits[1].bind_to_image(b["B_OUT_IMAGE"], read=False, write=True)
        _gl.set_uniforms(prog, u_size=(self.nx, self.ny), u_min_depth=self.style.film_depth * self.cell_size)
        _gl.dispatch(self.ctx, prog, self.nx, self.ny)

    def _render_deposits(self) -> None:
        """update_deposits on the fragment backend: render/deposits.frag over the deposits texture."""
        grid, target = self.grid, self._deposit_targets["deposits"]
        inputs = {"u_terrain": grid.terrain_texture, "u_water": grid.water_texture,
                  "u_sediment": grid.sediment_texture, "u_reference": self._deposits[0]}
        self._render_pass(_deposit_program(self.ctx, "deposits"), target, inputs,
                          u_min_depth=self.style.film_depth * self.cell_size)

    # ------------------------------------------------------------------------------------- drawing

    def _flow_textures(self) -> tuple:
        """A fragment grid's flow textures now (flow_x, flow_y, hex flow_z; r32f, laid out as the compute
        grids' flow buffers, texel (x, y) of face [y, x]): they ping-pong as it steps, so fetched each time."""
        return self.grid.flow_textures

    def update_velocity(self) -> None:
        """Recompute `velocity_texture` from the grid's current flows and depths (one compute pass, or
        on the fragment backend one render-to-texture pass)."""
        self._alive()
        if self._fragment:
            with self._game_state_kept():
                self._render_velocity()
            return
        grid, b = self.grid, _gl.BINDINGS
        grid.water_texture.bind_to_image(b["B_WATER"], read=True, write=False)
        self.velocity_texture.bind_to_image(b["B_OUT_IMAGE"], read=False, write=True)
        for name, buf in zip(("B_FLOW_X", "B_FLOW_Y", "B_FLOW_Z"), grid.flow_buffers):
            buf.bind_to_storage_buffer(b[name])
        geo = grid.geometry
        _gl.set_uniforms(self._velocity_prog, u_size=(self.nx, self.ny), u_face_width=float(geo.face_width),
                         u_min_depth=self.style.dry_depth * self.cell_size)
        _gl.dispatch(self.ctx, self._velocity_prog, self.nx, self.ny)

    def _render_velocity(self) -> None:
        """update_velocity on the fragment backend: render/velocity.frag over the velocity texture."""
        grid = self.grid
        inputs = dict(zip(("u_water", "u_flow_x", "u_flow_y", "u_flow_z"), (grid.water_texture, *self._flow_textures())))
        self._render_pass(self._velocity_prog, self._velocity_target, inputs,
                          u_face_width=float(grid.geometry.face_width),
                          u_min_depth=self.style.dry_depth * self.cell_size)

    def _render_pass(self, prog, target, textures: dict, **uniforms) -> None:
        """One render-to-texture pass of the fragment backend: `prog` (fragment/pass.vert's triangle) into
        `target` ((framebuffer, vertex array)) in the framebuffer's viewport, `textures` (sampler name ->
        texture) bound to the renderer's texture units, with nothing enabled (no depth test, blending,
        culling or scissor). Leaves that framebuffer bound and the enable flags off: the caller puts the
        game's back (_game_state_kept, or draw())."""
        fbo, vao = target
        units = {}
        for (name, tex), unit in zip(textures.items(), self.texture_units):
            tex.use(unit)
            units[name] = unit
        _gl.set_uniforms(prog, u_size=(self.nx, self.ny), **units, **uniforms)
        fbo.use()                               # its viewport, scissor test off
        self.ctx.enable_only(moderngl.NOTHING)
        vao.render(moderngl.TRIANGLES, vertices=3)

    @contextlib.contextmanager
    def _game_state_kept(self):
        """Around fragment passes run outside draw(): the framebuffer GL had bound, its viewport and
        scissor, and the drawing state (_drawing_state) are put back after them."""
        state = _drawing_state(self.ctx)
        bound = _bound_framebuffer(self.ctx, state)
        try:
            yield
        finally:
            bound.use()
            if state is not None:
                state["restore"]()

    def draw(self, view_projection, framebuffer=None, *, eye=None, time=None) -> None:
        """Draw terrain, then water, with depth testing, into `framebuffer` (default: the one GL has bound
        now, in its viewport; see the module docstring for the GL state it leaves).

        view_projection: see the module docstring. eye: camera position (3 numbers); by default it is
        recovered from view_projection. time: seconds driving the flow streaks; default grid.sim_time,
        so a paused simulation draws a still picture and a replay draws the same frames.
        """
        self._alive()
        matrix = _gl_matrix(view_projection)
        eye4 = _eye_from(matrix) if eye is None else np.array([*_vector3("eye", eye), 1.0])
        time = float(self.grid.sim_time if time is None else check.real("time", time))
        if framebuffer is not None and not isinstance(framebuffer, moderngl.Framebuffer):
            raise TypeError(f"framebuffer: expected a moderngl.Framebuffer, got {type(framebuffer).__name__}")
        if framebuffer is not None and framebuffer.ctx is not self.ctx:
            raise ValueError("framebuffer: it belongs to another moderngl context than the renderer's "
                             "(GL names are per context: it would draw into that context's namesake)")
        state = _drawing_state(self.ctx)
        bound = _bound_framebuffer(self.ctx, state)
        if framebuffer is None and (bound.glo == 0 and self.ctx.screen is None and self.ctx.fbo is None):
            raise ValueError("framebuffer: none given and none bound (a standalone context has no screen)")
        target = framebuffer if framebuffer is not None else bound
        if self._fragment:                  # bound.use() below binds the game's framebuffer back
            self._render_velocity()
            if self._deposits is not None:
                self._render_deposits()
        else:
            self.update_velocity()
            self.update_deposits()

        s, cs = self.style, self.cell_size
        sun = np.asarray(s.sun_direction, float)
        shared = dict(u_size=(self.nx, self.ny), u_mesh=self.mesh, u_mesh_step=self.mesh_step, u_cell_size=cs,
                      u_view_projection=matrix.tobytes(),
                      u_terrain=self.texture_units[0], u_water=self.texture_units[1],
                      u_velocity=self.texture_units[2], u_sun_direction=tuple(sun / np.linalg.norm(sun)),
                      u_sun_color=tuple(s.sun_color), u_sky_color=tuple(s.sky_color),
                      u_ground_color=tuple(s.ground_color), u_eye=tuple(eye4), u_fog_density=s.fog_density / cs,
                      u_track_deposits=self._deposits is not None, u_silt_color=tuple(s.silt_color),
                      u_silt_depth=s.silt_depth * cs, u_mud_concentration=s.mud_concentration,
                      u_deposits=self.texture_units[3] if self._deposits is not None else self.texture_units[0])
        for prog in (self._terrain_prog, self._water_prog):
            _set(prog, **shared)
        _set(self._terrain_prog, u_base=self.base, u_height_range=self.height_range, u_dry_depth=s.dry_depth * cs,
             u_wet_depth=s.wet_depth * cs)
        _set(self._water_prog, u_dry_depth=s.dry_depth * cs, u_time=time, u_depth_scale=s.depth_scale * cs,
             u_foam_depth=s.foam_depth * cs, u_film_depth=s.film_depth * cs, u_streak_speed=s.streak_speed * cs)

        # Bound by hand: moderngl 5.13's scope(textures=...) raises GL_INVALID_ENUM.
        textures = [self.grid.terrain_texture, self.grid.water_texture, self.velocity_texture]
        if self._deposits is not None:
            textures.append(self._deposits[1])
        for tex, unit in zip(textures, self.texture_units):
            tex.use(unit)
        bound.use()                     # no change to GL; the scope below comes back to it
        scope = self.ctx.scope(target, enable_only=moderngl.DEPTH_TEST)
        try:
            with scope:
                self._vaos["terrain"].render(moderngl.TRIANGLES)
                self.ctx.enable(moderngl.DEPTH_TEST | moderngl.BLEND)
                self.ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
                self.ctx.blend_equation = moderngl.FUNC_ADD
                self._vaos["water"].render(moderngl.TRIANGLES)
        finally:
            scope.release()             # moderngl keeps an unreleased scope's memory: ~240 B a frame
        if state is not None:           # the flags, blending and texture unit GL had, not moderngl's
            state["restore"]()

    # ------------------------------------------------------------------------------------ lifetime

    def _alive(self):
        super()._alive()
        if getattr(self.grid, "_released", False):
            raise RuntimeError("Renderer: its grid was released")
        self.grid._check_context()

    def _gpu_objects(self):
        """The renderer's own resources; the grid is not touched."""
        return (*self._vaos.values(), self._indices, *self._velocity_target, self.velocity_texture,
                *(self._deposits or ()), *self._deposit_target_objects())

    def __repr__(self):
        kind = "hex" if self.hexagonal else "square"
        return f"Renderer({kind} {self.nx}x{self.ny}{', released' if self._released else ''})"
