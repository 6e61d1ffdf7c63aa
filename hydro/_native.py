"""GL calls moderngl has no method for, made through ctypes with moderngl's own function loader
(`gl_functions`; EGL, GLX or WGL as the context was made); callers fall back where it fails.

- `loaded_function()` looks a GL function up once per context; `flush()` (glFlush) hands queued passes
  to the GPU; `copy_texture()` copies a texture on the GPU (glCopyImageSubData).
- `FencedReadback` reads small results (a grid's volume and deepest water) without stalling: a
  buffer read waits for every pass queued so far, so results are copied into a persistently mapped
  ring and fenced, and the CPU takes the newest one the GPU has finished.
- `BufferViews` gives storage buffers r32f buffer-texture views (`imageBuffer`), which llvmpipe loads
  faster than storage buffers.
- `current_context()` asks the window system which GL context is current (hydro._owner's check).
"""
from __future__ import annotations

import ctypes
import sys
import weakref

import moderngl

from ._gl import HydroGLError

__all__ = ["loaded_function", "flush", "copy_texture", "gl_functions", "FencedReadback", "BufferViews",
           "current_context"]

_loaded: "weakref.WeakKeyDictionary[moderngl.Context, dict]" = weakref.WeakKeyDictionary()


def loaded_function(ctx, name: str, restype, argtypes):
    """GL function `name` through moderngl's loader, looked up once per context; None where missing."""
    per_ctx = _loaded.setdefault(ctx, {})
    if name not in per_ctx:
        fns = gl_functions(ctx, {name: (restype, argtypes)})
        per_ctx[name] = fns[name] if fns else None
    return per_ctx[name]


FLUSH = True               # hydro.smoke and packed water calls submit queued passes at points of a step
                           # (off: bench/smoke.py --no-flush)


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
    # glcontext's contexts (standalone, or made by moderngl.create_context(standalone=...)) and the
    # DefaultLoader that moderngl.create_context() takes for a window's context both have
    # load_opengl_function; older glcontext contexts only `load`
    loader = getattr(ctx.mglo, "_context", None)
    load = getattr(loader, "load_opengl_function", None) or getattr(loader, "load", None)
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


FENCE_SIGNATURES = {
    "glFenceSync": (ctypes.c_void_p, [ctypes.c_uint, ctypes.c_uint]),
    "glClientWaitSync": (ctypes.c_uint, [ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint64]),
    "glDeleteSync": (None, [ctypes.c_void_p]),
}


class Fences:
    """A fence per slot of a readback ring (glFenceSync, GL 3.2): `set(slot)` fences the commands queued
    so far, replacing the slot's last fence; `done(slot)` asks it (flushing, so it gets there), without
    waiting unless given a timeout; `release()` deletes them. `gl` holds FENCE_SIGNATURES' functions (gl_functions)."""

    def __init__(self, gl, slots: int):
        self.gl, self.fences = gl, [None] * slots

    def set(self, slot: int) -> None:
        if self.fences[slot] is not None:
            self.gl["glDeleteSync"](self.fences[slot])
        self.fences[slot] = self.gl["glFenceSync"](GL_SYNC_GPU_COMMANDS_COMPLETE, 0)

    def done(self, slot: int, timeout_ns: int = 0) -> bool:
        result = self.gl["glClientWaitSync"](self.fences[slot], GL_SYNC_FLUSH_COMMANDS_BIT, timeout_ns)
        if result == GL_WAIT_FAILED:
            raise HydroGLError("glClientWaitSync failed on a readback fence")
        return result in (GL_ALREADY_SIGNALED, GL_CONDITION_SATISFIED)

    def release(self) -> None:
        for fence in self.fences:
            if fence is not None:
                self.gl["glDeleteSync"](fence)
        self.fences = [None] * len(self.fences)


class FencedReadback:
    """A ring of `slots` records of `size` bytes, persistently mapped, each filled by a GPU copy and
    fenced. `push(buffer, seq)` queues a copy of the buffer's first `size` bytes into slot seq % slots;
    `newest(oldest)` returns (bytes, seq) of the newest pushed record the GPU has finished with seq >=
    `oldest`, waiting for record `oldest` only when none of them is done yet; `record(seq)` waits for
    that record and returns it; `done(seq)` says whether it is finished, without waiting. Reading it is a memcpy:
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
        **FENCE_SIGNATURES,
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
        self._fences, self._seqs, self._pointer = Fences(gl, slots), [None] * slots, None
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
        gl["glBindBuffer"](GL_COPY_READ_BUFFER, buffer.glo)
        gl["glBindBuffer"](GL_COPY_WRITE_BUFFER, self._name)
        gl["glCopyBufferSubData"](GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, slot * self.size, self.size)
        gl["glBindBuffer"](GL_COPY_READ_BUFFER, 0)
        gl["glBindBuffer"](GL_COPY_WRITE_BUFFER, 0)
        self._fences.set(slot)
        self._seqs[slot] = seq
        gl["glFlush"]()

    def _done(self, slot, timeout_ns=0) -> bool:
        return self._fences.done(slot, timeout_ns)

    def newest(self, oldest: int):
        """(bytes, seq) of the newest finished record with seq >= oldest; waits for `oldest` if none is."""
        pushed = sorted((seq, slot) for slot, seq in enumerate(self._seqs) if seq is not None and seq >= oldest)
        if not pushed or pushed[0][0] != oldest:
            raise ValueError(f"oldest: record {oldest} is not in the ring (it holds {sorted(self._seqs, key=str)})")
        for seq, slot in reversed(pushed):
            if self._done(slot):
                return self._read(slot), seq
        seq, slot = pushed[0]
        while not self._done(slot):     # poll: a wait with a timeout may sleep the whole timeout
            pass
        return self._read(slot), seq

    def record(self, seq: int) -> bytes:
        """The bytes of record `seq`, waited for (polled, as newest() does) if the GPU is not done."""
        slot = self._slot(seq)
        while not self._done(slot):
            pass
        return self._read(slot)

    def done(self, seq: int) -> bool:
        """Whether the GPU has finished record `seq` (its bytes can be read without waiting); never waits."""
        return self._done(self._slot(seq))

    def _slot(self, seq: int) -> int:
        slot = seq % self.slots
        if self._seqs[slot] != seq:
            raise ValueError(f"seq: record {seq} is not in the ring (it holds {sorted(self._seqs, key=str)})")
        return slot

    def _read(self, slot) -> bytes:
        return ctypes.string_at(self._pointer + slot * self.size, self.size)

    def release(self) -> None:
        gl = self._gl
        self._fences.release()
        self._seqs = [None] * self.slots
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


def image_units(ctx) -> int:
    """The context's GL_MAX_IMAGE_UNITS (moderngl's info leaves it out); 0 where the loader lacks the call."""
    gl = gl_functions(ctx, {"glGetIntegerv": (None, [ctypes.c_uint, ctypes.POINTER(ctypes.c_int)])})
    if gl is None:
        return 0
    count = ctypes.c_int(0)
    gl["glGetIntegerv"](GL_MAX_IMAGE_UNITS, ctypes.byref(count))
    return count.value


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
        if gl is None or image_units(ctx) < units:
            return None
        return cls(gl, buffers)

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


_CURRENT = {}          # glcontext backend module -> its "current context" function, or None


def current_context(ctx):
    """The handle of the GL context current on this thread, asked of the window system moderngl made
    `ctx` through (EGL or GLX); None where that cannot be asked (another platform or backend)."""
    return current_function(ctx)()


def current_function(ctx):
    """A function of no arguments that returns current_context(ctx)."""
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
    return _no_context if fn is None else fn


def _no_context():
    return None
