"""Scripted scenarios: tool actions by frame number, so a run can be watched, captured or tested.

dam-break: the ridge that holds the lake gives way all at once along its narrowest crossing, and the
flood runs through the breach and spreads down into the valley. It runs the inertia model (water that
carries momentum, so the front moves at a dam break's speed); press M to watch the classic pipes instead.

dig-channel (the canonical scenario): after a short look at the calm lake, the player drags the dig
tool back and forth across the ridge between the lake and the dry valley until the channel is below
the lake's surface; the lake then drains through it into the valley and down to the sea. Where to dig
is found in the world itself (`find_crossing`), so the scenario plays on every seed's layout.
Deterministic: the same world and frames always give the same edits at the same grid points.

erode: erosion on (Game.erosion), springs high on the hills (`find_springs`) and the river running
into the lake, whose overflow the spillway carries to the sea; after two simulated minutes the springs
stop and the land drains. The streams cut gullies down the slopes, the river and the spillway deepen
their beds, and what they carry settles where they slow, as fans on the valley floor and deltas in the
lake and the sea, drawn as silt. Headless, it writes the world before and after side by side
(`PANELS`), after three minutes of game time (`FRAMES`).

A script may name `FRAMES`, the frames a headless run takes where --frames is not given, and `PANELS`,
frames whose picture (taken before that frame's edits) a headless run puts left of the last one.
"""
from __future__ import annotations

import numpy as np

from .game import SPRING_RATE
from .world import flood


def find_crossing(terrain, water, toward, margin):
    """The narrowest crossing of the ridge that holds the lake, along a row, heading to grid point
    `toward` (x, y) (the valley): the lake is the water not connected to the bottom row (the sea), the
    crossing runs from the lake's last cell in that row over ground higher than its surface + `margin`
    to the first cell lower than the surface - `margin`. Returns (start, stop, surface): grid points
    (x, y) and the lake's surface height. Raises ValueError where there is no lake or no such crossing."""
    terrain, water = np.asarray(terrain), np.asarray(water)
    ny, nx = terrain.shape
    wet = water > 0
    lake = wet & ~flood(wet, [(0, x) for x in range(nx)])
    if not lake.any():
        raise ValueError("find_crossing: no lake (all the water is connected to the sea along the bottom row)")
    surface = float((terrain + water)[lake].max())
    step = 1 if toward[0] > np.nonzero(lake)[1].mean() else -1
    best = None
    for y in np.nonzero(lake.any(axis=1))[0]:
        xs = np.nonzero(lake[y])[0]
        edge = xs.max() if step > 0 else xs.min()
        beyond = np.arange(edge + step, nx if step > 0 else -1, step)
        low = np.nonzero(terrain[y, beyond] < surface - margin)[0]
        if not len(low) or terrain[y, beyond[:low[0]]].max(initial=-np.inf) < surface + margin:
            continue
        key = (low[0], abs(y - toward[1]))           # the narrowest, then the nearest to `toward`
        if best is None or key < best[0]:
            best = (key, (float(edge), float(y)), (float(beyond[low[0]]), float(y)))
    if best is None:
        raise ValueError(f"find_crossing: no ridge between the lake and low ground toward {tuple(toward)}")
    return best[1], best[2], surface


class DigChannel:
    name = "dig-channel"
    MODEL = "classic"
    START = 30                  # frames of calm before digging
    PASS_FRAMES = 40            # frames per stroke across the ridge
    MAX_PASSES = 12             # a player gives up after this many strokes
    MARGIN = 0.5                # world units at n = 128: the cut's depth below the lake's surface

    def __init__(self, game):
        margin = self.MARGIN * game.scale
        start, stop, surface = find_crossing(game.grid.terrain, game.grid.water, game.world.landmarks["valley"],
                                             margin)
        self.start, self.stop = np.array(start), np.array(stop)
        self.target = surface - margin                # the cut is done when the ground along it is lower
        self.passes = 0                               # strokes finished
        self.done = False

    def stroke_point(self, frame):
        """Grid point under the cursor at `frame` while digging, or None before the first stroke."""
        k = frame - self.START
        if k < 0:
            return None
        stroke, f = divmod(k, self.PASS_FRAMES)
        t = f / (self.PASS_FRAMES - 1)
        if stroke % 2:
            t = 1.0 - t
        return self.start + t * (self.stop - self.start)

    def cut(self, terrain) -> bool:
        """Whether the ground along the stroke, between its ends, is below the target."""
        x0, x1 = sorted((int(self.start[0]), int(self.stop[0])))
        return bool(terrain[int(self.start[1]), x0 + 1:x1].max(initial=-np.inf) < self.target)

    def before_frame(self, game, frame) -> None:
        k = frame - self.START
        if self.done or k < 0:
            return
        if k and k % self.PASS_FRAMES == 0:           # a stroke ended: look at the channel
            self.passes += 1
            self.done = self.passes >= self.MAX_PASSES or self.cut(game.grid.terrain)
            if self.done:
                return
        point = self.stroke_point(frame)
        game.tool = "dig"
        game.use_tool("dig", float(point[0]), float(point[1]))


class DamBreak:
    name = "dam-break"
    MODEL = "inertia"
    START = 20                  # frames of calm before the dam goes
    WIDTH = 4.0                 # world units at n = 128: the breach's half-width
    DROP = 1.5                  # world units at n = 128: the ground beyond the breach below the lake

    def __init__(self, game):
        self.start, self.stop, self.surface = find_crossing(game.grid.terrain, game.grid.water,
                                                            game.world.landmarks["valley"], self.DROP * game.scale)
        self.done = False

    def before_frame(self, game, frame) -> None:
        if self.done or frame < self.START:
            return
        self.done = True                 # the breach, cut in one upload: the ridge within WIDTH of the
        terrain = game.grid.terrain      # crossing comes down to the ground beyond it, with smooth sides
        (x0, y0), (x1, y1) = self.start, self.stop
        floor = float(terrain[int(round(y1)), int(round(x1))])
        ny, nx = terrain.shape
        y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
        d = np.array([x1 - x0, y1 - y0], np.float64)
        t = np.clip(((x - x0) * d[0] + (y - y0) * d[1]) / max(float(d @ d), 1e-12), 0.0, 1.0)
        off = np.hypot(x - (x0 + t * d[0]), y - (y0 + t * d[1])) / (self.WIDTH * game.scale)
        keep = np.clip(off - 0.5, 0.0, 1.0) ** 2         # 0 in the breach's middle, 1 beyond its sides
        breached = np.minimum(terrain, floor + (terrain - floor) * keep).astype(np.float32)
        game.grid.set_terrain(breached)
        game.message = "the dam broke"


def find_springs(terrain, count, spacing):
    """Grid points (x, y) for `count` springs high on the hills: the highest cells between 0.35 and 0.85
    of the map's height (north of the sea, south of the river's edge), off the sides, each at least
    `spacing` cells from the others, highest first. Their water runs down the slopes from there."""
    terrain = np.asarray(terrain, np.float64)
    ny, nx = terrain.shape
    y, x = np.mgrid[0:ny, 0:nx]
    free = (y >= 0.35 * ny) & (y < 0.85 * ny) & (x >= 4) & (x < nx - 4)
    points = []
    while len(points) < count and free.any():
        py, px = np.unravel_index(np.argmax(np.where(free, terrain, -np.inf)), terrain.shape)
        points.append((float(px), float(py)))
        free &= np.hypot(x - px, y - py) >= spacing
    return points


class Erode:
    name = "erode"
    MODEL = "classic"
    FRAMES = 5400               # three simulated minutes (90 real seconds at 60 frames a second)
    SPRINGS_FRAMES = 3600       # the springs run this long, then stop, so the land drains and shows its silt
    SPRINGS = 3
    PANELS = (0,)               # the world as it was, beside the last picture
    PITCH = 50.0                # the camera a little higher than the game's: the valley floors in view

    def __init__(self, game):
        game.erosion = True
        self.springs = find_springs(game.grid.terrain, self.SPRINGS, game.world.n / 4)
        game.camera.pitch = self.PITCH

    def before_frame(self, game, frame) -> None:
        if frame == 0:
            for x, y in self.springs:
                game.add_spring(x, y, SPRING_RATE * game.scale ** 2)
            game.message = "erosion on: springs on the hills, the river into the lake"
        elif frame == self.SPRINGS_FRAMES:
            game.clear_springs()
            game.message = "the springs have stopped"


SCRIPTS = {DigChannel.name: DigChannel, DamBreak.name: DamBreak, Erode.name: Erode}
