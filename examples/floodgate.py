"""A floodgate: a reservoir drains through a gate into a channel to the sea. Opening and closing the gate
is one set_terrain() call, a rectangle of the bed raised or put back in one upload, the water kept and
the ledger exact; a gauge below the gate reads what passes.

    python examples/floodgate.py
"""
import numpy as np

import hydro

FPS = 30
GATE = (20, 4)                      # the gate's first cell (x, y): 2 cells along the channel, 3 across


def main():
    ctx = hydro.create_context()
    y, x = np.mgrid[0:11, 0:56]
    bed = np.where(abs(y - 5) > 1, 3.0, 0.5 - 0.01 * x)               # a channel 3 cells wide
    bed[:, :20] = 0.0                                                 # the reservoir, 20 cells long
    water = np.where(x < 20, 2.0, 0.0)
    gx, gy = GATE
    open_bed = bed[gy:gy + 3, gx:gx + 2].copy()
    closed_bed = np.full_like(open_bed, 3.0)
    bed[gy:gy + 3, gx:gx + 2] = closed_bed                            # the gate starts closed
    with hydro.WaterGrid(ctx, bed, water=water, manning=0.03) as grid:
        grid.set_boundary("right", "level", 0.0)
        below = grid.add_gauge((30.5, 3.5), (30.5, 6.5))
        for frame in range(1, 50 * FPS + 1):
            if frame == 5 * FPS:
                grid.set_terrain(open_bed, origin=GATE)
                print("t =  5 s  the gate opens")
            if frame == 30 * FPS:
                grid.set_terrain(closed_bed, origin=GATE)
                print("t = 30 s  the gate closes")
            grid.step(1.0 / FPS)
            if frame % (5 * FPS) == 0:
                level = grid.sample([[5.0, 5.0]])[0, 1]
                print(f"t = {frame // FPS:2d} s  reservoir at {level:.3f} m, {below.discharge:6.3f} m^3/s below the gate")
        print(f"volume {grid.volume():.3f} ledger {grid.ledger()['expected']:.3f}")


if __name__ == "__main__":
    main()
