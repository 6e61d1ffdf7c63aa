"""The demo's smoke scene renders offscreen (the interactive path needs a display)."""
import struct
import zlib

import numpy as np

from demo_game.smoke_scene import render_headless


def _read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        if data[pos + 4:pos + 8] == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 3 * w)
    return raw[:, 1:].reshape(h, w, 3)


def test_headless_capture(tmp_path):
    out = tmp_path / "smoke.png"
    summary = render_headless(20, str(out), shape=(48, 64), size=(128, 96))
    img = _read_png(out)
    assert img.shape == (96, 128, 3)
    assert summary["residual"] <= 1e-4
    assert img.max() > 150 and img.min() < 40              # flame / smoke over a dark background
