"""Shared worlds and edits for the sleeping tiles' tests of both backends (test_water_sleep: the compute
kernels; test_water_fragment_sleep: the fragment passes). Grids of TILE-cell tiles (the test seams),
small enough for llvmpipe, large enough that most tiles sleep."""
import numpy as np

TILE = 16
MODELS = {"classic": {}, "inertia": {"inertia": True, "manning": 0.03}}
SHAPES = {"whole-tiles": (80, 112), "ragged": (53, 37)}


def dam(shape):
    """Flat dry land with water 1 deep in its corner [:24, :20]: terrain, water."""
    terrain = np.zeros(shape, np.float32)
    water = np.zeros(shape, np.float32)
    water[:24, :20] = 1.0
    return terrain, water


def basin(shape=(96, 112)):
    """A still lake, at rest to the bit (heights and level multiples of 1/64), behind a ridge at x = 40
    from dry land sloping away to the right, and a pond sloshing in the far corner."""
    ny, nx = shape
    y, x = np.mgrid[0:ny, 0:nx]
    terrain = np.round(64 * (0.5 + 0.01 * x + 0.2 * np.sin(y / 5.0) ** 2)) / 64
    terrain[:, 38:42] = 3.0
    lake = np.where(x < 38, np.maximum(1.5 - terrain, 0.0), 0.0)
    pond = ((x - 95) ** 2 + (y - 80) ** 2 < 36) * 0.8
    return terrain.astype(np.float32), (lake + pond).astype(np.float32)


def _breach(shape):
    """The basin's ridge over rows 30 to 50."""
    y, x = np.mgrid[0:shape[0], 0:shape[1]]
    return (x >= 38) & (x < 42) & (y >= 30) & (y < 50)


# edits that reach the basin's still lake
EDITS = {
    "set_terrain": lambda g: g.set_terrain(np.full((20, 4), 0.5, np.float32), origin=(38, 30)),
    "add_water": lambda g: g.add_water(20, 40, 4.0, 30.0),
    "remove_water": lambda g: g.remove_water(20, 40, 4.0, 10.0),
    "dig": lambda g: g.dig(25, 30, 3.0, 0.5),
    "water": lambda g: g.__setattr__("water", np.where(np.arange(g.nx) == 10, 1.6, g.water).astype(np.float32)),
    "terrain": lambda g: g.__setattr__("terrain", np.where(_breach(g.shape), 0.5, g.terrain).astype(np.float32)),
    "flow_x": lambda g: g.__setattr__("flow_x", np.where(np.arange(g.nx + 1) == 20, 0.5, g.flow_x).astype(np.float32)),
    "boundary": lambda g: g.set_boundary("bottom", "inflow", 3.0, span=(10, 20)),
}


def cycle_steps(shape) -> list:
    """(what, change of a grid) in turn on the basin: evaporation, a spring on dry land, a drain in the
    lake, rain on a patch, the spring removed."""
    patch = np.zeros(shape, np.float32)
    patch[70:80, 60:70] = 1e-3
    return [
        ("evaporation", lambda g: g.__setattr__("evaporation", 1e-6)),
        ("spring", lambda g: g.add_source(100, 10, 2.0, 0.5)),
        ("drain", lambda g: g.add_source(10, 40, 2.0, -0.2)),
        ("rain field", lambda g: g.__setattr__("rain", patch)),
        ("spring off", lambda g: g.sources[0].remove()),
    ]
