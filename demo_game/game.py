"""The demo's game state, free of any window: grid, renderer, camera, tools and the fixed-step clock.

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
DRAIN_RATE = 0.6                # depth removed per second at the brush centre, times n/128
RAIN_RATE = 0.02                # depth per simulated second over the whole map, times n/128
RAIN_DROPS = 6                  # brushes per fixed step


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


class Game:
    """One world on one grid, with the tools and the fixed-step clock. No window, no pyglet."""

    def __init__(self, ctx, world: worlds.World, *, hexagonal=False, time_scale=TIME_SCALE):
        self.ctx, self.world, self.time_scale = ctx, world, float(time_scale)
        self.grid = None
        self.renderer = None
        self.springs: list[tuple[float, float, float]] = []      # (x, y, volume/s)
        self.rain = False
        self.paused = False
        self.tool = "dig"
        self.brush_radius = 2.5 * max(1.0, world.n / 128)
        self.accumulator = 0.0
        self.steps = 0                    # fixed steps taken
        self.sim_ms = 0.0                 # wall milliseconds of simulation in the last frame
        self.message = ""
        self._rain_rng = np.random.default_rng(world.seed + 1)
        self._surface = None              # CPU copy for mouse picking, refreshed after edits
        self._make_grid(world.terrain, world.water, hexagonal, world.boundaries)
        n = world.n
        self.camera = Camera(self._world_center(), 1.25 * n * self.cell_size)

    # ------------------------------------------------------------------------------------- grid

    @property
    def hexagonal(self) -> bool:
        return isinstance(self.grid, hydro.HexWaterGrid)

    @property
    def cell_size(self) -> float:
        return float(self.grid.params.cell_size)

    @property
    def scale(self) -> float:
        return self.world.n / 128.0

    def rebuild(self, terrain, water, *, hexagonal: bool, boundaries=None) -> None:
        """Replace the grid with one on `terrain` holding `water` ((ny, nx) arrays), on the hex lattice
        or the square one, with `boundaries` ((side, kind, value, span) tuples; default: the world's,
        which they then become). The springs and rain stay; the camera looks at the new grid's centre.
        A grid that rejects the arrays or boundaries raises and leaves the running one as it was."""
        boundaries = self.world.boundaries if boundaries is None else list(boundaries)
        self._make_grid(terrain, water, hexagonal, boundaries)
        self.world.boundaries = boundaries
        self.camera.target = self._world_center()

    def _make_grid(self, terrain, water, hexagonal, boundaries):
        grid = (hydro.HexWaterGrid if hexagonal else hydro.WaterGrid)(self.ctx, terrain, water=water)
        try:
            for side, kind, value, span in boundaries:
                grid.set_boundary(side, kind, value, span)
        except Exception:
            grid.release()                 # a rejected world leaves the running one as it was
            raise
        if self.renderer is not None:
            self.renderer.release()
        if self.grid is not None:
            self.grid.release()
        self.grid = grid
        self.renderer = render.Renderer(self.ctx, grid, height_range=(-3.0 * self.scale, 15.0 * self.scale))
        self._surface = None

    def set_hexagonal(self, hexagonal: bool) -> None:
        """Rebuild the world on the other lattice (same heights, per lattice point) with its water."""
        if hexagonal == self.hexagonal:
            return
        self.rebuild(self.grid.terrain, self.grid.water, hexagonal=hexagonal)
        self.message = "hex grid" if hexagonal else "square grid"

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
            self.springs.append((float(x), float(y), SPRING_RATE * s * s))
            self.message = f"spring {len(self.springs)} placed"
        elif tool == "drain":
            self._drain(x, y, r, DRAIN_RATE * s * seconds)
        self._surface = None

    def _drain(self, x, y, radius, depth):
        """Remove up to `depth` of water at the brush centre: the grid's GPU drain, which takes what is
        there and books it in the ledger. The brush integral of (1 - r^2/R^2)^2 is pi R^2 / 3."""
        self.grid.remove_water(x, y, radius, depth * math.pi * (radius * self.cell_size) ** 2 / 3.0)

    def clear_springs(self):
        self.springs.clear()

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
        """One fixed step: springs and rain add their exact volumes, then the grid steps."""
        dt = STEP * self.time_scale
        for x, y, rate in self.springs:
            self.grid.add_water(x, y, 1.5, rate * dt)
        if self.rain:
            ny, nx = self.grid.shape
            area = nx * ny * self.grid.geometry.cell_area
            volume = RAIN_RATE * self.scale * dt * area / RAIN_DROPS
            for gx, gy in self._rain_rng.uniform((0, 0), (nx - 1, ny - 1), (RAIN_DROPS, 2)):
                self.grid.add_water(gx, gy, 3.0, volume)
        self.grid.step(dt)
        self.steps += 1
        self._surface = None

    def single_step(self) -> None:
        self.fixed_step()

    # ---------------------------------------------------------------------------------- drawing

    def draw(self, framebuffer, aspect) -> None:
        self.renderer.draw(self.camera.view_projection(aspect), framebuffer)

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
        return [
            f"{fps:5.1f} fps   sim {self.sim_ms:5.2f} ms/frame   volume {self.grid.volume():10.1f}   "
            f"t = {self.grid.sim_time:6.1f} s   {lattice} {self.grid.nx}x{self.grid.ny}"
            + ("   PAUSED" if self.paused else "") + ("   RAIN" if self.rain else ""),
            f"tool: {self.tool} ({TOOLS[self.tool][1]}), radius {self.brush_radius:.1f}   [{keys}]   "
            f"springs: {len(self.springs)}",
            "left drag: tool   right drag: orbit   middle/shift+right drag: pan   wheel: zoom   [ ]: radius   "
            "R rain   P pause   N step   H hex/square   C clear springs   F5 save   F9 load",
        ] + ([self.message] if self.message else [])

    def release(self):
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
