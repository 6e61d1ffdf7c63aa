"""Small image helpers for headless use: write an RGB(A) uint8 array as PNG (zlib only) and a
top-down shaded view of a water grid for quick looks, logs and tests."""
from __future__ import annotations

import struct
import zlib

import numpy as np


def write_png(path, rgb: np.ndarray) -> None:
    """Write an (h, w, 3|4) uint8 array, row 0 at the top, as a PNG file."""
    rgb = np.ascontiguousarray(rgb)
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] not in (3, 4):
        raise ValueError(f"rgb: expected an (h, w, 3|4) uint8 array, got {rgb.dtype} {rgb.shape}")
    h, w, c = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 6 if c == 4 else 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6))
                + chunk(b"IEND", b""))


def read_png(path) -> np.ndarray:
    """Read back a PNG as written by write_png (8-bit RGB/RGBA, unfiltered rows), for tests and tools."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"path: {path} is not a PNG file")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = header[:4]
    if depth != 8 or color not in (2, 6):
        raise ValueError(f"path: only 8-bit RGB/RGBA PNGs are read, got depth {depth}, colour type {color}")
    channels = 3 if color == 2 else 4
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * channels)
    if rows[:, 0].any():
        raise ValueError(f"path: {path} has filtered rows, which this reader does not undo")
    return rows[:, 1:].reshape(height, width, channels).copy()


def shade(terrain: np.ndarray, water: np.ndarray, scale: int = 4) -> np.ndarray:
    """A top-down picture (north up): hill-shaded terrain coloured by height, water blue by depth."""
    z = np.asarray(terrain, np.float64)
    h = np.asarray(water, np.float64)
    span = max(float(np.ptp(z)), 1e-6)
    t = (z - z.min()) / span
    gy, gx = np.gradient(z)
    light = np.clip(0.75 + 0.9 * (-gx * 0.6 + gy * 0.6) / span * max(z.shape), 0.35, 1.25)
    low, high = np.array([0.36, 0.52, 0.25]), np.array([0.78, 0.72, 0.58])
    ground = (low + (high - low) * t[..., None]) * light[..., None]
    depth = np.clip(h / max(float(np.percentile(h[h > 0], 95)) if np.any(h > 0) else 1.0, 1e-6), 0, 1)
    shallow, deep = np.array([0.35, 0.65, 0.85]), np.array([0.05, 0.18, 0.45])
    sea = shallow + (deep - shallow) * depth[..., None]
    alpha = np.clip(h / 0.02, 0, 1)[..., None] * (0.55 + 0.45 * depth[..., None])
    rgb = ground * (1 - alpha) + sea * alpha
    img = (np.clip(rgb, 0, 1) * 255).astype(np.uint8)[::-1]          # row 0 (y = 0) at the bottom
    return np.repeat(np.repeat(img, scale, axis=0), scale, axis=1)
