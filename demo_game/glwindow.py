"""The demo's pyglet windows' common base: a core context shared with moderngl, the newest of the
versions a window takes (GL 4.3 with compute shaders; the water scene also GL 4.1, as on macOS, and 3.3,
where hydro runs the water as fragment passes), or one clear error where the machine gives none of them.

Importing this module imports pyglet.window, which opens the display.
"""
from __future__ import annotations

import moderngl
import pyglet
from pyglet import gl

import hydro

ADVICE = ("hydro needs OpenGL 4.3 compute shaders for everything, or 3.3 for the water alone (macOS stops at "
          "4.1): update the graphics driver, or use Mesa (llvmpipe gives 4.5 on the CPU). --headless renders "
          "offscreen where EGL gives a context.")


class GLUnavailable(hydro.HydroGLError):
    """This machine cannot give a window a core context of a version it takes."""


class GLWindow(pyglet.window.Window):
    """A pyglet window on a core context (double-buffered, 24-bit depth) of the first of VERSIONS the
    machine gives, whose moderngl context is `ctx`. Raises GLUnavailable, saying what pyglet or moderngl
    found, where there is none."""

    VERSIONS = ((4, 3),)            # (major, minor), best first

    def __init__(self, *args, **kwargs):
        names = " or ".join(f"{major}.{minor}" for major, minor in self.VERSIONS)
        for i, (major, minor) in enumerate(self.VERSIONS):
            config = gl.Config(major_version=major, minor_version=minor, forward_compatible=True,
                               double_buffer=True, depth_size=24)
            try:
                super().__init__(*args, config=config, **kwargs)
                break
            except (pyglet.window.NoSuchConfigException, gl.ContextException) as exc:
                if i + 1 == len(self.VERSIONS):
                    raise GLUnavailable(f"this machine cannot open an OpenGL {names} core window (pyglet: "
                                        f"{exc}). {ADVICE}") from None
        least = min(100 * major + 10 * minor for major, minor in self.VERSIONS)
        try:
            self.ctx = moderngl.create_context(require=least)
        except Exception as exc:  # noqa: BLE001 - moderngl raises plain Exception/ValueError here
            self.close()
            raise GLUnavailable(f"the window's OpenGL context is below {names} ({exc}). {ADVICE}") from None
