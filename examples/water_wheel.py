"""A water wheel in a mill race: a gauge across the race sums what flows through it on the GPU after
every substep; reading it costs no wait (its values are one step() call late), so a game can turn
its wheel and its millstone by it every frame.

    python examples/water_wheel.py
"""
import numpy as np

import hydro

FPS, HEAD = 30, 0.8                 # frames a second; the wheel's drop (m), for its power


def main():
    ctx = hydro.create_context()
    y, x = np.mgrid[0:9, 0:48]
    race = np.where(abs(y - 4) > 1, 4.0, 2.0 - 0.01 * x)            # a race 3 cells wide
    race[3:6, 24:] -= HEAD                                            # the drop the wheel sits on
    with hydro.WaterGrid(ctx, race, manning=0.03) as grid:
        grid.set_boundary("left", "inflow", 1.5, span=(3, 6))         # the mill stream, m^3/s
        grid.set_boundary("right", "level", 0.0)
        wheel = grid.add_gauge((24.5, 2.5), (24.5, 6.5))              # drawn toward +y: counts flow toward +x
        for frame in range(1, 60 * FPS + 1):
            grid.step(1.0 / FPS)
            if frame % (10 * FPS) == 0:
                power = 1000.0 * 9.81 * wheel.discharge * HEAD / 1000.0
                print(f"t = {wheel.sim_time:5.2f} s  {wheel.discharge:5.3f} m^3/s through the wheel, "
                      f"{wheel.volume:6.1f} m^3 so far: {power:4.1f} kW at its {HEAD} m drop")


if __name__ == "__main__":
    main()
