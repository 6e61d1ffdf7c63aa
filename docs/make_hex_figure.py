"""Draws docs/images/hex_lattice.png: the triangular lattice of HexWaterGrid, its hexagon cells, the
axial axes and which flow array holds which face (x red, y green, z blue; arrows point the way a
positive flow goes; faces to the outside are the boundary faces). NumPy rasteriser, no plotting library.

    python docs/make_hex_figure.py
"""
import math
from pathlib import Path

import numpy as np

from hydro.hex import grid_to_world
from canvas import Canvas

SS = 3                                   # supersampling
W, H, SCALE, ORIGIN = 800, 440, 120.0, np.array([190.0, 80.0])
NX, NY = 4, 3
RED, GREEN, BLUE = (0.85, 0.2, 0.2), (0.15, 0.6, 0.25), (0.2, 0.35, 0.85)
GREY, BLACK = (0.78, 0.78, 0.78), (0.1, 0.1, 0.1)


def to_px(wx, wy):
    return np.array([ORIGIN[0] + SCALE * wx, H - (ORIGIN[1] + SCALE * wy)]) * SS


def main():
    c = Canvas(W, H, SS)
    inside = lambda x, y: 0 <= x < NX and 0 <= y < NY
    # hexagon cells (the dual): corners at distance s/sqrt(3), pointy-top
    for y in range(NY):
        for x in range(NX):
            cx, cy = grid_to_world(x, y)
            corners = [to_px(cx + math.cos(math.radians(30 + 60 * k)) / math.sqrt(3),
                             cy + math.sin(math.radians(30 + 60 * k)) / math.sqrt(3)) for k in range(7)]
            for a, b in zip(corners, corners[1:]):
                c.line(a, b, GREY, 2)
    # faces: x (x-1, y)->(x, y); y (x, y-1)->(x, y); z (x, y-1)->(x-1, y)
    faces = []
    for y in range(NY):
        for x in range(NX + 1):
            faces.append(((x - 1, y), (x, y), RED))
    for y in range(NY + 1):
        for x in range(NX):
            faces.append(((x, y - 1), (x, y), GREEN))
    for y in range(NY + 1):
        for x in range(NX + 1):
            faces.append(((x, y - 1), (x - 1, y), BLUE))
    for f, t, color in faces:
        fin, tin = inside(*f), inside(*t)
        if not (fin or tin):
            continue                                   # the two unused corner z faces
        a, b = to_px(*grid_to_world(*f)), to_px(*grid_to_world(*t))
        if not (fin and tin):                          # boundary face: a dashed stub to the outside
            inner, outer = (a, b) if fin else (b, a)
            outer = inner + 0.55 * (outer - inner)
            a, b = (inner, outer) if fin else (outer, inner)
            c.arrow(a, b, color, 3, dash=6)
        else:
            c.arrow(a, b, color, 4)
    for y in range(NY):
        for x in range(NX):
            c.disc(to_px(*grid_to_world(x, y)), 9, BLACK)
    # axial axes from vertex (0, 0): +x along (s, 0), +y along (s/2, s*sqrt(3)/2)
    o = to_px(*grid_to_world(0, 0)) + np.array([-150, 40]) * SS
    c.arrow(o, o + np.array([90, 0]) * SS, BLACK, 3)
    c.arrow(o, o + np.array([45, -78]) * SS, BLACK, 3)
    out = Path(__file__).parent / "images" / "hex_lattice.png"
    c.png(out)
    print("wrote", out)


if __name__ == "__main__":
    main()
