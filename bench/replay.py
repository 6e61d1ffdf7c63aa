"""Same inputs, same calls, same bits: a game's replay on this machine's GL. Runs a scene (a basin filling
from a river, a dam breaking into it, a brush now and then) for a number of frames of step(dt) with the
substeps chosen automatically, and prints a hash of the water and flows and the substeps taken; run it
in two processes (or with --wait, which lets the GPU finish after every frame) and compare the lines.

    python bench/replay.py --size 256 --frames 240 && python bench/replay.py --size 256 --frames 240 --wait
"""
import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                     # noqa: E402


def replay(ctx, n, frames, kind="square", wait=False, **model):
    cls = hydro.HexWaterGrid if kind == "hex" else hydro.WaterGrid
    y, x = np.mgrid[0:n, 0:n] / n
    terrain = 2.0 * x + 0.5 * np.sin(9 * y)
    water = np.where(x < 0.2, 2.0, 0.0)
    g = cls(ctx, terrain, water=water, friction=0.02, **model)
    g.set_boundary("left", "inflow", 0.05 * n, span=(n // 4, n // 2))
    substeps = 0
    for frame in range(frames):
        substeps += g.step(1 / 60)
        if frame % 60 == 30:
            g.add_water(n // 2, n // 2, n // 16, 0.5 * n)
        if wait:
            ctx.finish()
            g.volume()
    digest = hashlib.sha256()
    for array in (g.water, g.flow_x, g.flow_y) + ((g.flow_z,) if kind == "hex" else ()):
        digest.update(array.tobytes())
    g.release()
    return substeps, digest.hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--frames", type=int, default=240)
    ap.add_argument("--wait", action="store_true", help="let the GPU finish after every frame")
    args = ap.parse_args()
    ctx = hydro.create_context()
    print("GL_RENDERER", ctx.info["GL_RENDERER"])
    for kind in ("square", "hex"):
        for model in ({}, {"inertia": True, "manning": 0.03}):
            substeps, digest = replay(ctx, args.size, args.frames, kind, args.wait, **model)
            print(f"{kind} {model or 'classic'}: {substeps} substeps, water and flows {digest}", flush=True)


if __name__ == "__main__":
    main()
