"""A small NumPy rasteriser for the documentation figures (no plotting library): antialiased lines, discs,
triangles and arrows drawn by supersampling, and tick-label digits. Used by make_hex_figure.py and
make_plots.py."""
import numpy as np

from hydro.image import write_png


class Canvas:
    """A white W x H picture drawn at SS-times supersampling; coordinates are supersampled pixels."""

    def __init__(self, width, height, supersample=3):
        self.W, self.H, self.SS = width, height, supersample
        self.img = np.ones((height * supersample, width * supersample, 3))
        self.yy, self.xx = np.mgrid[0:height * supersample, 0:width * supersample]

    def _box(self, pts, pad):
        lo = np.floor(np.min(pts, axis=0) - pad).astype(int)
        hi = np.ceil(np.max(pts, axis=0) + pad).astype(int)
        lo = np.maximum(lo, 0)
        hi = np.minimum(hi, [self.W * self.SS - 1, self.H * self.SS - 1])
        return np.s_[lo[1]:hi[1] + 1, lo[0]:hi[0] + 1]

    def line(self, a, b, color, width, dash=0.0):
        sl = self._box(np.array([a, b]), width * self.SS)
        px, py = self.xx[sl], self.yy[sl]
        d = b - a
        t = np.clip(((px - a[0]) * d[0] + (py - a[1]) * d[1]) / max(d @ d, 1e-9), 0, 1)
        dist = np.hypot(px - a[0] - t * d[0], py - a[1] - t * d[1])
        mask = dist <= width * self.SS / 2
        if dash:
            mask &= (t * np.hypot(*d) // (dash * self.SS)) % 2 == 0
        self.img[sl][mask] = color

    def disc(self, c, radius, color):
        sl = self._box(np.array([c]), radius * self.SS + 1)
        mask = np.hypot(self.xx[sl] - c[0], self.yy[sl] - c[1]) <= radius * self.SS
        self.img[sl][mask] = color

    def triangle(self, p, color):
        sl = self._box(np.array(p), 1)
        px, py = self.xx[sl], self.yy[sl]
        def side(a, b):
            return (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0])
        s1, s2, s3 = side(p[0], p[1]), side(p[1], p[2]), side(p[2], p[0])
        mask = ((s1 >= 0) & (s2 >= 0) & (s3 >= 0)) | ((s1 <= 0) & (s2 <= 0) & (s3 <= 0))
        self.img[sl][mask] = color

    def arrow(self, a, b, color, width, dash=0.0):
        self.line(a, b, color, width, dash)
        d = (b - a) / np.hypot(*(b - a))
        n = np.array([-d[1], d[0]])
        tip, base = a + 0.62 * (b - a), a + 0.62 * (b - a) - 14 * self.SS * d
        self.triangle([tip, base + 7 * self.SS * n, base - 7 * self.SS * n], color)

    def png(self, path):
        img = self.img.reshape(self.H, self.SS, self.W, self.SS, 3).mean(axis=(1, 3))
        write_png(path, (np.clip(img, 0, 1) * 255).astype(np.uint8))


# 3 x 5 glyphs for tick labels: digits, "e" (as in 1e10) and "%"
GLYPHS = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111", "3": "111001111001111",
    "4": "101101111001001", "5": "111100111001111", "6": "111100111101111", "7": "111001001001001",
    "8": "111101111101111", "9": "111101111001111", "e": "000111111100111", "%": "101001010100101",
}


def text(canvas, s, x, y, size, color):
    """Write `s` with its top-left corner at supersampled (x, y), each glyph pixel size x size."""
    for k, ch in enumerate(s):
        bits = GLYPHS[ch]
        for row in range(5):
            for col in range(3):
                if bits[row * 3 + col] == "1":
                    x0, y0 = int(x + (k * 4 + col) * size), int(y + row * size)
                    canvas.img[y0:y0 + int(size), x0:x0 + int(size)] = color
