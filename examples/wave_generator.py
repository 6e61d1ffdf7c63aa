"""A wave generator: a paddle at the left end of a flume 1 m deep, a "level" boundary whose height
swings every frame, sends waves down it; three points sampled every frame time their arrival, and the
waves run at the shallow-water speed sqrt(g h).

    python examples/wave_generator.py
"""
import math

import numpy as np

import hydro

FPS, PERIOD, HEIGHT = 30, 3.0, 0.1          # frames a second; the paddle's period (s) and half stroke (m)
PROBES = np.array([[20.0, 4.0], [50.0, 4.0], [80.0, 4.0]])


def main():
    ctx = hydro.create_context()
    bed = np.full((8, 120), -1.0)                                   # a flume 1 m deep, 120 m long
    with hydro.WaterGrid(ctx, bed, water=-bed, friction=0.0) as grid:
        arrived = [None] * len(PROBES)
        for frame in range(36 * FPS):
            grid.set_boundary("left", "level", HEIGHT * math.sin(2.0 * math.pi * frame / FPS / PERIOD))
            grid.step(1.0 / FPS)
            surface = grid.sample(PROBES)[:, 1]
            for k, eta in enumerate(surface):
                if arrived[k] is None and abs(eta) > 0.3 * HEIGHT:
                    arrived[k] = grid.sim_time
                    print(f"the waves reach x = {PROBES[k, 0]:.0f} m at t = {grid.sim_time:5.2f} s")
        speed = (PROBES[-1, 0] - PROBES[0, 0]) / (arrived[-1] - arrived[0])
        print(f"wave speed {speed:.2f} m/s; sqrt(g h) = {math.sqrt(9.81 * 1.0):.2f} m/s")
        print(f"volume {grid.volume():.3f} ledger {grid.ledger()['expected']:.3f}")


if __name__ == "__main__":
    main()
