"""A tiny PNG writer (8-bit RGB or RGBA, zlib), so screenshots need no imaging library."""
from __future__ import annotations

import struct
import zlib

import numpy as np


def write_png(path, pixels: np.ndarray) -> None:
    """Write `pixels` (height, width, 3 or 4) uint8, row 0 at the top, as a PNG file."""
    pixels = np.ascontiguousarray(pixels)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] not in (3, 4):
        raise ValueError(f"pixels: expected a (h, w, 3|4) uint8 array, got {pixels.dtype} {pixels.shape}")
    height, width, channels = pixels.shape
    raw = b"".join(b"\x00" + row.tobytes() for row in pixels)       # filter type 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2 if channels == 3 else 6, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6))
                + chunk(b"IEND", b""))


def read_png(path) -> np.ndarray:
    """Read a PNG written by write_png (8-bit RGB/RGBA, no interlace, filter 0 rows) for tests."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG file")
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
    channels = {2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * channels)
    if rows[:, 0].any():
        raise ValueError(f"{path}: filtered rows are not supported by this reader")
    return rows[:, 1:].reshape(height, width, channels)
