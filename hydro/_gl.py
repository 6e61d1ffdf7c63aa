"""OpenGL plumbing shared by every grid: contexts, shader loading, dispatch, ping-pong images.

- `create_context()` makes a standalone GL >= 4.3 context (EGL on Linux, so it works with no display);
  `require_compute()` checks a caller's context once and names what it found when it falls short.
- Shaders are files under the `hydro.shaders` package (the repository's `shaders/`), one pass each.
  `#include "common/x.glsl"` pulls in shared snippets, each once per program; defines are inserted after
  `#version` and are strict: a define the shader never mentions is an error, not a silent no-op.
  One program is compiled per (context, file, defines) and cached for the context's lifetime.
- Binding points live once, in `shaders/common/bindings.glsl`; Python reads them from there.
- `dispatch()` rounds the group count up (edge cells are never dropped) and puts a memory barrier
  after every pass, so the next pass, and whoever samples the textures next, sees the result.
- `FencedReadback` reads small results (a grid's volume and deepest water) without stalling: a
  buffer read waits for every pass queued so far, so results are copied into a persistently mapped
  ring and fenced, and the CPU takes the newest one the GPU has finished.
- `BufferViews` gives storage buffers r32f buffer-texture views (`imageBuffer`), which llvmpipe loads
  faster than storage buffers. moderngl has neither fences nor buffer textures: both call GL through
  ctypes with moderngl's own function loader (`gl_functions`), and callers fall back where it fails.
"""
from __future__ import annotations

import ctypes
import dataclasses
import difflib
import re
import sys
import weakref
from importlib import resources

import moderngl

from . import _validate

__all__ = ["create_context", "require_compute", "ShaderError", "HydroGLError", "program", "dispatch",
           "BINDINGS", "PingPong", "Owner", "Simulation", "FencedReadback", "BufferViews", "gl_functions",
           "loaded_function", "copy_texture"]

REQUIRED_VERSION = 430          # compute shaders and image load/store


class HydroGLError(RuntimeError):
    """The OpenGL context cannot run hydro (too old, or no compute shaders)."""


class ShaderError(RuntimeError):
    """A hydro shader failed to compile or link; the message has the file, defines and a numbered listing."""


def create_context(*, require: int = REQUIRED_VERSION, backend: str | None = None) -> moderngl.Context:
    """A standalone (windowless) OpenGL context able to run hydro's compute shaders.

    On Linux EGL is tried first, so this works on servers and CI machines with no display
    (Mesa's llvmpipe gives GL 4.5 on the CPU; NVIDIA's driver gives the GPU). `backend` forces one.
    Raises `HydroGLError` naming the version and renderer found when GL < 4.3.
    """
    if not isinstance(require, int) or require < REQUIRED_VERSION:
        raise ValueError(f"require: expected an int >= {REQUIRED_VERSION} (GL 4.3), got {require!r}")
    attempts = [backend] if backend else (["egl", None] if sys.platform.startswith("linux") else [None])
    errors = []
    for attempt in attempts:
        base = {"backend": attempt} if attempt else {}
        ctx = None
        for kwargs in ({**base, "require": require}, base):   # the second only to name what is there
            try:
                ctx = moderngl.create_standalone_context(**kwargs)
                break
            except Exception as exc:  # noqa: BLE001 - every backend failure is reported below
                errors.append(f"{attempt or 'default'}: {exc}")
        if ctx is None:
            continue
        try:
            require_compute(ctx, require)
        except HydroGLError:
            ctx.release()
            raise
        return ctx
    raise HydroGLError("could not create an OpenGL context: " + "; ".join(errors))


_checked: "weakref.WeakSet[moderngl.Context]" = weakref.WeakSet()


def require_compute(ctx, require: int = REQUIRED_VERSION) -> None:
    """Raise once, clearly, if `ctx` cannot run GL 4.3 compute shaders."""
    if not isinstance(ctx, moderngl.Context):
        raise TypeError(f"ctx: expected a moderngl.Context, got {type(ctx).__name__}")
    if ctx in _checked:
        return
    version = ctx.version_code
    if version < require:
        info = ctx.info
        raise HydroGLError(
            f"ctx: hydro needs OpenGL {require // 100}.{require % 100 // 10} with compute shaders; this context is "
            f"OpenGL {version // 100}.{version % 100 // 10} on '{info.get('GL_RENDERER', '?')}' "
            f"({info.get('GL_VENDOR', '?')}). Ask for a core 4.3 context (pyglet: "
            f"gl.Config(major_version=4, minor_version=3, forward_compatible=True)), or use hydro.create_context(). "
            f"macOS stops at OpenGL 4.1 and cannot run hydro.")
    _checked.add(ctx)


# ---------------------------------------------------------------------------------------------- shaders

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)
_IDENT = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"


def _shader_root():
    """`hydro.shaders` when installed (wheel or editable); the repository's shaders/ when hydro is
    imported straight from a source tree on PYTHONPATH."""
    try:
        return resources.files("hydro.shaders")
    except ModuleNotFoundError:
        from pathlib import Path
        root = Path(__file__).resolve().parent.parent / "shaders"
        if not (root / "common" / "bindings.glsl").is_file():
            raise
        return root


def _read(name: str) -> str:
    path = _shader_root().joinpath(name)
    if not path.is_file():
        raise FileNotFoundError(f"shader '{name}' not found in the hydro.shaders package")
    return path.read_text(encoding="utf-8")


def _expand(name: str, seen: tuple[str, ...] = (), done: set | None = None) -> str:
    """`name` with its includes expanded, each file once per program (a second include of a file is
    dropped, as with #pragma once: two snippets may both build on common/grid.glsl)."""
    if name in seen:
        raise ShaderError(f"{name}: include cycle {' -> '.join(seen + (name,))}")
    done = set() if done is None else done
    done.add(name)

    def include(match):
        if match.group(1) in done and match.group(1) not in seen + (name,):
            return "\n"
        return _expand(match.group(1), seen + (name,), done) + "\n"

    return _INCLUDE.sub(include, _read(name))


def source(name: str, defines: dict | None = None) -> str:
    """The full GLSL text of shader file `name` with includes expanded and `defines` inserted."""
    text = _expand(name)
    defines = dict(defines or {})
    for key in defines:
        if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", str(key)):
            raise ValueError(f"defines: {key!r} is not an upper-case GLSL macro name")
        if not re.search(_IDENT.format(key), text):
            raise ValueError(f"defines: shader '{name}' does not use {key!r}")
    lines = text.splitlines()
    if not lines or not lines[0].startswith("#version"):
        raise ShaderError(f"{name}: the first line must be #version")
    block = [f"#define {k} {_glsl_value(v)}" for k, v in sorted(defines.items())]
    return "\n".join([lines[0], *block, *lines[1:]]) + "\n"


def _glsl_value(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    raise TypeError(f"defines: values must be bool, int or float, got {value!r}")


_programs: "weakref.WeakKeyDictionary[moderngl.Context, dict]" = weakref.WeakKeyDictionary()


def program(ctx: moderngl.Context, name: str, defines: dict | None = None, fragment: str | None = None):
    """The program for shader file `name`, compiled once per context: a compute program, or with
    `fragment` a vertex (`name`) + fragment program; `defines` go to the compute or vertex stage."""
    cache = _programs.setdefault(ctx, {})
    key = (name, fragment, tuple(sorted((defines or {}).items())))
    prog = cache.get(key)
    if prog is None:
        stages = [(name, source(name, defines))] + ([(fragment, source(fragment))] if fragment else [])
        try:
            if fragment:
                prog = ctx.program(vertex_shader=stages[0][1], fragment_shader=stages[1][1])
            else:
                prog = ctx.compute_shader(stages[0][1])
        except Exception as exc:  # moderngl.Error carries the driver's log
            listing = "\n".join(f"{file}\n" * bool(fragment) + "\n".join(
                f"{i:4d}  {line}" for i, line in enumerate(text.splitlines(), 1)) for file, text in stages)
            files = " + ".join(file for file, _ in stages)
            raise ShaderError(f"{files} (defines {dict(defines or {})}) failed to compile:\n{exc}\n{listing}") from None
        prog.extra = {"source": "\n".join(text for _, text in stages), "inactive": set(), "values": {}}
        cache[key] = prog
    return prog


def declares(prog, name: str) -> bool:
    """Whether the program's source declares `name` (whether or not the driver kept it)."""
    return re.search(_IDENT.format(name), prog.extra["source"]) is not None


def set_uniforms(prog, **values) -> None:
    """Set uniforms by name. A name the driver optimised away is skipped (and remembered, so the hot
    path does not search the source again); a name absent from the source is a bug and raises. A
    value equal to the one last set on this program is not written again (a step() call sets tens of
    uniforms, ~1.3 µs each through moderngl, and most are the same every call); programs are shared
    by every grid on a context, and so is what they last got."""
    inactive, last = prog.extra["inactive"], prog.extra["values"]
    for name, value in values.items():
        if name in inactive:
            continue
        cacheable = isinstance(value, (bool, int, float, tuple))
        if cacheable and name in last and (last[name] is value or
                                           last[name] == value and type(last[name]) is type(value)):
            continue
        try:
            prog[name].value = value
        except KeyError:
            if not declares(prog, name):
                raise KeyError(f"uniform {name!r} is not declared in this shader") from None
            inactive.add(name)
            continue
        if cacheable:
            last[name] = value
        else:
            last.pop(name, None)


def _parse_bindings() -> dict[str, int]:
    text = _read("common/bindings.glsl")
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"#define\s+(B_[A-Z0-9_]+)\s+(\d+)", text)}


BINDINGS: dict[str, int] = _parse_bindings()

# invocations per side of the 2D passes' workgroups, read from shaders/common/grid.glsl
LOCAL_SIZE = int(re.search(r"#define\s+LOCAL_SIZE\s+(\d+)", _read("common/grid.glsl")).group(1))


def dispatch(ctx: moderngl.Context, prog: moderngl.ComputeShader, nx: int, ny: int = 1,
             local: tuple[int, int] = (LOCAL_SIZE, LOCAL_SIZE)) -> None:
    """Run `prog` over an nx-by-ny domain (groups rounded up; shaders bounds-check), then a barrier."""
    prog.run(-(-nx // local[0]), -(-ny // local[1]), 1)
    ctx.memory_barrier()


_loaded: "weakref.WeakKeyDictionary[moderngl.Context, dict]" = weakref.WeakKeyDictionary()


def loaded_function(ctx, name: str, restype, argtypes):
    """GL function `name` through moderngl's loader, looked up once per context; None where missing."""
    per_ctx = _loaded.setdefault(ctx, {})
    if name not in per_ctx:
        fns = gl_functions(ctx, {name: (restype, argtypes)})
        per_ctx[name] = fns[name] if fns else None
    return per_ctx[name]


FLUSH = True               # hydro.smoke: submit queued passes at points of a step (bench/smoke.py --no-flush)


def flush(ctx) -> None:
    """glFlush: hand the passes queued so far to the GPU now, so it works while Python queues the rest
    (moderngl has no call for it; through its function loader; nothing where that is missing)."""
    if not FLUSH:
        return
    fn = loaded_function(ctx, "glFlush", None, [])
    if fn is not None:
        fn()


GL_TEXTURE_2D = 0x0DE1


def copy_texture(ctx, src: moderngl.Texture, dst: moderngl.Texture) -> None:
    """Copy texture `src` into `dst` (same size and format) on the GPU (glCopyImageSubData, GL 4.3,
    through moderngl's function loader); where the loader is missing, through the CPU."""
    u, i = ctypes.c_uint, ctypes.c_int
    fn = loaded_function(ctx, "glCopyImageSubData", None, [u, u, i, i, i, i, u, u, i, i, i, i, i, i, i])
    if fn is None:
        dst.write(src.read())
        return
    w, h = src.size
    fn(src.glo, GL_TEXTURE_2D, 0, 0, 0, 0, dst.glo, GL_TEXTURE_2D, 0, 0, 0, 0, w, h, 1)
    ctx.memory_barrier()


# GL enums for FencedReadback (OpenGL 4.4 core / ARB_buffer_storage, ARB_sync)
GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER = 0x8F36, 0x8F37
GL_MAP_READ_BIT, GL_MAP_PERSISTENT_BIT, GL_MAP_COHERENT_BIT, GL_CLIENT_STORAGE_BIT = 0x1, 0x40, 0x80, 0x200
GL_SYNC_GPU_COMMANDS_COMPLETE = 0x9117
GL_ALREADY_SIGNALED, GL_TIMEOUT_EXPIRED, GL_CONDITION_SATISFIED, GL_WAIT_FAILED = 0x911A, 0x911B, 0x911C, 0x911D
GL_SYNC_FLUSH_COMMANDS_BIT = 0x1


def gl_functions(ctx, signatures: dict):
    """{name: ctypes function} for `signatures` ({name: (restype, argtypes)}) through the loader of
    moderngl's context (EGL, GLX or WGL as it was made), or None if the loader or a function is missing."""
    load = getattr(getattr(ctx.mglo, "_context", None), "load", None)
    if load is None:
        return None
    kind = ctypes.WINFUNCTYPE if sys.platform == "win32" else ctypes.CFUNCTYPE
    functions = {}
    for name, (restype, argtypes) in signatures.items():
        address = load(name)
        if not address:
            return None
        functions[name] = kind(restype, *argtypes)(address)
    return functions


def device_kind(ctx) -> str:
    """"cpu" for a software rasteriser (llvmpipe, softpipe, SwiftShader), else "gpu": the key of the
    per-kind tuning tables (measured in docs/benchmarks.md)."""
    renderer = ctx.info.get("GL_RENDERER", "").lower()
    return "cpu" if any(name in renderer for name in ("llvmpipe", "softpipe", "swiftshader")) else "gpu"


class FencedReadback:
    """A ring of `slots` records of `size` bytes, persistently mapped, each filled by a GPU copy and
    fenced. `push(buffer, seq)` queues a copy of the buffer's first `size` bytes into slot seq % slots;
    `newest(oldest)` returns (bytes, seq) of the newest pushed record the GPU has finished with seq >=
    `oldest`, waiting for record `oldest` only when none of them is done yet; `record(seq)` waits for
    that record and returns it. Reading it is a memcpy:
    no wait for the passes queued after it (a buffer read, glGetBufferSubData, waits for all of them).

    Needs glBufferStorage (OpenGL 4.4 or ARB_buffer_storage) and moderngl's function loader;
    `FencedReadback.create()` returns None where either is missing, and callers read synchronously."""

    _SIGNATURES = {   # name: (restype, argtypes)
        "glGenBuffers": (None, [ctypes.c_int, ctypes.POINTER(ctypes.c_uint)]),
        "glDeleteBuffers": (None, [ctypes.c_int, ctypes.POINTER(ctypes.c_uint)]),
        "glBindBuffer": (None, [ctypes.c_uint, ctypes.c_uint]),
        "glBufferStorage": (None, [ctypes.c_uint, ctypes.c_ssize_t, ctypes.c_void_p, ctypes.c_uint]),
        "glMapBufferRange": (ctypes.c_void_p, [ctypes.c_uint, ctypes.c_ssize_t, ctypes.c_ssize_t, ctypes.c_uint]),
        "glUnmapBuffer": (ctypes.c_ubyte, [ctypes.c_uint]),
        "glCopyBufferSubData": (None, [ctypes.c_uint, ctypes.c_uint, ctypes.c_ssize_t, ctypes.c_ssize_t,
                                       ctypes.c_ssize_t]),
        "glFenceSync": (ctypes.c_void_p, [ctypes.c_uint, ctypes.c_uint]),
        "glClientWaitSync": (ctypes.c_uint, [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint64]),
        "glDeleteSync": (None, [ctypes.c_void_p]),
        "glFlush": (None, []),
    }

    @classmethod
    def create(cls, ctx, size: int, slots: int = 3):
        """A ring on `ctx`, or None where the context cannot map buffers persistently."""
        if ctx.version_code < 440 and "GL_ARB_buffer_storage" not in ctx.extensions:
            return None
        gl = gl_functions(ctx, cls._SIGNATURES)
        if gl is None:
            return None
        try:
            return cls(gl, size, slots)
        except HydroGLError:          # the driver would not map it: the caller reads synchronously
            return None

    def __init__(self, gl, size, slots):
        self._gl, self.size, self.slots = gl, size, slots
        self._fences, self._seqs, self._pointer = [None] * slots, [None] * slots, None
        name = ctypes.c_uint(0)
        gl["glGenBuffers"](1, ctypes.byref(name))
        self._name = name.value
        flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT
        gl["glBindBuffer"](GL_COPY_WRITE_BUFFER, self._name)
        gl["glBufferStorage"](GL_COPY_WRITE_BUFFER, size * slots, None, flags | GL_CLIENT_STORAGE_BIT)
        self._pointer = gl["glMapBufferRange"](GL_COPY_WRITE_BUFFER, 0, size * slots, flags)
        gl["glBindBuffer"](GL_COPY_WRITE_BUFFER, 0)
        if not self._pointer:
            self.release()
            raise HydroGLError("could not map a readback buffer persistently")

    def push(self, buffer, seq: int) -> None:
        """Queue a copy of `buffer`'s first bytes into slot seq % slots, fenced; flushed so it runs."""
        gl, slot = self._gl, seq % self.slots
        if self._fences[slot] is not None:
            gl["glDeleteSync"](self._fences[slot])
        gl["glBindBuffer"](GL_COPY_READ_BUFFER, buffer.glo)
        gl["glBindBuffer"](GL_COPY_WRITE_BUFFER, self._name)
        gl["glCopyBufferSubData"](GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, slot * self.size, self.size)
        gl["glBindBuffer"](GL_COPY_READ_BUFFER, 0)
        gl["glBindBuffer"](GL_COPY_WRITE_BUFFER, 0)
        self._fences[slot] = gl["glFenceSync"](GL_SYNC_GPU_COMMANDS_COMPLETE, 0)
        self._seqs[slot] = seq
        gl["glFlush"]()

    def _done(self, slot, timeout_ns=0) -> bool:
        result = self._gl["glClientWaitSync"](self._fences[slot], GL_SYNC_FLUSH_COMMANDS_BIT, timeout_ns)
        if result == GL_WAIT_FAILED:
            raise HydroGLError("glClientWaitSync failed on a readback fence")
        return result in (GL_ALREADY_SIGNALED, GL_CONDITION_SATISFIED)

    def newest(self, oldest: int):
        """(bytes, seq) of the newest finished record with seq >= oldest; waits for `oldest` if none is."""
        pushed = sorted((seq, slot) for slot, seq in enumerate(self._seqs) if seq is not None and seq >= oldest)
        if not pushed or pushed[0][0] != oldest:
            raise ValueError(f"oldest: record {oldest} is not in the ring (it holds {sorted(self._seqs, key=str)})")
        for seq, slot in reversed(pushed):
            if self._done(slot):
                return self._read(slot), seq
        seq, slot = pushed[0]
        while not self._done(slot):     # poll: a wait with a timeout may sleep the whole timeout (H200)
            pass
        return self._read(slot), seq

    def record(self, seq: int) -> bytes:
        """The bytes of record `seq`, waited for (polled, as newest() does) if the GPU is not done."""
        slot = seq % self.slots
        if self._seqs[slot] != seq:
            raise ValueError(f"seq: record {seq} is not in the ring (it holds {sorted(self._seqs, key=str)})")
        while not self._done(slot):
            pass
        return self._read(slot)

    def _read(self, slot) -> bytes:
        return ctypes.string_at(self._pointer + slot * self.size, self.size)

    def release(self) -> None:
        gl = self._gl
        for fence in self._fences:
            if fence is not None:
                gl["glDeleteSync"](fence)
        self._fences, self._seqs = [None] * self.slots, [None] * self.slots
        if self._name:
            gl["glBindBuffer"](GL_COPY_WRITE_BUFFER, self._name)
            if self._pointer:
                gl["glUnmapBuffer"](GL_COPY_WRITE_BUFFER)
                self._pointer = None
            gl["glBindBuffer"](GL_COPY_WRITE_BUFFER, 0)
            name = ctypes.c_uint(self._name)
            gl["glDeleteBuffers"](1, ctypes.byref(name))
            self._name = 0


GL_TEXTURE_BUFFER, GL_R32F, GL_READ_ONLY, GL_MAX_IMAGE_UNITS = 0x8C2A, 0x822E, 0x88B8, 0x8F38
GL_TEXTURE0 = 0x84C0


class BufferViews:
    """An r32f buffer-texture view (`imageBuffer` in GLSL) of each of `buffers`, the same storage: a
    pass may read a buffer through its view while other passes bind it as a storage buffer.
    `bind(unit, buffer)` binds the view of `buffer` to image unit `unit` for reading;
    `bind_texture(unit, buffer)` binds it to texture unit `unit` (`samplerBuffer`, read with texelFetch).
    `BufferViews.create()` returns None where moderngl's loader lacks a function or the context has
    fewer than `units` image units."""

    _SIGNATURES = {
        "glGenTextures": (None, [ctypes.c_int, ctypes.POINTER(ctypes.c_uint)]),
        "glDeleteTextures": (None, [ctypes.c_int, ctypes.POINTER(ctypes.c_uint)]),
        "glBindTexture": (None, [ctypes.c_uint, ctypes.c_uint]),
        "glActiveTexture": (None, [ctypes.c_uint]),
        "glTexBuffer": (None, [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint]),
        "glBindImageTexture": (None, [ctypes.c_uint, ctypes.c_uint, ctypes.c_int, ctypes.c_ubyte, ctypes.c_int,
                                      ctypes.c_uint, ctypes.c_uint]),
        "glGetIntegerv": (None, [ctypes.c_uint, ctypes.POINTER(ctypes.c_int)]),
    }

    @classmethod
    def create(cls, ctx, buffers, units: int):
        gl = gl_functions(ctx, cls._SIGNATURES)
        if gl is None:
            return None
        count = ctypes.c_int(0)
        gl["glGetIntegerv"](GL_MAX_IMAGE_UNITS, ctypes.byref(count))
        return cls(gl, buffers) if count.value >= units else None

    def __init__(self, gl, buffers):
        self._gl, self._views = gl, {}
        for buf in buffers:
            name = ctypes.c_uint(0)
            gl["glGenTextures"](1, ctypes.byref(name))
            gl["glBindTexture"](GL_TEXTURE_BUFFER, name.value)
            gl["glTexBuffer"](GL_TEXTURE_BUFFER, GL_R32F, buf.glo)
            self._views[buf.glo] = name.value
        gl["glBindTexture"](GL_TEXTURE_BUFFER, 0)

    def bind(self, unit: int, buffer) -> None:
        self._gl["glBindImageTexture"](unit, self._views[buffer.glo], 0, 0, 0, GL_READ_ONLY, GL_R32F)

    def bind_texture(self, unit: int, buffer) -> None:
        """Bind the view of `buffer` to texture unit `unit` (a `samplerBuffer` read with texelFetch)."""
        self._gl["glActiveTexture"](GL_TEXTURE0 + unit)
        self._gl["glBindTexture"](GL_TEXTURE_BUFFER, self._views[buffer.glo])

    def release(self) -> None:
        for name in self._views.values():
            n = ctypes.c_uint(name)
            self._gl["glDeleteTextures"](1, ctypes.byref(n))
        self._views = {}


class PingPong:
    """Two same-shaped textures: passes read `read` and write `write`, then `swap()`."""

    __slots__ = ("read", "write")

    def __init__(self, read, write):
        self.read, self.write = read, write

    def swap(self) -> None:
        self.read, self.write = self.write, self.read

    def release(self) -> None:
        for tex in (self.read, self.write):
            tex.release()


_CURRENT = {}          # glcontext backend module -> its "current context" function, or None


def current_context(ctx):
    """The handle of the GL context current on this thread, asked of the window system moderngl made
    `ctx` through (EGL or GLX); None where that cannot be asked (another platform or backend)."""
    backend = type(getattr(ctx.mglo, "_context", None)).__module__
    if backend not in _CURRENT:
        library, name = {"egl": ("libEGL.so.1", "eglGetCurrentContext"),
                         "x11": ("libGL.so.1", "glXGetCurrentContext")}.get(backend, (None, None))
        try:
            fn = getattr(ctypes.CDLL(library), name) if library else None
        except (OSError, AttributeError):
            fn = None
        if fn is not None:
            fn.restype, fn.argtypes = ctypes.c_void_p, []
        _CURRENT[backend] = fn
    fn = _CURRENT[backend]
    return None if fn is None else fn()


class Owner:
    """Lifetime of a grid: `release()` frees what `_gpu_objects()` lists, once, and the context too when
    the grid created it; grids are context managers; use after release raises a clear error."""

    _kind = "grid"
    _released = True
    _owns_ctx = False
    _context_handle = None      # the GL context current when it was made (None: not known)

    def _gpu_objects(self):
        raise NotImplementedError

    def _alive(self):
        if self._released:
            raise RuntimeError(f"{self._kind}: used after release()")
        self._check_context()

    def _note_context(self) -> None:
        """Remember the GL context current now, the one this object's GL names live in, where moderngl
        made the context standalone: a game window's context may share its objects with another
        window's (pyglet shares them between its windows), so calls made while that one is current
        work, and are not refused."""
        if getattr(getattr(self.ctx.mglo, "_context", None), "standalone", False):
            self._context_handle = current_context(self.ctx)

    def _check_context(self) -> None:
        """GL calls go to the current context: with another one current they would read its objects and
        overwrite them (GL names coincide between contexts), with no error from the driver."""
        if self._context_handle is not None and current_context(self.ctx) != self._context_handle:
            raise HydroGLError(f"{self._kind}: its GL context is not current (another context was made current "
                               f"since, or none is): make it current first (`with ctx:`, or the game window's "
                               f"switch_to()); GL would otherwise work on the current context's objects")

    def release(self) -> None:
        """Free every GPU resource (idempotent). Programs stay cached with the context."""
        if self._released:
            return
        self._check_context()
        self._released = True
        for obj in self._gpu_objects():
            obj.release()
        if self._owns_ctx:
            self.ctx.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def _not_copied(self, *args):
        """A copy would share the GPU objects (releasing one breaks the other) and the context cannot
        be pickled: both are refused, saying what to save instead."""
        raise TypeError(f"{self._kind}: cannot be copied or pickled: it holds GPU objects of its context. "
                        f"Read its arrays (e.g. water, terrain, flow_x, flow_y, sim_time) and make a new one "
                        f"from them; np.savez writes them to a file")

    __copy__ = __deepcopy__ = __reduce_ex__ = __reduce__ = _not_copied


class Simulation(Owner):
    """A grid that steps: its clock (`sim_time`, `iteration`) and a guard on its attributes. Once the
    grid is made (`_seal()`), a public name can only be set where the class has a property with a
    setter (`water`, `density`, ...), so `grid.frictoin = 0.3` or `grid.friction = 0.3` raises an
    AttributeError that says what is meant instead of silently making an attribute nothing reads.
    A subclass defined outside hydro (a game's own grid with state of its own) is not guarded."""

    _sealed = False
    _sim_time = 0.0
    _iteration = 0

    @property
    def sim_time(self) -> float:
        """Simulated seconds so far; settable (a loaded game restores it), finite and >= 0."""
        return self._sim_time

    @sim_time.setter
    def sim_time(self, value):
        self._alive()
        self._sim_time = _validate.real("sim_time", value, low=0.0)

    @property
    def iteration(self) -> int:
        """Steps (substeps) advanced so far."""
        return self._iteration

    def _seal(self) -> None:
        self._note_context()
        # only hydro's own classes: a game's subclass keeps Python's usual attributes for its own state
        self._sealed = type(self).__module__.split(".")[0] == "hydro"

    def __setattr__(self, name, value):
        if self._sealed and not name.startswith("_"):
            attr = getattr(type(self), name, None)
            if not (isinstance(attr, property) and attr.fset is not None):
                raise AttributeError(self._refusal(name))
        object.__setattr__(self, name, value)

    def _refusal(self, name) -> str:
        cls, kind = type(self), self._kind
        settable = sorted(n for n in dir(cls) if not n.startswith("_") and isinstance(getattr(cls, n), property)
                          and getattr(cls, n).fset is not None)
        params = getattr(self, "params", None)
        fields = [f.name for f in dataclasses.fields(params)] if dataclasses.is_dataclass(params) else []
        if name in fields:
            return (f"{kind}.{name} cannot be set: it is fixed when the grid is made (grid.params.{name} "
                    f"is {getattr(params, name)!r}); make a new {kind} with {name}=... to change it; the attributes "
                    f"that can be set are {', '.join(settable)}")
        if name in dir(cls) or name in self.__dict__:
            what = "a method" if callable(getattr(cls, name, None)) else "read-only"
            return f"{kind}.{name} is {what}; the attributes that can be set are {', '.join(settable)}"
        known = [n for n in dir(cls) if not n.startswith("_")] + fields
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.75)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        return f"{kind} has no attribute {name!r}{hint}; the attributes that can be set are {', '.join(settable)}"
