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
    """Read back an 8-bit RGB/RGBA, non-interlaced PNG (as written by write_png and most encoders)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"path: {path} is not a PNG file")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError(f"path: only 8-bit RGB/RGBA PNGs are supported, got depth {depth} type {ctype}")
            c = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, w * c + 1)
    out = np.zeros((h, w * c), np.int32)
    prev = np.zeros(w * c, np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        cur = np.zeros(w * c, np.int32)
        for x in range(w * c):
            a = cur[x - c] if x >= c else 0
            b, cc = prev[x], (prev[x - c] if x >= c else 0)
            if f == 0:
                pred = 0
            elif f == 1:
                pred = a
            elif f == 2:
                pred = b
            elif f == 3:
                pred = (a + b) // 2
            else:
                p = a + b - cc
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - cc)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else cc)
            cur[x] = (line[x] + pred) & 0xFF
        out[y], prev = cur, cur
    return out.reshape(h, w, c).astype(np.uint8)


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
