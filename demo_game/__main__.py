"""python -m demo_game [smoke] [options]: the hydro demo.

    python -m demo_game                                   # the window (pyglet, GL 4.3 core)
    python -m demo_game --script dig-channel              # watch the canonical scenario
    python -m demo_game --headless --frames 600 --script dig-channel --out shot.png
    python -m demo_game smoke ...                         # the smoke demo (demo_game/smoke_scene.py)
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from .scripts import SCRIPTS


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m demo_game", description="hydro demo: dig a channel, drain a lake.")
    p.add_argument("--size", type=int, default=128, help="grid cells per side (default 128)")
    p.add_argument("--seed", type=int, default=7, help="world seed (default 7)")
    p.add_argument("--hex", action="store_true", help="start on the hex (triangular) lattice")
    p.add_argument("--script", choices=sorted(SCRIPTS), help="play a scripted scenario")
    p.add_argument("--load", metavar="FILE.npz", help="start from a saved world")
    p.add_argument("--headless", action="store_true", help="render offscreen (no display needed) and exit")
    p.add_argument("--frames", type=int, default=300, help="headless: frames to run (default 300)")
    p.add_argument("--out", default="shot.png", help="headless: PNG to write (default shot.png)")
    p.add_argument("--every", type=int, default=0, help="headless: also write every Nth frame as OUT-NNNNN.png")
    p.add_argument("--resolution", type=lambda s: tuple(int(v) for v in s.lower().split("x")), default=(1280, 720),
                   help="headless: WIDTHxHEIGHT (default 1280x720)")
    p.add_argument("--yaw", type=float, help="camera yaw, degrees")
    p.add_argument("--pitch", type=float, help="camera pitch, degrees")
    p.add_argument("--zoom", type=float, help="camera distance factor (< 1 closer)")
    p.add_argument("--width", type=int, default=1280, help="window width")
    p.add_argument("--height", type=int, default=720, help="window height")
    args = p.parse_args(argv)
    if args.size < 32:
        p.error("--size must be at least 32")
    if args.frames < 0:
        p.error("--frames must be >= 0")
    if args.load is not None and not os.path.isfile(args.load):
        p.error(f"--load: no such file: {args.load}")
    return args


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "smoke":
        if importlib.util.find_spec("demo_game.smoke_scene") is None:
            print("python -m demo_game smoke: the smoke scene (demo_game/smoke_scene.py) is not part of this "
                  "build yet", file=sys.stderr)
            return 2
        from . import smoke_scene
        return smoke_scene.main(argv[1:]) or 0
    args = parse_args(argv)
    from .saves import SaveError
    try:
        return _run(args)
    except SaveError as exc:         # --load FILE: a corrupt or foreign file, named with what is wrong
        print(f"python -m demo_game: --load: {exc}", file=sys.stderr)
        return 2


def _run(args) -> int:
    if args.headless:
        from .headless import run
        return run(args)
    try:
        from .window import run      # importing pyglet.window opens the display
    except Exception as exc:         # noqa: BLE001 - pyglet's display errors share no importable base
        if type(exc).__name__ != "NoSuchDisplayException":
            raise
        print(f"python -m demo_game: no display to open a window on ({exc}); rendering the scene offscreen to "
              f"{args.out} instead (--headless does this on purpose; xvfb-run gives a virtual display).",
              file=sys.stderr)
        from .headless import run as run_headless
        return run_headless(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
