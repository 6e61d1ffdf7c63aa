"""A tide: the sea's level, a "level" boundary, rises and falls every frame, flooding a beach and
leaving it dry again. set_boundary() only uploads the table, so calling it every frame costs no stall;
sample() finds the shoreline from 48 points along the beach without reading the grid back.

    python examples/tide.py
"""
import math

import numpy as np

import hydro

FPS, PERIOD, RANGE = 30, 60.0, 0.6          # frames a second; the tide's period (s) and half range (m)


def main():
    ctx = hydro.create_context()
    y, x = np.mgrid[0:16, 0:48]
    beach = np.maximum(0.06 * (x - 16.0), -1.5)                 # rising from the sea on the left
    along = np.stack([np.arange(48.0), np.full(48, 8.0)], axis=1)   # points up the beach
    with hydro.WaterGrid(ctx, beach, cell_size=0.5, water=np.maximum(-beach, 0.0), manning=0.03) as grid:
        for frame in range(int(PERIOD * FPS) + 1):
            level = RANGE * math.sin(2.0 * math.pi * frame / FPS / PERIOD)
            grid.set_boundary("left", "level", level)           # every frame: an upload, no readback
            grid.step(1.0 / FPS)
            if frame % (FPS * 5) == 0:
                wet = grid.sample(along)[:, 0] > 0.02
                print(f"t = {grid.sim_time:4.0f} s  sea level {level:+.2f} m  shoreline at x = {np.argmin(wet)}")
        print(f"volume {grid.volume():.3f} ledger {grid.ledger()['expected']:.3f}")


if __name__ == "__main__":
    main()
