"""One place creates the test context (Mesa llvmpipe through EGL on machines with no GPU).
Every test checks that it left no GL error behind. Window tests get a private Xvfb display."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import moderngl
import numpy as np
import pytest

import hydro


@pytest.fixture(scope="session")
def ctx():
    context = hydro.create_context()
    import water_cases                  # the water paths match to the bit on CPU rasterisers only
    water_cases.BITWISE = hydro._gl.device_kind(context) == "cpu"
    yield context
    context.release()


@pytest.fixture(autouse=True)
def _no_gl_errors(request):
    if "ctx" not in request.fixturenames:
        yield
        return
    context = request.getfixturevalue("ctx")
    with context:              # current for this test, whatever window another test left current
        assert context.error == "GL_NO_ERROR", "a GL error was pending before the test"
        yield
        assert context.error == "GL_NO_ERROR", "the test left a GL error"


# What moderngl makes that holds memory or a GL object until release(). Programs are left out: hydro
# keeps one set per context, shared by its grids, for the context's lifetime.
_MADE_BY = ("texture", "texture_array", "texture3d", "texture_cube", "depth_texture", "buffer", "framebuffer",
            "simple_framebuffer", "renderbuffer", "depth_renderbuffer", "vertex_array", "simple_vertex_array",
            "sampler", "query", "scope")


@pytest.fixture
def gl_objects(monkeypatch):
    """Records every moderngl object made during the test (any context); `gl_objects()` lists the
    ones not released yet, as "kind" strings beside the objects."""
    made = []
    for name in _MADE_BY:
        original = getattr(moderngl.Context, name)

        def wrapped(self, *args, _original=original, _name=name, **kwargs):
            obj = _original(self, *args, **kwargs)
            made.append((_name, obj))
            return obj
        monkeypatch.setattr(moderngl.Context, name, wrapped)

    def live():
        return [(name, obj) for name, obj in made if type(obj.mglo).__name__ != "InvalidObject"]
    return live


def _count_calls(monkeypatch, targets):
    """A one-item list counting, from now on, calls of the methods `targets` names ((class, names))."""
    count = [0]

    def counting(method):
        def counted(self, *args, **kwargs):
            count[0] += 1
            return method(self, *args, **kwargs)
        return counted

    for cls, names in targets:
        for name in names:
            monkeypatch.setattr(cls, name, counting(getattr(cls, name)))
    return count


@pytest.fixture
def reads(monkeypatch):
    """A one-item list counting syncs from now on: Buffer.read calls and waits for fenced records."""
    from hydro import _native
    return _count_calls(monkeypatch, ((moderngl.Buffer, ("read",)), (_native.FencedReadback, ("newest", "record"))))


@pytest.fixture
def gpu_work(monkeypatch):
    """A one-item list counting, from now on, every call that runs or waits for GPU work: compute
    dispatches, texture and buffer reads and writes, buffer copies, glFinish, and the waits for the
    residual checks' fenced records."""
    from hydro import _native
    return _count_calls(monkeypatch, (
        (moderngl.ComputeShader, ("run",)), (moderngl.Texture, ("read", "write")),
        (moderngl.Buffer, ("read", "write", "clear")), (moderngl.Context, ("finish", "copy_buffer")),
        (_native.FencedReadback, ("newest", "record"))))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(scope="session")
def xvfb_display():
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        if os.environ.get("CI"):
            pytest.fail("Xvfb is not installed (Debian: apt-get install xvfb xauth)")
        pytest.skip("Xvfb is not installed (Debian: apt-get install xvfb xauth)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen([xvfb, "-displayfd", str(write_fd), "-screen", "0", "1280x720x24", "-nolisten", "tcp",
                             "+extension", "GLX"], pass_fds=(write_fd,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        number = f.readline().strip()
    if not number:
        proc.kill()
        pytest.fail("Xvfb did not start")
    yield f":{number}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def window_report(xvfb_display):
    """Runs a window test's file as a script in a child process on the Xvfb display (pyglet's options
    are per process, and its GLX context must not mix with the EGL context the other tests share) and
    returns the JSON report the script prints last."""
    def run(script):
        env = dict(os.environ, DISPLAY=xvfb_display)
        result = subprocess.run([sys.executable, str(script)], cwd=Path(__file__).resolve().parents[1], env=env,
                                capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        return json.loads(result.stdout.strip().splitlines()[-1])
    return run
