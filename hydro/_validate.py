"""Argument checks shared by the grids. Each raises ValueError/TypeError naming the argument and
what was expected; none touches the GPU, so a failed call leaves the grid as it was."""
from __future__ import annotations

import math
import numbers

import numpy as np


def real(name: str, value, *, low=None, high=None, low_open=False, high_open=False) -> float:
    """A finite real number, optionally inside [low, high] (open ends where asked)."""
    if type(value) is not float:            # a float needs no ABC check (a step() call's dt)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name}: expected a real number, got {type(value).__name__} {value!r}")
        value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name}: expected a value {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and (value > high or (high_open and value == high)):
        raise ValueError(f"{name}: expected a value {'<' if high_open else '<='} {high}, got {value}")
    return value


def positive(name: str, value) -> float:
    return real(name, value, low=0.0, low_open=True)


def integer(name: str, value, *, low=None, high=None) -> int:
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")
        value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name}: expected an int >= {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name}: expected an int <= {high}, got {value}")
    return value


def field(name: str, array, shape: tuple[int, ...] | None = None, *, nonnegative=False,
          dtype=np.float32) -> np.ndarray:
    """A finite real array of the given shape, as a C-contiguous copy of `dtype`."""
    if isinstance(array, (str, bytes)) or array is None:
        raise TypeError(f"{name}: expected an array of numbers, got {type(array).__name__}")
    try:
        arr = np.asarray(array)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name}: expected an array of numbers ({exc})") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name}: expected a real-valued array, got dtype {arr.dtype}")
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)} (indexed [y, x]), got {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name}: expected finite values, found {arr[tuple(bad)]} at index {tuple(int(i) for i in bad)}")
    if nonnegative and np.any(arr < 0):
        bad = np.argwhere(arr < 0)[0]
        raise ValueError(f"{name}: expected values >= 0, found {arr[tuple(bad)]} at index {tuple(int(i) for i in bad)}")
    with np.errstate(over="ignore"):              # an overflow is the error below, not a warning
        out = np.ascontiguousarray(arr, dtype=dtype)
    if dtype == np.float32 and not np.all(np.isfinite(out)):
        raise ValueError(f"{name}: values overflow float32 (|value| must stay below 3.4e38)")
    return out


def choice(name: str, value, options) -> str:
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name}: expected one of {', '.join(repr(o) for o in options)}, got {value!r}")
    return value


FLOAT32_MAX = float(np.finfo(np.float32).max)


def real32(name: str, value, **bounds) -> float:
    """real(), and also representable as a finite float32: for values sent to a shader uniform."""
    value = real(name, value, **bounds)
    if abs(value) > FLOAT32_MAX:
        raise ValueError(f"{name}: {value} overflows float32 (|value| must stay below 3.4e38)")
    return value


def pair(name: str, value, what: str = "(x, y)", item=real, **kwargs) -> tuple:
    """A pair such as (vx, vy) or (ny, nx): a length-2 sequence (not a string), each element checked by
    `item` (real, real32, integer, ...) under the name `name[0]` / `name[1]` with `kwargs`."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise TypeError(f"{name}: expected {what}, got {value!r}")
    return (item(f"{name}[0]", value[0], **kwargs), item(f"{name}[1]", value[1], **kwargs))


def rectangle(heights, origin, nx: int, ny: int) -> tuple[np.ndarray, int, int]:
    """An (h, w) float32 array of heights and the cell (x0, y0) it starts at, the rectangle lying
    inside an nx x ny grid (a grid's set_terrain)."""
    heights = field("heights", heights)
    if heights.ndim != 2 or min(heights.shape) < 1:
        raise ValueError(f"heights: expected a 2D array (h, w) with h, w >= 1, got shape {heights.shape}")
    x0, y0 = pair("origin", origin, "(x0, y0) cell indices", item=integer, low=0)
    h, w = heights.shape
    if h > ny or w > nx:
        raise ValueError(f"heights: shape {heights.shape} is larger than the grid's {(ny, nx)} (indexed [y, x])")
    if x0 + w > nx or y0 + h > ny:
        raise ValueError(f"origin: a rectangle of {h} x {w} cells at (x0, y0) = ({x0}, {y0}) reaches past the "
                         f"{nx} x {ny} grid; expected x0 <= {nx - w} and y0 <= {ny - h}")
    return heights, x0, y0
