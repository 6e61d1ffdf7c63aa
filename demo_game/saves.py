"""Save and load a demo world as `.npz` (NumPy arrays only: no pickle, so a save cannot run code).

A save holds the lattice, the terrain, water and face flows (float32, exactly as the grid has them),
the boundaries, springs, rain flag, floodgate, simulated time and seed. `load` checks every field and raises
`SaveError` (a ValueError) naming what is wrong with a corrupt or foreign file. Springs are kept as
(x, y, rate) and rain as a flag, not as the grid's sources and rate: the game makes those again on the
loaded grid (Game.rebuild), so the format is the same as before the grid had a water cycle.
Erosion adds optional entries, so saves from before it load as they did (erosion as the game has it):
the erosion flag, and where erosion was used the sediment the water carries and the heights the
renderer draws silt above ("deposits"); the terrain, which holds what the water carved, is saved anyway.
"""
from __future__ import annotations

import json
import math
import zipfile

import numpy as np

FORMAT = "hydro-demo-world"
VERSION = 1


class SaveError(ValueError):
    """The file is not a readable hydro demo save."""


def state_of(game) -> dict:
    """The arrays that describe the game's world now."""
    grid = game.grid
    arrays = {
        "format": np.array(FORMAT), "version": np.array(VERSION, np.int64),
        "lattice": np.array("hex" if game.hexagonal else "square"),
        "cell_size": np.array(game.cell_size), "seed": np.array(game.world.seed, np.int64),
        "sim_time": np.array(grid.sim_time), "rain": np.array(bool(game.rain)),
        "gate_closed": np.array(bool(game.gate_closed)),
        "terrain": grid.terrain, "water": grid.water,
        "springs": np.array(game.springs, np.float64).reshape(-1, 3),
        "boundaries": np.array(json.dumps(_boundaries(grid))),
        "erosion": np.array(bool(game.erosion)),
    }
    deposits = game.renderer.deposit_reference          # None unless erosion was used
    if deposits is not None or game.erosion:
        arrays["sediment"] = grid.sediment
    if deposits is not None:
        arrays["deposits"] = deposits
    for name in ("flow_x", "flow_y", "flow_z"):
        if hasattr(grid, name):
            arrays[name] = getattr(grid, name)
    return arrays


def _boundaries(grid) -> list:
    out = []
    for side, runs in grid.boundaries.items():
        for kind, first, stop, value in runs:
            if kind != "wall":
                out.append([side, kind, float(value), [int(first), int(stop)]])
    return out


def save(game, path) -> None:
    with open(path, "wb") as f:
        np.savez_compressed(f, **state_of(game))


def read(path) -> dict:
    """The validated contents of a save file, or SaveError (FileNotFoundError where there is none)."""
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise SaveError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if magic != b"PK\x03\x04":             # np.load would take anything else for a pickle or a .npy
        raise SaveError(f"{path}: not a hydro demo save (not an .npz archive)")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise SaveError(f"{path}: not a hydro demo save ({type(exc).__name__}: {exc})") from None
    if not isinstance(arrays, dict) or "format" not in arrays:
        raise SaveError(f"{path}: not a hydro demo save (no 'format' entry; an .npz from something else?)")
    if str(arrays["format"]) != FORMAT:
        raise SaveError(f"{path}: format is {str(arrays['format'])!r}, expected {FORMAT!r}")
    version = int(arrays.get("version", -1))
    if version != VERSION:
        raise SaveError(f"{path}: save version {version} is not supported (this game reads version {VERSION})")
    required = ("lattice", "cell_size", "seed", "sim_time", "rain", "terrain", "water", "springs",
                "boundaries", "flow_x", "flow_y")
    missing = [k for k in required if k not in arrays]
    if missing:
        raise SaveError(f"{path}: missing {', '.join(missing)}")
    lattice = str(arrays["lattice"])
    if lattice not in ("square", "hex"):
        raise SaveError(f"{path}: lattice {lattice!r} is neither 'square' nor 'hex'")
    terrain, water = arrays["terrain"], arrays["water"]
    for name, a in (("terrain", terrain), ("water", water)):
        if a.dtype != np.float32 or a.ndim != 2 or min(a.shape) < 2:
            raise SaveError(f"{path}: {name} must be a 2D float32 array, got {a.dtype} {a.shape}")
        if not np.all(np.isfinite(a)):
            raise SaveError(f"{path}: {name} contains NaN or infinity")
    if water.shape != terrain.shape:
        raise SaveError(f"{path}: water {water.shape} and terrain {terrain.shape} differ in shape")
    if (water < 0).any():
        raise SaveError(f"{path}: water has negative depths")
    ny, nx = terrain.shape
    shapes = {"flow_x": (ny, nx + 1), "flow_y": (ny + 1, nx)}
    if lattice == "hex":
        shapes["flow_z"] = (ny + 1, nx + 1)
    for name, shape in shapes.items():
        a = arrays.get(name)
        if a is None or a.dtype != np.float32 or a.shape != shape or not np.all(np.isfinite(a)):
            raise SaveError(f"{path}: {name} must be finite float32 of shape {shape}")
    sim_time = float(arrays["sim_time"])
    if not math.isfinite(sim_time) or sim_time < 0:
        raise SaveError(f"{path}: sim_time must be a finite number of seconds >= 0, got {sim_time}")
    springs = arrays["springs"]
    if springs.ndim != 2 or springs.shape[1] != 3 or not np.all(np.isfinite(springs)):
        raise SaveError(f"{path}: springs must be an (n, 3) array of x, y, rate")
    x, y, rate = springs.T                     # each becomes a grid source, which must reach the grid
    if not (np.all((0 <= x) & (x <= nx - 1) & (0 <= y) & (y <= ny - 1)) and np.all(rate > 0)):
        raise SaveError(f"{path}: springs must lie on the {nx} x {ny} grid (x 0 .. {nx - 1}, y 0 .. {ny - 1}) "
                        f"with rates > 0")
    optional = {}
    for name, nonnegative in (("sediment", True), ("deposits", False)):
        a = arrays.get(name)
        if a is None:
            continue
        if a.dtype != np.float32 or a.shape != terrain.shape or not np.all(np.isfinite(a)):
            raise SaveError(f"{path}: {name} must be finite float32 of shape {terrain.shape}")
        if nonnegative and (a < 0).any():
            raise SaveError(f"{path}: {name} has negative heights")
        optional[name] = a
    if "erosion" in arrays:
        if arrays["erosion"].shape != () or arrays["erosion"].dtype != np.bool_:
            raise SaveError(f"{path}: erosion must be a flag (a boolean)")
        optional["erosion"] = bool(arrays["erosion"])
    try:
        boundaries = json.loads(str(arrays["boundaries"]))
        boundaries = [(str(side), str(kind), float(value), tuple(int(i) for i in span))
                      for side, kind, value, span in boundaries]
    except (ValueError, TypeError) as exc:
        raise SaveError(f"{path}: boundaries are unreadable ({exc})") from None
    return {"lattice": lattice, "cell_size": float(arrays["cell_size"]), "seed": int(arrays["seed"]),
            "sim_time": sim_time, "rain": bool(arrays["rain"]), "terrain": terrain,
            "gate_closed": bool(arrays["gate_closed"]) if "gate_closed" in arrays else False,
            "water": water, "springs": [tuple(map(float, s)) for s in springs], "boundaries": boundaries,
            "flows": [arrays[k] for k in shapes], "erosion": optional.get("erosion"),
            "sediment": optional.get("sediment"), "deposits": optional.get("deposits")}


def load(game, path) -> None:
    """Replace the game's world with the saved one (validated first: on error the game is unchanged)."""
    state = read(path)
    if state["cell_size"] != game.cell_size:
        raise SaveError(f"{path}: cell_size {state['cell_size']} differs from the game's {game.cell_size}")
    try:                                       # the saved springs become the new grid's sources
        game.rebuild(state["terrain"], state["water"], hexagonal=state["lattice"] == "hex",
                     boundaries=state["boundaries"], springs=state["springs"], sediment=state["sediment"],
                     deposits=state["deposits"], erosion=state["erosion"])     # None (older saves): the game's
    except (ValueError, TypeError) as exc:
        raise SaveError(f"{path}: the grid rejected the saved world ({exc})") from None
    grid = game.grid
    for name, flow in zip(("flow_x", "flow_y", "flow_z"), state["flows"]):
        setattr(grid, name, flow)
    grid.sim_time = state["sim_time"]
    game.rain = state["rain"]                           # sets the new grid's rain
    game.gate_closed = state["gate_closed"]             # the saved terrain holds the gate as it was
