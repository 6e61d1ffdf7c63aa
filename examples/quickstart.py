"""Quick start: water over a terrain heightmap, headless. A river enters on the left, a sea lies on the
right, a lake fills a hollow; after some simulated seconds a top-down picture is written.

    python examples/quickstart.py --out water.png
"""
import argparse
import time

import numpy as np

import hydro
from hydro.image import shade, write_png


def terrain(n: int) -> np.ndarray:
    y, x = np.mgrid[0:n, 0:n] / n
    ground = 3.0 * (1 - x) + 0.8 * np.sin(6 * x + 2 * np.sin(5 * y)) + 0.5 * np.cos(7 * y)
    return ground - 2.5 * np.exp(-((x - 0.45) ** 2 + (y - 0.5) ** 2) / 0.02)        # a hollow for a lake


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--out", default="water.png")
    args = ap.parse_args()
    ctx = hydro.create_context()
    print("GL_RENDERER:", ctx.info["GL_RENDERER"])
    with hydro.WaterGrid(ctx, terrain(args.size), cell_size=1.0, friction=0.05) as grid:
        grid.set_boundary("left", "inflow", 40.0, span=(args.size // 2 - 4, args.size // 2 + 4))
        grid.set_boundary("right", "level", 0.0)
        start = time.perf_counter()
        frames = int(args.seconds * 30)
        for _ in range(frames):
            grid.step(1 / 30)
        elapsed = time.perf_counter() - start
        print(f"{frames} frames ({grid.iteration} substeps) of a {args.size}^2 grid in {elapsed:.2f} s; "
              f"volume {grid.volume():.1f}, ledger says {grid.ledger()['expected']:.1f}")
        write_png(args.out, shade(grid.terrain, grid.water))
    print("wrote", args.out)


if __name__ == "__main__":
    main()
