"""The demo's world: Perlin hills with a lake held back by a ridge, a dry valley beside it, a river
coming in across the top edge and the sea along the bottom edge.

    world = build(128, seed=7)        # World: terrain, water, boundaries, landmarks (grid coordinates)

Layout in fractions of the map (u east, or west where the seed mirrors the scene; v = y / n north; row
y = 0 is the "bottom" side); the seed draws every position, size and bend (`Layout`):
- the sea covers the south (v < ~0.12) and stays at level 0 through a "level" boundary;
- a river enters across the top edge near the lake's u (an "inflow" boundary span) and bends south into
- a lake centred at u 0.24-0.34, v 0.57-0.65, whose surface is held just below the crest of a spillway
  leaving its south rim, which carries the overflow down to the sea;
- a north-south ridge past the lake's shore holds the lake back from
- a dry valley 0.16-0.20 beyond the ridge whose floor runs from below the lake surface down to the sea.
Dig through the ridge and the lake drains into the valley (scripts.find_crossing finds where).
A floodgate can close the spillway where it leaves the lake (`World.gate`), and a water wheel turns in
it half way down to the sea (`World.wheel`, the line across the spillway its gauge counts).

Heights are in world units with cell_size = 1 and scale with n / 128, so every size has the same
shape and slopes. The hills are fractal Perlin noise (`fbm`), computed here in NumPy (Perlin 1985,
2002) rather than by the `noise` package, which ships no wheels and needs a C compiler to install;
`noise="numpy"` gives the value noise bench/demo.py measured on.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SEA_LEVEL = 0.0
LAKE_LEVEL = 6.0          # world units at n = 128: the spillway's crest is 0.2 below, the lake 0.25
RIDGE_CREST = 8.5
RIVER_DISCHARGE = 6.0     # volume/s at n = 128 (scaled by (n/128)^2)


@dataclass
class World:
    """Everything needed to build the grid for the demo scene. Arrays are (ny, nx), indexed [y, x]."""
    terrain: np.ndarray
    water: np.ndarray
    boundaries: list                          # (side, kind, value, span) for grid.set_boundary
    landmarks: dict = field(default_factory=dict)   # name -> (x, y) grid coordinates
    seed: int = 0
    gate: tuple | None = None       # (x0, y0, open heights (h, w), closed height): a rectangle across the spillway
    wheel: tuple | None = None      # ((x0, y), (x1, y)), x0 < x1: a line across the spillway, its flow south

    @property
    def n(self) -> int:
        return self.terrain.shape[1]


def perlin(x, y, seed: int) -> np.ndarray:
    """Perlin's gradient noise at points (x, y) (arrays, broadcast): Perlin 1985 with the quintic fade of
    Perlin 2002. Each integer lattice point gets a unit gradient, picked from a table of 256 random
    directions by a seeded permutation (so the pattern repeats every 256 units); the noise is zero at
    the lattice points, has that gradient there, is C2 everywhere and lies within +-sqrt(2)/2."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(256).astype(np.uint8)
    angle = rng.uniform(0.0, 2.0 * np.pi, 256)
    cos, sin = np.cos(angle), np.sin(angle)
    x, y = np.asarray(x, float), np.asarray(y, float)
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = x - x0, y - y0
    # lattice indices mod 256 as bytes, whose sums wrap by themselves (a byte a point, not eight)
    ix, iy = (x0.astype(np.int64) & 255).astype(np.uint8), (y0.astype(np.int64) & 255).astype(np.uint8)

    def corner(dx, dy):              # the corner's gradient dotted with the offset from that corner
        k = perm[perm[ix + np.uint8(dx)] + iy + np.uint8(dy)]
        return cos[k] * (fx - dx) + sin[k] * (fy - dy)

    u, v = _fade(fx), _fade(fy)
    bottom = corner(0, 0) + u * (corner(1, 0) - corner(0, 0))
    top = corner(0, 1) + u * (corner(1, 1) - corner(0, 1))
    return bottom + v * (top - bottom)


def _fade(t):
    return t * t * t * (t * (6.0 * t - 15.0) + 10.0)        # 6t^5 - 15t^4 + 10t^3: C2 at the lattice


def fbm(shape, seed: int, features: float = 4.0, octaves: int = 5, persistence: float = 0.5,
        lacunarity: float = 2.0) -> np.ndarray:
    """Fractal Brownian motion over an (ny, nx) grid of cell centres: the sum of `octaves` Perlin
    noises, octave k with `features * lacunarity**k` lattice cells across the longer side and amplitude
    `persistence**k`. Each octave has its own tables and a random offset, so no lattice point is shared
    (a shared one would be zero in every octave); both depend on (seed, k) alone, so the first octaves
    of a longer sum are the shorter sum."""
    ny, nx = shape
    y, x = np.ogrid[0:ny, 0:nx]                    # a column and a row: perlin broadcasts them
    y, x = y + 0.5, x + 0.5
    out = np.zeros(shape)
    for k in range(octaves):
        rng = np.random.default_rng([seed, k])
        frequency = features / max(nx, ny) * lacunarity ** k
        ox, oy = rng.uniform(0.0, 256.0, 2)
        out += persistence ** k * perlin(x * frequency + ox, y * frequency + oy, int(rng.integers(2 ** 63)))
    return out


def perlin_noise(shape, seed: int, features: float = 4.0, octaves: int = 5) -> np.ndarray:
    """`fbm` normalised to [-1, 1] by its own range: about `features` hills across the map."""
    return _normalise(fbm(shape, seed, features, octaves))


def numpy_noise(shape, seed: int, features: float = 4.0, octaves: int = 5) -> np.ndarray:
    """Fractal value noise in [-1, 1]: the terrain bench/demo.py measured its figures on (`noise="numpy"`)."""
    ny, nx = shape
    rng = np.random.default_rng(seed)
    out = np.zeros(shape)
    amplitude, frequency = 1.0, features / max(nx, ny)
    ys, xs = np.mgrid[0:ny, 0:nx] + 0.5
    for _ in range(octaves):
        gx, gy = xs * frequency, ys * frequency
        lattice = rng.random((int(gy.max()) + 2, int(gx.max()) + 2))
        ix, iy = gx.astype(int), gy.astype(int)
        fx, fy = gx - ix, gy - iy
        fx, fy = fx * fx * (3 - 2 * fx), fy * fy * (3 - 2 * fy)
        top = lattice[iy, ix] * (1 - fx) + lattice[iy, ix + 1] * fx
        bottom = lattice[iy + 1, ix] * (1 - fx) + lattice[iy + 1, ix + 1] * fx
        out += amplitude * (top * (1 - fy) + bottom * fy)
        amplitude, frequency = amplitude * 0.5, frequency * 2.0
    return _normalise(out)


def _normalise(field_: np.ndarray) -> np.ndarray:
    low, high = field_.min(), field_.max()
    return 2.0 * (field_ - low) / max(high - low, 1e-12) - 1.0


def _smooth(t):
    t = np.clip(t, 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@dataclass(frozen=True)
class Layout:
    """Where the scene's features lie and how they bend, in fractions of the map, drawn from the seed."""
    mirrored: bool                  # True: the lake east of the ridge (u = 1 - x / n), else west
    lake: tuple                     # centre (u, v) and radii (ru, rv) of the basin
    ridge: tuple                    # centre line u, half width, and its wiggle: amplitude, wavenumber, phase
    valley: tuple                   # centre line u, half width, and its meander: amplitude, wavenumber, phase
    river: tuple                    # u where it enters across the top edge, and its bend's amplitude
    spillway_u: float               # u where the spillway leaves the lake's south rim

    def valley_centre(self, v):
        """u of the valley's floor at v."""
        centre, _, amplitude, wavenumber, phase = self.valley
        return centre + amplitude * np.sin(wavenumber * v + phase)

    @classmethod
    def draw(cls, seed: int) -> "Layout":
        rng = np.random.default_rng([seed, 1])        # a stream apart from the noise's
        mirrored = bool(rng.integers(2))
        lake_u, lake_v = rng.uniform(0.24, 0.34), rng.uniform(0.57, 0.65)
        ru, rv = rng.uniform(0.14, 0.19), rng.uniform(0.12, 0.16)
        ridge_u = lake_u + 0.74 * ru + rng.uniform(0.06, 0.09)      # the shore lies at ~0.74 of the radii
        valley_u = ridge_u + rng.uniform(0.16, 0.20)
        wiggle = (rng.uniform(0.008, 0.02), rng.uniform(6.0, 11.0), rng.uniform(0.0, 2.0 * np.pi))
        meander = (rng.uniform(0.015, 0.04), rng.uniform(5.0, 9.0), rng.uniform(0.0, 2.0 * np.pi))
        return cls(mirrored, (lake_u, lake_v, ru, rv), (ridge_u, rng.uniform(0.04, 0.055), *wiggle),
                   (valley_u, rng.uniform(0.10, 0.14), *meander),
                   (lake_u + rng.uniform(-0.03, 0.03), rng.uniform(-0.06, 0.06)),
                   lake_u - rng.uniform(0.06, 0.10))


def build(n: int = 128, seed: int = 7, noise: str = "perlin") -> World:
    """The demo scene on an n x n grid; the seed places and shapes its hills, lake, ridge, valley,
    river and spillway (`Layout`). noise: "perlin" (`perlin_noise`) or "numpy" (`numpy_noise`)."""
    if not isinstance(n, int) or n < 32:
        raise ValueError(f"n: expected an int >= 32, got {n!r}")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    if noise not in ("perlin", "numpy"):
        raise ValueError(f"noise: expected 'perlin' or 'numpy', got {noise!r}")
    layout = Layout.draw(seed)
    s = n / 128.0                                   # heights scale with the map
    y, x = np.mgrid[0:n, 0:n] + 0.5
    u, v = (1.0 - x / n if layout.mirrored else x / n), y / n
    hills = (perlin_noise if noise == "perlin" else numpy_noise)((n, n), seed)
    detail = (perlin_noise if noise == "perlin" else numpy_noise)((n, n), seed + 101, features=11.0, octaves=3)

    # Land rising from a sea shelf in the south to hills in the north.
    land = -3.0 + 15.0 * _smooth((v - 0.04) / 0.40) + 2.0 * _smooth((v - 0.45) / 0.5)
    h = land + 3.0 * hills * _smooth((v - 0.10) / 0.2) + 0.6 * detail

    # Lake basin: a bowl with a ragged shore whose floor lies well below the spillway.
    lake_u, lake_v, ru, rv = layout.lake
    lake = np.hypot((u - lake_u) / ru, (v - lake_v) / rv) * (1.0 + 0.18 * hills)
    h = np.minimum(h, 2.2 + 6.5 * lake ** 2 + 0.3 * detail)      # above every hill by lake = 1.6

    # A dry valley beyond the ridge running down to the sea, then the ridge between the two.
    valley_floor = -1.0 + 4.0 * _smooth((v - 0.05) / 0.7) + 6.0 * _smooth((v - 0.75) / 0.2)
    valley = valley_floor + 9.0 * ((u - layout.valley_centre(v)) / layout.valley[1]) ** 2 + 0.25 * detail
    h = np.minimum(h, valley)
    ridge_u, ridge_width, amplitude, wavenumber, phase = layout.ridge
    ridge = np.abs(u - ridge_u - amplitude * np.sin(wavenumber * v + phase)) / ridge_width
    ridge_band = _smooth((0.92 - v) / 0.08) * _smooth((v - 0.28) / 0.08)
    crest = RIDGE_CREST - 1.5 * ridge ** 2 + 0.4 * detail
    h = np.where(ridge < 1.0, np.maximum(h, crest * ridge_band + h * (1.0 - ridge_band)), h)
    saddle = RIDGE_CREST + 0.4 * detail + 0.8 * np.maximum(ridge - 1.0, 0.0) ** 2   # no hill above the crest
    h = np.minimum(h, saddle * ridge_band + h * (1.0 - ridge_band))

    # Spillway: a notch at the crest's height from the lake south through its rim, then down to the sea.
    rim = lake_v - 0.9 * rv - 0.01                    # past the furthest south a ragged shore reaches
    t = np.clip((rim - v) / (rim - 0.08), 0.0, 1.0)   # 0 down to the rim, 1 at the shore
    path_u = layout.spillway_u - 0.06 * t
    spill = LAKE_LEVEL - 0.2 - (LAKE_LEVEL + 1.0) * _smooth(t) + 40.0 * (u - path_u) ** 2 / 0.05
    h = np.where((v < lake_v) & (v > 0.02), np.minimum(h, spill + 0.15 * detail * _smooth(t / 0.2)), h)

    # River from the top edge down into the lake, bending on the way.
    river_u, bend = layout.river
    mouth = lake_v + 0.10
    t = np.clip((1.0 - v) / (1.0 - mouth), 0.0, 1.0)  # 0 at the top edge, 1 at the lake
    path_u = river_u + bend * np.sin(np.pi * t)
    river = LAKE_LEVEL + 2.5 - 2.0 * t + 60.0 * (u - path_u) ** 2 / 0.05
    h = np.where(v > mouth - 0.02, np.minimum(h, river + 0.15 * detail), h)

    def at(fu, fv):                                 # map fractions -> grid coordinates (cell centres)
        return ((1.0 - fu if layout.mirrored else fu) * n - 0.5, fv * n - 0.5)

    terrain = (h * s).astype(np.float32)
    water = np.zeros_like(terrain)
    surface = (LAKE_LEVEL - 0.25) * s                 # just below the spillway crest
    lake_x, lake_y = (int(round(c)) for c in at(lake_u, lake_v))
    lake_cells = flood((terrain < surface) & (lake < 1.4), [(lake_y, lake_x)])
    water[lake_cells] = surface - terrain[lake_cells]
    sea_cells = flood(terrain < SEA_LEVEL, [(0, x) for x in range(n)])
    water[sea_cells] = SEA_LEVEL - terrain[sea_cells]

    river_x = int(round(at(river_u, 1.0)[0]))
    half = max(2, n // 32)
    boundaries = [("bottom", "level", SEA_LEVEL, None),
                  ("top", "inflow", RIVER_DISCHARGE * s * s, (river_x - half, river_x + half))]
    landmarks = {"lake": at(lake_u, lake_v), "valley": at(layout.valley_centre(lake_v), lake_v),
                 "sea": at(0.5, 0.03), "river": (river_x, n - 2)}

    def across_spillway(fv, half):
        """Grid x (low, high) and y of the spillway's cross-section at v = fv, half wide in u."""
        centre = layout.spillway_u - 0.06 * np.clip((rim - fv) / (rim - 0.08), 0.0, 1.0)
        (xa, y_at), (xb, _) = at(centre - half, fv), at(centre + half, fv)
        return min(xa, xb), max(xa, xb), y_at

    low, high, y_gate = across_spillway(rim, 0.05)        # where the crest ends and the spillway falls
    x0, y0 = int(round(low)), int(round(y_gate))
    gate = (x0, y0, terrain[y0:y0 + 2, x0:int(round(high)) + 1].copy(), (LAKE_LEVEL + 1.0) * s)
    low, high, y_wheel = across_spillway(0.5 * (rim + 0.08), 0.08)
    y_line = float(np.floor(y_wheel) + 0.5)                  # between two rows
    wheel = ((float(low), y_line), (float(high), y_line))
    return World(terrain, water.astype(np.float32), boundaries, landmarks, seed, gate, wheel)


def flood(mask: np.ndarray, seeds) -> np.ndarray:
    """Cells of `mask` 4-connected to any of the `seeds` (y, x) that lie inside it: the region spreads
    along whole runs of the mask, by rows then by columns, until it stops growing (a few rounds for the
    demo's lakes and valleys, where a cell a round would take as many as the region is long)."""
    region = np.zeros_like(mask)
    for seed in seeds:
        region[seed] = mask[seed]
    while True:
        grown = _spread_runs(_spread_runs(region, mask).T, mask.T).T
        if (grown == region).all():
            return region
        region = grown


def _spread_runs(region: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The runs of `mask` along each row that hold a cell of `region`, whole."""
    ny, nx = mask.shape
    starts = mask.copy()
    starts[:, 1:] &= ~mask[:, :-1]               # a run starts at its row's first cell or after a gap
    runs = np.cumsum(starts.ravel()).reshape(ny, nx)   # run numbers from 1, the same along a run
    hit = np.zeros(runs[-1, -1] + 1, bool)
    hit[runs[region & mask]] = True
    return hit[runs] & mask
