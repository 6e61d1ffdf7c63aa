"""The demo's pyglet windows' common base: a GL 4.3 core context shared with moderngl, or one clear
error where the machine cannot give one (an old driver; macOS, which stops at 4.1).

Importing this module imports pyglet.window, which opens the display.
"""
from __future__ import annotations

import moderngl
import pyglet
from pyglet import gl

import hydro

ADVICE = ("hydro needs OpenGL 4.3 compute shaders: update the graphics driver, or use Mesa (llvmpipe gives 4.5 "
          "on the CPU); macOS stops at 4.1. --headless renders offscreen where EGL gives 4.3.")


class GLUnavailable(hydro.HydroGLError):
    """This machine cannot give a window a GL 4.3 core context."""


class GL43Window(pyglet.window.Window):
    """A pyglet window on a GL 4.3 core context (double-buffered, 24-bit depth) whose moderngl context
    is `ctx`. Raises GLUnavailable, saying what pyglet or moderngl found, where there is none."""

    def __init__(self, *args, **kwargs):
        config = gl.Config(major_version=4, minor_version=3, forward_compatible=True, double_buffer=True,
                           depth_size=24)
        try:
            super().__init__(*args, config=config, **kwargs)
        except (pyglet.window.NoSuchConfigException, gl.ContextException) as exc:
            raise GLUnavailable(f"this machine cannot open an OpenGL 4.3 core window (pyglet: {exc}). "
                                f"{ADVICE}") from None
        try:
            self.ctx = moderngl.create_context(require=430)
        except Exception as exc:  # noqa: BLE001 - moderngl raises plain Exception/ValueError here
            self.close()
            raise GLUnavailable(f"the window's OpenGL context is below 4.3 ({exc}). {ADVICE}") from None
