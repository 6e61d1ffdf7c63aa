"""python -m demo_game [smoke] [options]: the hydro demo.

    python -m demo_game                                   # the window (pyglet, GL 4.3 core, else 4.1, 3.3)
    python -m demo_game --script dig-channel --frames 900 # watch the canonical scenario, then close
    python -m demo_game --headless --frames 600 --script dig-channel --out shot.png
    python -m demo_game --headless --frames 450 --script dam-break --out dam.png
    python -m demo_game --headless --script erode --out erosion.png   # before | after, side by side
    python -m demo_game smoke ...                         # the smoke demo (demo_game/smoke_scene.py)
"""
from __future__ import annotations

import argparse
import math
import os
import sys

import hydro

from .headless import FRAMES as HEADLESS_FRAMES
from .saves import SaveError
from .scripts import SCRIPTS

PROG = "python -m demo_game"
DISTRIBUTION = "hydro-water"                # the name hydro is installed by (import name: hydro)

EPILOG = """\
scenes:
  (none)     the water scene: dig a channel, drain a lake (these options)
  smoke      the smoke and fire scene: python -m demo_game smoke [--preset fire|smoke]
             [--headless --frames N --out FILE.png]

water scene controls:
  left drag                 use the tool
  right drag                orbit the camera
  middle drag, shift+right  pan
  wheel                     zoom
  1 2 3 4 5                 tool: dig, raise, pour water, spring, drain
  [ ]                       brush radius
  R                         rain on/off
  E                         erosion on/off (fresh sediment drawn as silt)
  P or space, N             pause, one step
  H                         square / hex lattice
  C                         remove the springs
  M                         water model: classic pipes / inertia + Manning
  G                         open / close the floodgate on the spillway
  L                         launch the floating log again
  F5, F9                    save, load hydro_world.npz
  Esc                       quit

smoke scene controls:
  left drag                 push the gas along the drag
  right drag (shift: erase) draw obstacles
  1, 2                      smoke preset, fire preset
  C, space, Esc             clear, pause, quit

With no display, the window falls back to --headless (xvfb-run gives a virtual display).
On OpenGL 3.3 to 4.2 (macOS: 4.1) the water scene runs as fragment passes, both models, the water wheel and
erosion with its silt; the smoke scene needs 4.3.
"""


def _number(kind, low=-math.inf, high=math.inf, *, above=None):
    """An argparse type: a finite `kind` (int or float) in [low, high], or greater than `above`."""
    words = {int: "an integer", float: "a number"}[kind]
    if above is not None:
        expected = f"{words} > {above:g}"
    elif high < math.inf:
        expected = f"{words} from {low:g} to {high:g}"
    else:
        expected = f"{words} >= {low:g}" if low > -math.inf else words

    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not math.isfinite(value) or not low <= value <= high or (above is not None and value <= above):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value
    return parse


def _resolution(text):
    """WIDTHxHEIGHT, each from 16 to 8192 pixels."""
    parts = text.lower().split("x")
    try:
        width, height = (int(p) for p in parts)
    except ValueError:
        width = height = None
    if width is None or not (16 <= width <= 8192 and 16 <= height <= 8192):
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT with each from 16 to 8192 (e.g. 1280x720), "
                                         f"got {text!r}")
    return width, height


def _png_path(text):
    """A .png file name in a folder that exists (checked now, not after the run)."""
    folder = os.path.dirname(text) or "."
    if not text.lower().endswith(".png"):
        raise argparse.ArgumentTypeError(f"expected a file name ending in .png, got {text!r}")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"no such folder {folder!r} to write {text!r} in")
    return text


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROG, description="hydro demo: dig a channel, drain a lake.", epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=_number(int, 32, 4096), default=128, help="grid cells per side (default 128)")
    p.add_argument("--seed", type=_number(int, 0), default=7,
                   help="world seed: places and shapes the lake, ridge, valley and hills (default 7)")
    p.add_argument("--hex", action="store_true", help="start on the hex (triangular) lattice")
    p.add_argument("--script", choices=sorted(SCRIPTS), help="play a scripted scenario")
    p.add_argument("--model", choices=["classic", "inertia"], default=None,
                   help="water model: classic pipes, or inertia with Manning's friction (default: classic; "
                        "the dam-break script takes inertia)")
    p.add_argument("--load", metavar="FILE.npz", help="start from a saved world")
    p.add_argument("--erosion", action="store_true",
                   help="start with erosion on: the water carves its bed and lays silt down (E toggles it)")
    p.add_argument("--headless", action="store_true", help="render offscreen (no display needed) and exit")
    p.add_argument("--frames", type=_number(int, 0),
                   help=f"frames to run, then close the window or write the picture (headless default "
                        f"{HEADLESS_FRAMES}, or the script's own; the window runs until closed)")
    p.add_argument("--out", type=_png_path, default="shot.png", help="headless: PNG to write (default shot.png)")
    p.add_argument("--every", type=_number(int, 0), default=0,
                   help="headless: also write every Nth frame as OUT-NNNNN.png")
    p.add_argument("--resolution", type=_resolution, default=(1280, 720),
                   help="headless: WIDTHxHEIGHT (default 1280x720)")
    p.add_argument("--yaw", type=_number(float), help="camera yaw, degrees")
    p.add_argument("--pitch", type=_number(float, 5, 89), help="camera pitch above the horizon, 5 to 89 degrees")
    p.add_argument("--zoom", type=_number(float, above=0), help="camera distance factor (< 1 closer)")
    p.add_argument("--width", type=_number(int, 64, 8192), default=1280, help="window width")
    p.add_argument("--height", type=_number(int, 64, 8192), default=720, help="window height")
    args = p.parse_args(argv)
    if args.load is not None and not os.path.isfile(args.load):
        p.error(f"--load: no such file: {args.load}")
    if args.model is None:
        args.model = SCRIPTS[args.script].MODEL if args.script else "classic"
    return args


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    scene = "smoke" if argv[:1] == ["smoke"] else None
    prog = f"{PROG} smoke" if scene else PROG
    try:
        if scene:
            from . import smoke_scene
            return smoke_scene.main(argv[1:]) or 0
        return _run(parse_args(argv))
    except SaveError as exc:         # --load FILE: a corrupt or foreign file, named with what is wrong
        print(f"{prog}: --load: {exc}", file=sys.stderr)
        return 2
    except hydro.HydroGLError as exc:     # no GL context (GLUnavailable, EGL's), or below 4.3 asked for 4.3's
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "pyglet":
            raise
        print(f"{prog}: the window needs pyglet, which is not installed: pip install '{DISTRIBUTION}[demo]' "
              f"(in a clone of hydro: scripts/setup.sh). --headless needs only hydro.", file=sys.stderr)
        return 1


def _run(args) -> int:
    if args.headless:
        from .headless import run
        return run(args)
    try:
        from .window import run      # importing pyglet.window opens the display
    except Exception as exc:         # noqa: BLE001 - pyglet's display errors share no importable base
        if type(exc).__name__ != "NoSuchDisplayException":
            raise
        print(f"{PROG}: no display to open a window on ({exc}); rendering the scene offscreen to "
              f"{args.out} instead (--headless does this on purpose; xvfb-run gives a virtual display).",
              file=sys.stderr)
        from .headless import run as run_headless
        return run_headless(args)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
