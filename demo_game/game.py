"""The demo's game state, free of any window: grid, renderer, camera, tools, the fixed-step clock, and
what a game asks of the water between frames: a log drifting with the water (`sample_async`), a water
wheel turned by what its gauge reads (`add_gauge`), a floodgate on the spillway (`set_terrain`). Rain,
evaporation and springs are the grid's water cycle (`grid.rain`, `grid.evaporation`,
`grid.add_source`): set once, they run on the GPU with no per-step calls. Erosion (`game.erosion`) is
the grid's too (`grid.erosion`): the water carves its bed and lays the sediment down where it slows,
and the renderer draws what it laid down as silt (`Renderer.track_deposits`).

On an OpenGL 3.3 to 4.2 context (macOS: 4.1) the grid runs hydro's fragment backend (`grid.backend == "fragment"`):
both water models, the water cycle, samples and gauges (the wheel turns there too), and erosion with
its silt.

The pyglet window (window.py) and the headless capture (headless.py) both drive a `Game`:
    game = Game(ctx, world.build(128))
    game.use_tool("dig", x, y)        # tools act at grid coordinates (see Game.pick for the mouse)
    game.advance(real_seconds)        # runs whole fixed steps from an accumulator
    game.draw(framebuffer, aspect)

Time: the simulation advances in fixed steps of STEP real seconds (each simulates STEP * time_scale
seconds), taken from an accumulator fed with real frame time and capped at MAX_STEPS_PER_FRAME per
frame, so the water moves at the same speed at any frame rate and a slow machine slows down instead of
spiralling (Fiedler, "Fix Your Timestep!", 2004).
"""
from __future__ import annotations

import math
import time

import numpy as np

import hydro
from hydro import render

from . import world as worlds
from .props import Props, box

STEP = 1.0 / 60.0               # real seconds per fixed step
MAX_STEPS_PER_FRAME = 4         # the rest of a long frame is dropped (the game slows down)
TIME_SCALE = 2.0                # simulated seconds per real second

TOOLS = {                       # name -> (key, what it does)
    "dig": ("1", "lower the ground"),
    "raise": ("2", "raise the ground"),
    "water": ("3", "pour water"),
    "spring": ("4", "place a spring (lasting source)"),
    "drain": ("5", "remove water"),
}
DIG_DEPTH = 0.25                # world units per tool use (at the brush centre), times n/128
POUR_VOLUME = 12.0              # volume per tool use, times (n/128)^2
SPRING_RATE = 3.0               # volume/s per spring, times (n/128)^2
SPRING_RADIUS = 1.5             # cells: the brush a spring wells up under (saves keep x, y and rate only)
DRAIN_RATE = 0.6                # depth removed per second at the brush centre, times n/128
# Rain: depth per simulated second on every cell, at any map size. A few seconds wet the ground (the
# renderer draws a film of a few mm as wet) and leave puddles in hollows; slopes run off: no quick flood.
RAIN_RATE = 1.5e-3
EVAPORATION = 4e-4              # depth/s where water lies: a shower's 5 cm puddles dry in two simulated minutes
LOG_SIZE = (4.0, 0.9, 0.6)      # the floating log's length, width and height, in cells
AFLOAT = 0.005                  # world units, times n/128: shallower water leaves the log aground
WHEEL_TURN = 0.25               # the wheel's radians per cubic metre through it, times (128/n)^2
# Erosion at the demo's scale: the river cuts its bed a metre deep and builds a delta into the lake
# within a simulated minute. Banks steeper than the talus angle slump, so carved ones do not stand as
# cliffs, while the world as built has only a few faces that steep, so nothing slumps unprovoked.
EROSION = hydro.Erosion(capacity=0.1, dissolve=0.5, deposit=0.5, talus=50.0, slump=0.5)


class Camera:
    """Orbit camera around a target point: yaw about world z, pitch above the horizon, distance."""

    def __init__(self, target, distance, yaw=-110.0, pitch=38.0, fovy=40.0):
        self.target = np.asarray(target, float)
        self.distance, self.yaw, self.pitch, self.fovy = float(distance), float(yaw), float(pitch), float(fovy)
        self.min_distance, self.max_distance = 0.1 * distance, 4.0 * distance

    @property
    def eye(self) -> np.ndarray:
        return render.orbit_eye(self.target, self.distance, self.yaw, self.pitch)

    def orbit(self, dyaw, dpitch):
        self.yaw = (self.yaw + dyaw) % 360.0
        self.pitch = min(max(self.pitch + dpitch, 5.0), 89.0)

    def zoom(self, factor):
        self.distance = min(max(self.distance * factor, self.min_distance), self.max_distance)

    def pan(self, dx, dy):
        """Move the target by (dx, dy) fractions of the view height, in the ground plane."""
        yaw = math.radians(self.yaw)
        right = np.array([-math.sin(yaw), math.cos(yaw), 0.0])
        forward = -np.array([math.cos(yaw), math.sin(yaw), 0.0])
        scale = self.distance * math.tan(math.radians(self.fovy) / 2.0) * 2.0
        self.target = self.target + scale * (dx * right + dy * forward)

    def view_projection(self, aspect) -> np.ndarray:
        near = max(self.distance * 0.01, 0.05)
        return render.perspective(self.fovy, aspect, near, self.distance * 10.0) @ render.look_at(self.eye, self.target)


# The water models the M key switches between: the classic pipes, and water that carries momentum with
# Manning's bed friction (dam breaks at the right speed, waterfalls that shoot on)
MODELS = {"classic": {}, "inertia": {"inertia": True, "manning": 0.03, "friction": 0.0}}


class Game:
    """One world on one grid, with the tools and the fixed-step clock. No window, no pyglet."""

    def __init__(self, ctx, world: worlds.World, *, hexagonal=False, time_scale=TIME_SCALE, model="classic",
                 erosion=False):
        if model not in MODELS:
            raise ValueError(f"model: expected one of {', '.join(map(repr, MODELS))}, got {model!r}")
        self.ctx, self.world, self.time_scale = ctx, world, float(time_scale)
        self.model = model
        self.grid = None
        self.renderer = None
        self._hexagonal = False           # the lattice of the grid made last
        self._springs: list[tuple[float, float, float]] = []     # (x, y, volume/s): the record saves keep
        self._sources = []                # the grid's source for each spring, made again with the grid
        self._rain = False
        self._erosion = False
        self.paused = False
        self.tool = "dig"
        self.brush_radius = 2.5 * max(1.0, world.n / 128)
        self.accumulator = 0.0
        self.steps = 0                    # fixed steps taken
        self.sim_ms = 0.0                 # wall milliseconds of simulation in the last frame
        self.message = ""
        self._surface = None              # CPU copy for mouse picking, refreshed after edits
        self.gate_closed = False          # the floodgate across the spillway (world.gate)
        self.wheel = None                 # the water wheel's gauge (world.wheel)
        self.wheel_angle = 0.0
        self.log = np.array(world.landmarks["river"], float)    # grid coordinates of the floating log
        self.log_heading = 0.0            # radians from world +x
        self.log_speed = 0.0              # world units/s
        self._afloat = (0.0, 0.0)         # the water's surface at the log and at the wheel, last asked
        self._asked = None                # a hydro Sample of them, asked the step before
        self._make_grid(world.terrain, world.water, hexagonal, world.boundaries, erosion=bool(erosion))
        self.props = Props(ctx)
        n = world.n
        self.camera = Camera(self._world_center(), 1.25 * n * self.cell_size)

    # ------------------------------------------------------------------------------------- grid

    @property
    def hexagonal(self) -> bool:
        """Whether the grid is on the hex lattice (as the game made it, on either backend)."""
        return self._hexagonal

    @property
    def cell_size(self) -> float:
        return float(self.grid.params.cell_size)

    @property
    def scale(self) -> float:
        return self.world.n / 128.0

    def rebuild(self, terrain, water, *, hexagonal: bool, boundaries=None, springs=None, sediment=None,
                deposits=None, erosion=None) -> None:
        """Replace the grid with one on `terrain` holding `water` ((ny, nx) arrays), on the hex lattice
        or the square one, with `boundaries` ((side, kind, value, span) tuples; default: the world's,
        which they then become) and `springs` ((x, y, volume/s) each; default: the game's, which they
        then become), the water carrying `sediment` ((ny, nx) settled heights; default none), and
        `erosion` on or off (default: as the game has it, which it then becomes). The rain, evaporation,
        springs and erosion are set on the new grid; the renderer draws as silt the ground above
        `deposits` ((ny, nx) heights; default: where erosion is on, the terrain given); the camera looks
        at its centre. A grid that rejects the arrays, boundaries or springs raises and leaves
        the running one as it was."""
        boundaries = self.world.boundaries if boundaries is None else list(boundaries)
        self._make_grid(terrain, water, hexagonal, boundaries, self._springs if springs is None else springs,
                        sediment, deposits, self._erosion if erosion is None else bool(erosion))
        self.world.boundaries = boundaries
        self.camera.target = self._world_center()

    def _make_grid(self, terrain, water, hexagonal, boundaries, springs=(), sediment=None, deposits=None,
                   erosion=False):
        """The one place a grid is made (the first, and every rebuild): with the game's water cycle and
        erosion on it, since a new grid starts with neither, and its renderer."""
        has_sediment = sediment is not None and np.any(np.asarray(sediment) != 0)
        grid = (hydro.HexWaterGrid if hexagonal else hydro.WaterGrid)(self.ctx, terrain, water=water,
                                                                     **MODELS[self.model])
        renderer = None
        try:
            for side, kind, value, span in boundaries:
                grid.set_boundary(side, kind, value, span)
            springs = [(float(x), float(y), float(rate)) for x, y, rate in springs]
            sources = [grid.add_source(x, y, SPRING_RADIUS, rate) for x, y, rate in springs]
            grid.rain = RAIN_RATE if self._rain else 0.0
            grid.evaporation = EVAPORATION
            grid.erosion = EROSION if erosion else None
            if has_sediment:                            # none: no erosion state made
                grid.sediment = sediment
            renderer = render.Renderer(self.ctx, grid, height_range=(-3.0 * self.scale, 15.0 * self.scale))
            if deposits is not None:
                renderer.track_deposits(deposits)
            elif erosion:
                renderer.track_deposits()
        except Exception:
            if renderer is not None:
                renderer.release()
            grid.release()                 # a rejected world leaves the running one as it was
            raise
        if self.renderer is not None:
            self.renderer.release()
        if self.grid is not None:
            self.grid.release()
        self.grid, self.renderer = grid, renderer
        self._hexagonal = bool(hexagonal)
        self._springs, self._sources = springs, sources
        self._erosion = erosion
        self._surface = None
        self._asked = None
        self.wheel = grid.add_gauge(*self.world.wheel) if self.world.wheel is not None else None     # what turns it

    def set_model(self, model: str) -> None:
        """The water model: "classic" (the pipes) or "inertia" (momentum and Manning's bed friction), on
        a grid made again with the water as it is."""
        if model not in MODELS:
            raise ValueError(f"model: expected one of {', '.join(map(repr, MODELS))}, got {model!r}")
        if model == self.model:
            return
        before, self.model = self.model, model
        try:
            self.rebuild(self.grid.terrain, self.grid.water, hexagonal=self.hexagonal, **self._sediment_record())
        except Exception:
            self.model = before
            raise
        self.message = f"water model: {model}"

    def set_hexagonal(self, hexagonal: bool) -> None:
        """Rebuild the world on the other lattice (same heights, per lattice point) with its water."""
        if hexagonal == self.hexagonal:
            return
        self.rebuild(self.grid.terrain, self.grid.water, hexagonal=hexagonal, **self._sediment_record())
        self.message = "hex grid" if hexagonal else "square grid"

    def _sediment_record(self) -> dict:
        """The sediment the water carries and the heights the renderer measures deposits from, for a
        new grid on the same heights (rebuild's keywords): the material and the silt go with the world."""
        return {"sediment": self.grid.sediment, "deposits": self.renderer.deposit_reference}

    def _world_center(self):
        ny, nx = self.grid.shape
        c = self.grid_to_world(np.array([(nx - 1) / 2.0]), np.array([(ny - 1) / 2.0]))
        return np.array([c[0][0], c[1][0], 4.0 * self.scale])

    def grid_to_world(self, gx, gy):
        """World (x, y) of grid coordinates (cell centres / lattice vertices)."""
        s = self.cell_size
        if self.hexagonal:
            return (gx + 0.5 * gy) * s, gy * s * math.sqrt(3.0) / 2.0
        return (gx + 0.5) * s, (gy + 0.5) * s

    def world_to_grid(self, wx, wy):
        s = self.cell_size
        if self.hexagonal:
            gy = wy / (s * math.sqrt(3.0) / 2.0)
            return wx / s - 0.5 * gy, gy
        return wx / s - 0.5, wy / s - 0.5

    # ------------------------------------------------------------------------------------ tools

    def use_tool(self, tool, x, y, seconds=STEP) -> None:
        """Apply `tool` once at grid coordinates (x, y); `seconds` is how long it was held (drain)."""
        if tool not in TOOLS:
            raise ValueError(f"tool: expected one of {sorted(TOOLS)}, got {tool!r}")
        ny, nx = self.grid.shape
        if not (0.0 <= x <= nx - 1 and 0.0 <= y <= ny - 1):
            return
        r, s = self.brush_radius, self.scale
        if tool == "dig":
            self.grid.dig(x, y, r, DIG_DEPTH * s * self.cell_size)
        elif tool == "raise":
            self.grid.dig(x, y, r, -DIG_DEPTH * s * self.cell_size)
        elif tool == "water":
            self.grid.add_water(x, y, r, POUR_VOLUME * s * s)
        elif tool == "spring":
            self.add_spring(x, y, SPRING_RATE * s * s)
            self.message = f"spring {len(self._springs)} placed ({SPRING_RATE * s * s:g} m^3/s)"
        elif tool == "drain":
            self._drain(x, y, r, DRAIN_RATE * s * seconds)
        if tool in ("dig", "raise"):
            self._not_deposits(x, y, r)
        self._surface = None

    def _not_deposits(self, x, y, radius) -> None:
        """Ground the player dug or raised is no deposit: the renderer's reference for silt takes the
        ground as it is now under the brush (a box around it; a hex brush reaches further in x)."""
        if not self.renderer.tracking_deposits:
            return
        rx, ry = (1.6 * radius, 1.2 * radius) if self.hexagonal else (radius, radius)
        self.renderer.track_deposits(region=(math.floor(x - rx) - 1, math.floor(y - ry) - 1,
                                             math.ceil(x + rx) + 2, math.ceil(y + ry) + 2))

    def _drain(self, x, y, radius, depth):
        """Remove up to `depth` of water at the brush centre: the grid's GPU drain, which takes what is
        there and books it in the ledger. The brush integral of (1 - r^2/R^2)^2 is pi R^2 / 3."""
        self.grid.remove_water(x, y, radius, depth * math.pi * (radius * self.cell_size) ** 2 / 3.0)

    # ---------------------------------------------------------------------------- water cycle

    @property
    def springs(self) -> tuple:
        """The springs placed, (x, y, volume/s) each, oldest first: the record a save keeps. Each is a
        lasting grid.add_source, made again on every new grid; assigning replaces them all."""
        return tuple(self._springs)

    @springs.setter
    def springs(self, springs) -> None:
        springs = [(float(x), float(y), float(rate)) for x, y, rate in springs]
        made = []
        try:                                # all or none: a rejected spring leaves the old ones
            for x, y, rate in springs:
                made.append(self.grid.add_source(x, y, SPRING_RADIUS, rate))
        except Exception:
            for source in made:
                source.remove()
            raise
        for source in self._sources:
            source.remove()
        self._springs, self._sources = springs, made

    def add_spring(self, x, y, rate) -> None:
        """A spring at grid point (x, y) adding `rate` volume/s from now on, on the GPU, until cleared."""
        x, y, rate = float(x), float(y), float(rate)
        self._sources.append(self.grid.add_source(x, y, SPRING_RADIUS, rate))
        self._springs.append((x, y, rate))

    def clear_springs(self) -> None:
        for source in self._sources:
            source.remove()
        self._springs, self._sources = [], []

    @property
    def rain(self) -> bool:
        """Whether it rains: RAIN_RATE over every cell of the grid (grid.rain), kept across rebuilds."""
        return self._rain

    @rain.setter
    def rain(self, on) -> None:
        self.grid.rain = RAIN_RATE if on else 0.0
        self._rain = bool(on)

    @property
    def erosion(self) -> bool:
        """Whether the water shapes the terrain (grid.erosion = EROSION), kept across rebuilds. Turned
        on, the renderer draws what the water lays down from then on as silt; turned off, the sediment
        the water carries stays suspended where it is (the material is kept) until it is on again."""
        return self._erosion

    @erosion.setter
    def erosion(self, on) -> None:
        self.grid.erosion = EROSION if on else None
        self._erosion = bool(on)
        if on and not self.renderer.tracking_deposits:
            self.renderer.track_deposits()

    def set_gate(self, closed: bool) -> None:
        """Close the floodgate across the spillway (its rectangle of ground raised above the lake, one
        set_terrain() call) or open it (the ground as the world was built); the water is kept."""
        if self.world.gate is None:
            return
        x0, y0, heights, top = self.world.gate
        self.grid.set_terrain(np.maximum(heights, top) if closed else heights, origin=(x0, y0))
        if self.renderer.tracking_deposits:         # the gate is no deposit
            self.renderer.track_deposits(region=(x0, y0, x0 + heights.shape[1], y0 + heights.shape[0]))
        self.gate_closed = bool(closed)
        self.message = "floodgate closed" if closed else "floodgate open"
        self._surface = None

    def launch_log(self) -> None:
        """Put the log back into the river where it enters the map."""
        self.log = np.array(self.world.landmarks["river"], float)
        self.log_speed = 0.0
        self._asked = None

    # ----------------------------------------------------------------------------------- clock

    def advance(self, real_seconds: float) -> int:
        """Feed real frame time to the accumulator and run the whole fixed steps it holds (at most
        MAX_STEPS_PER_FRAME; the rest is dropped). Returns the number of steps taken."""
        self.accumulator += max(0.0, float(real_seconds))
        n = 0
        start = time.perf_counter()
        while self.accumulator >= STEP and n < MAX_STEPS_PER_FRAME:
            self.accumulator -= STEP
            if not self.paused:
                self.fixed_step()
                n += 1
        if self.accumulator >= STEP:                 # too slow: drop what cannot be caught up
            self.accumulator %= STEP
        if n:
            self.sim_ms = (time.perf_counter() - start) * 1000.0
        return n

    def fixed_step(self) -> None:
        """One fixed step of the grid; rain, evaporation and the springs work within it, on the GPU."""
        dt = STEP * self.time_scale
        self.grid.step(dt)
        self.steps += 1
        self._surface = None
        self._drift(dt)

    def _drift(self, dt) -> None:
        """The log moves by the water's velocity at it, asked of the grid the step before (sample_async:
        back by now, so this never waits in a game loop), and the wheel turns by what its gauge read."""
        if self._asked is not None:
            (depth, surface, vx, vy), (_, wheel_surface, _, _) = self._asked.result().astype(float)
            self._afloat = (surface, wheel_surface)
            if depth > AFLOAT * self.scale:
                origin = np.array(self.world_to_grid(0.0, 0.0))
                velocity = np.array(self.world_to_grid(vx, vy)) - origin      # grid units a second
                ny, nx = self.grid.shape
                self.log = np.clip(self.log + dt * velocity, 0.0, (nx - 1, ny - 1))
                self.log_speed = math.hypot(vx, vy)
                if self.log_speed > 1e-3:
                    self.log_heading = math.atan2(vy, vx)
            else:
                self.log_speed = 0.0
        if self.wheel is not None:
            self.wheel_angle += WHEEL_TURN / self.scale ** 2 * self.wheel.discharge * dt
        points = [self.log] + ([np.mean(self.wheel.line, axis=0)] if self.wheel is not None else [self.log])
        self._asked = self.grid.sample_async(points)

    def single_step(self) -> None:
        self.fixed_step()

    # ---------------------------------------------------------------------------------- drawing

    def draw(self, framebuffer, aspect) -> None:
        view_projection = self.camera.view_projection(aspect)
        self.renderer.draw(view_projection, framebuffer)
        self.props.draw(view_projection, framebuffer, self.prop_boxes())

    def prop_boxes(self) -> list:
        """The log (lying along its heading on the surface) and the wheel's two crossed paddles (turning
        about an axle along the gauge's line), as (model matrix, colour) for Props.draw."""
        s = self.cell_size
        up = np.array([0.0, 0.0, 1.0])
        along = np.array([math.cos(self.log_heading), math.sin(self.log_heading), 0.0])
        wx, wy = self.grid_to_world(*self.log)
        log = box((wx, wy, self._afloat[0] + 0.1 * s * self.scale), np.column_stack([along, np.cross(up, along), up]),
                  np.array(LOG_SIZE) * s * max(self.scale, 1.0))
        boxes = [(log, (0.45, 0.3, 0.15))]
        if self.wheel is not None:
            (x0, y0), (x1, y1) = self.wheel.line
            a, b = np.array(self.grid_to_world(x0, y0)), np.array(self.grid_to_world(x1, y1))
            axle = np.array([*(b - a) / np.linalg.norm(b - a), 0.0])
            flow = np.cross(up, axle)
            centre = (*((a + b) / 2), self._afloat[1])
            radius = 0.25 * float(np.linalg.norm(b - a))
            for turn in (self.wheel_angle, self.wheel_angle + math.pi / 2):
                paddle = math.cos(turn) * flow + math.sin(turn) * up
                axes = np.column_stack([paddle, axle, np.cross(paddle, axle)])
                boxes.append((box(centre, axes, (2.0 * radius, 0.5 * radius, 0.15 * radius)), (0.6, 0.45, 0.25)))
        return boxes

    # ---------------------------------------------------------------------------------- picking

    def surface(self) -> np.ndarray:
        if self._surface is None:
            self._surface = self.grid.terrain + self.grid.water
        return self._surface

    def pick(self, ndc_x, ndc_y, aspect):
        """Grid coordinates (x, y) under normalised device coordinates, or None: march the camera ray
        over the terrain + water surface in half-cell steps, then bisect the crossing."""
        vp = self.camera.view_projection(aspect)
        inv = np.linalg.inv(vp)
        a = inv @ np.array([ndc_x, ndc_y, -1.0, 1.0])
        b = inv @ np.array([ndc_x, ndc_y, 1.0, 1.0])
        a, b = a[:3] / a[3], b[:3] / b[3]
        direction = (b - a) / np.linalg.norm(b - a)
        surface = self.surface()
        ny, nx = surface.shape

        def above(p):
            gx, gy = self.world_to_grid(p[0], p[1])
            if not (0.0 <= gx <= nx - 1 and 0.0 <= gy <= ny - 1):
                return None
            return p[2] - _bilinear(surface, gx, gy)

        step = 0.5 * self.cell_size
        length = np.linalg.norm(b - a)
        prev, t = None, 0.0
        while t < length:
            p = a + t * direction
            h = above(p)
            if h is not None and h <= 0.0 and prev is not None:
                lo, hi = t - step, t
                for _ in range(20):
                    mid = 0.5 * (lo + hi)
                    hm = above(a + mid * direction)
                    lo, hi = (mid, hi) if hm is not None and hm > 0.0 else (lo, mid)
                return self.world_to_grid(*(a + hi * direction)[:2])
            prev = h
            t += step
        return None

    def grid_to_ndc(self, x, y, aspect):
        """Normalised device coordinates of the surface point over grid (x, y) (for tests and scripts)."""
        surface = self.surface()
        wx, wy = self.grid_to_world(float(x), float(y))
        clip = self.camera.view_projection(aspect) @ np.array([wx, wy, _bilinear(surface, x, y), 1.0])
        return clip[0] / clip[3], clip[1] / clip[3]

    # ---------------------------------------------------------------------------------- status

    def hud_lines(self, fps: float) -> list[str]:
        keys = "  ".join(f"{key} {name}" for name, (key, _) in TOOLS.items())
        lattice = "hex" if self.hexagonal else "square"
        wheel = f"wheel {self.wheel.discharge:6.2f} m^3/s   " if self.wheel is not None else ""
        return [
            f"{fps:5.1f} fps   sim {self.sim_ms:5.2f} ms/frame   volume {self.grid.volume():10.1f}   "
            f"t = {self.grid.sim_time:6.1f} s   {lattice} {self.grid.nx}x{self.grid.ny}   "
            f"awake {100 * self.grid.awake:3.0f}%"
            + ("   PAUSED" if self.paused else "") + ("   RAIN" if self.rain else "")
            + ("   EROSION" if self.erosion else ""),
            f"tool: {self.tool} ({TOOLS[self.tool][1]}), radius {self.brush_radius:.1f}   [{keys}]   "
            f"springs: {len(self._springs)}",
            "left drag: tool   right drag: orbit   middle/shift+right drag: pan   wheel: zoom   [ ]: radius   "
            "R rain   E erosion   P pause   N step   H hex/square   C clear springs   F5 save   F9 load",
            f"{wheel}floodgate {'closed' if self.gate_closed else 'open'} (G)   "
            f"log {self.log_speed:4.2f} m/s (L: launch it again)   model: {self.model} (M)",
        ] + ([self.message] if self.message else [])

    def release(self):
        self.props.release()
        if self.renderer is not None:
            self.renderer.release()
        if self.grid is not None:
            self.grid.release()


def _bilinear(a: np.ndarray, x: float, y: float) -> float:
    ny, nx = a.shape
    x0, y0 = min(int(math.floor(x)), nx - 2), min(int(math.floor(y)), ny - 2)
    fx, fy = x - x0, y - y0
    return float((a[y0, x0] * (1 - fx) + a[y0, x0 + 1] * fx) * (1 - fy)
                 + (a[y0 + 1, x0] * (1 - fx) + a[y0 + 1, x0 + 1] * fx) * fy)
