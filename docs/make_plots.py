"""Draws docs/images/water_throughput.png from docs/data/water_h200.json and
docs/images/water_throughput_h100.png from docs/data/water_h100.json (each written by
`bench/water.py --json`): cell·steps/s against grid side, log-log, for both lattices and three step
implementations (what passes=1 runs in long calls, the packed tile kernel; the tile kernel on the grid's
own textures and buffers; the three passes), with the fused floor's traffic at the copy kernel's
bandwidth.

    python docs/make_plots.py
"""
import json
import math
from pathlib import Path

import numpy as np

from canvas import Canvas, text

HERE = Path(__file__).parent
W, H, SS = 900, 520, 3
LEFT, RIGHT, TOP, BOTTOM = 110, 30, 30, 70
X_RANGE = (math.log2(256), math.log2(4096))
Y_RANGE = (8.7, 11.3)                                  # log10 cell-steps/s
BLUE, ORANGE, GREY, BLACK = (0.15, 0.35, 0.8), (0.9, 0.45, 0.1), (0.85, 0.85, 0.85), (0.1, 0.1, 0.1)
FLOOR_BYTES = {"square": 28, "hex": 36}


def to_px(size, rate):
    fx = (math.log2(size) - X_RANGE[0]) / (X_RANGE[1] - X_RANGE[0])
    fy = (math.log10(rate) - Y_RANGE[0]) / (Y_RANGE[1] - Y_RANGE[0])
    return np.array([LEFT + fx * (W - LEFT - RIGHT), TOP + (1 - fy) * (H - TOP - BOTTOM)]) * SS


def draw(source: str, image: str) -> None:
    data = json.loads((HERE / "data" / source).read_text())
    rows, copy = data["rows"], data["info"]["copy_GBps"] * 1e9
    c = Canvas(W, H, SS)
    sizes = sorted({r["size"] for r in rows})
    bottom, top = 10 ** Y_RANGE[0], 10 ** Y_RANGE[1]
    for n in sizes:                                    # grid lines and x ticks
        c.line(to_px(n, bottom), to_px(n, top), GREY, 1)
        label = str(n)
        text(c, label, to_px(n, bottom)[0] - len(label) * 2 * 2 * SS, to_px(n, bottom)[1] + 10 * SS, 2 * SS, BLACK)
    for e in (9, 10, 11):
        c.line(to_px(256, 10.0 ** e), to_px(4096, 10.0 ** e), GREY, 1)
        label = f"1e{e}"
        text(c, label, (LEFT - 14 - len(label) * 8) * SS, to_px(256, 10.0 ** e)[1] - 5 * SS, 2 * SS, BLACK)
    c.line(to_px(256, bottom), to_px(4096, bottom), BLACK, 2)
    c.line(to_px(256, bottom), to_px(256, top), BLACK, 2)
    for grid, color in (("square", BLUE), ("hex", ORANGE)):
        floor = copy / FLOOR_BYTES[grid]               # the fused minimum traffic at the copy bandwidth
        c.line(to_px(256, floor), to_px(4096, floor), color, 1.5, dash=4)
        for path, width, dash in (("fused", 3.5, 0.0), ("fused-tile", 2.0, 0.0), ("three-pass", 2.5, 9.0)):
            pts = [to_px(r["size"], r["cell_steps_per_s"]) for r in sorted(rows, key=lambda r: r["size"])
                   if r["grid"] == grid and r["path"] == path]
            for a, b in zip(pts, pts[1:]):
                c.line(a, b, color, width, dash=dash)
            for p in pts:
                c.disc(p, {"fused": 5, "fused-tile": 3, "three-pass": 3.5}.get(path, 2.5), color)
    out = HERE / "images" / image
    c.png(out)
    print("wrote", out)


def main():
    draw("water_h200.json", "water_throughput.png")
    draw("water_h100.json", "water_throughput_h100.png")


if __name__ == "__main__":
    main()
