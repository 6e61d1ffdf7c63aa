"""A boat on a river drifts with the water: each frame it asks for the water at its position with
sample_async() and moves by the velocity it got back from the frame before, so the game never waits
for the GPU (16 bytes come back, never the grid).

    python examples/boat.py
"""
import numpy as np

import hydro

FPS = 30


def river(ny=12, nx=64):
    """A channel 6 cells wide down a gentle slope between banks, into the sea on the right."""
    y, x = np.mgrid[0:ny, 0:nx]
    return np.where((y < 3) | (y > 8), 3.0, 1.0 - 0.005 * x)


def main():
    ctx = hydro.create_context()
    with hydro.WaterGrid(ctx, river(), manning=0.035) as grid:
        grid.set_boundary("left", "inflow", 2.0, span=(3, 9))     # m^3/s
        grid.set_boundary("right", "level", 0.0)                  # the sea
        for _ in range(60 * FPS):                                 # a minute for the river to fill its bed
            grid.step(1.0 / FPS)
        boat = np.array([3.0, 5.0])                               # grid coordinates: (x, y)
        asked = grid.sample_async([boat])
        for frame in range(1, 40 * FPS + 1):
            grid.step(1.0 / FPS)
            depth, surface, vx, vy = asked.result()[0]           # asked last frame: back by now
            boat = boat + np.array([vx, vy]) / grid.params.cell_size / FPS
            if boat[0] > grid.nx - 2:
                print(f"t = {frame / FPS:4.1f} s  the boat reaches the sea")
                break
            asked = grid.sample_async([boat])
            if frame % (5 * FPS) == 0:
                print(f"t = {frame / FPS:4.1f} s  boat at ({boat[0]:5.2f}, {boat[1]:4.2f}), "
                      f"{np.hypot(vx, vy):.2f} m/s on water {depth:.2f} m deep")


if __name__ == "__main__":
    main()
