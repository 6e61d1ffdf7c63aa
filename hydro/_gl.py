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
- `PingPong` holds the two textures of a pass that reads one and writes the other.
GL calls moderngl has no method for (fences, buffer textures, glFlush) are in hydro._native; the
lifetime of grids (release, context checks, guarded attributes) in hydro._owner.
"""
from __future__ import annotations

import re
import sys
import weakref
from importlib import resources

import moderngl

__all__ = ["create_context", "require_compute", "ShaderError", "HydroGLError", "program", "dispatch",
           "BINDINGS", "PingPong", "device_kind"]

REQUIRED_VERSION = 430          # compute shaders and image load/store
FRAGMENT_VERSION = 330          # the water grids' fragment backend (hydro.water_fragment): GL 3.3 core and up
PRECISE_VERSION = 410           # its GLSL is 4.10 (macOS's); older contexts compile it as 3.30 (_for_context)


class HydroGLError(RuntimeError):
    """The OpenGL context cannot run hydro (too old, or no compute shaders)."""


class ShaderError(RuntimeError):
    """A hydro shader failed to compile or link; the message has the file, defines and a numbered listing."""


def create_context(*, require: int | None = None, backend: str | None = None) -> moderngl.Context:
    """A standalone (windowless) OpenGL context for hydro: GL 4.3 with compute shaders where the driver
    has it, else GL 3.3 or later (macOS: 4.1), on which the water grids run their fragment backend
    (hydro.water_fragment), which hydro.render.Renderer draws, and SmokeGrid says it needs 4.3.
    `require` (e.g. 430) refuses anything older.

    On Linux EGL is tried first, so this works on servers and CI machines with no display
    (Mesa's llvmpipe gives GL 4.5 on the CPU; NVIDIA's driver gives the GPU). `backend` forces one.
    Raises `HydroGLError` naming the version and renderer found when GL < 3.3 (or < `require`).
    """
    if require is not None and (isinstance(require, bool) or not isinstance(require, int) or require < FRAGMENT_VERSION):
        raise ValueError(f"require: expected None or an int >= {FRAGMENT_VERSION} (GL 3.3), got {require!r}")
    least = require or FRAGMENT_VERSION
    attempts = [backend] if backend else (["egl", None] if sys.platform.startswith("linux") else [None])
    errors = []
    for attempt in attempts:
        base = {"backend": attempt} if attempt else {}
        ctx = None
        # the best first: 4.3 (or what is required), then 3.3 and up, then anything only to name what is there
        for want in dict.fromkeys((max(least, REQUIRED_VERSION), least, None)):
            try:
                ctx = moderngl.create_standalone_context(**base, **({"require": want} if want else {}))
                break
            except Exception as exc:  # noqa: BLE001 - every backend failure is reported below
                errors.append(f"{attempt or 'default'}: {exc}")
        if ctx is None:
            continue
        if ctx.version_code < least:
            info, version = ctx.info, ctx.version_code
            ctx.release()
            raise HydroGLError(
                f"hydro needs OpenGL {least // 100}.{least % 100 // 10} at least; this context is OpenGL "
                f"{version // 100}.{version % 100 // 10} on '{info.get('GL_RENDERER', '?')}' "
                f"({info.get('GL_VENDOR', '?')})")
        return ctx
    raise HydroGLError("could not create an OpenGL context: " + "; ".join(errors))


def has_compute(ctx) -> bool:
    """Whether `ctx` runs GL 4.3 compute shaders (else the water grids take their fragment backend)."""
    return ctx.version_code >= REQUIRED_VERSION


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
            f"macOS stops at OpenGL 4.1: there (and on any GL 3.3 core context) WaterGrid and HexWaterGrid run as "
            f"fragment passes, which hydro.render.Renderer draws; SmokeGrid cannot run.")
    _checked.add(ctx)


# ---------------------------------------------------------------------------------------------- shaders

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)
_IDENT = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"


def _shader_root():
    """The shaders/ beside the hydro package imported (a source tree: a clone, a worktree, a checkout on
    PYTHONPATH, even where another tree's hydro is installed, editable or not), else `hydro.shaders`
    (a wheel)."""
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent / "shaders"
    if (root / "common" / "bindings.glsl").is_file():
        return root
    return resources.files("hydro.shaders")


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


def _for_context(ctx, text: str) -> str:
    """GLSL 4.10 text (a drawing or fragment-backend stage) as `ctx` compiles it: below GL 4.1 as GLSL 3.30,
    which has everything it uses but `precise`: that comes with GL_ARB_gpu_shader5 where the driver has
    it, else the sums it guards may be reordered (docs/design.md, "The fragment backend")."""
    if ctx.version_code >= PRECISE_VERSION or not text.startswith("#version 410"):
        return text
    precise = ("#extension GL_ARB_gpu_shader5 : require" if "GL_ARB_gpu_shader5" in ctx.extensions
               else "#define precise")
    return text.replace("#version 410", "#version 330\n" + precise, 1)


def program(ctx: moderngl.Context, name: str, defines: dict | None = None, fragment: str | None = None,
            fragment_defines: dict | None = None):
    """The program for shader file `name`, compiled once per context: a compute program, or with
    `fragment` a vertex (`name`, with `defines`) + fragment (with `fragment_defines`) program."""
    cache = _programs.setdefault(ctx, {})
    key = (name, fragment, tuple(sorted((defines or {}).items())), tuple(sorted((fragment_defines or {}).items())))
    prog = cache.get(key)
    if prog is None:
        files = [(name, defines)] + ([(fragment, fragment_defines)] if fragment else [])
        stages = [(file, _for_context(ctx, source(file, asked))) for file, asked in files]
        try:
            if fragment:
                prog = ctx.program(vertex_shader=stages[0][1], fragment_shader=stages[1][1])
            else:
                prog = ctx.compute_shader(stages[0][1])
        except Exception as exc:  # moderngl.Error carries the driver's log
            listing = "\n".join(f"{file}\n" * bool(fragment) + "\n".join(
                f"{i:4d}  {line}" for i, line in enumerate(text.splitlines(), 1)) for file, text in stages)
            names = " + ".join(file for file, _ in stages)
            asked = {**(defines or {}), **(fragment_defines or {})}
            raise ShaderError(f"{names} (defines {asked}) failed to compile:\n{exc}\n{listing}") from None
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
    uniforms, each a Python call into moderngl, and most are the same every call); programs are shared
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
            prog.extra["dict"] = None
        except KeyError:
            if not declares(prog, name):
                raise KeyError(f"uniform {name!r} is not declared in this shader") from None
            inactive.add(name)
            continue
        if cacheable:
            last[name] = value
        else:
            last.pop(name, None)


def set_uniform_dict(prog, values: dict) -> None:
    """set_uniforms(prog, **values), skipped where `values` is the very dict this program got last and
    nothing was written to it since (a grid's step() hands the same model uniforms every call)."""
    if prog.extra.get("dict") is values:
        return
    set_uniforms(prog, **values)
    prog.extra["dict"] = values


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


def device_kind(ctx) -> str:
    """"cpu" for a software rasteriser (llvmpipe, softpipe, SwiftShader), else "gpu": which measured
    tuning a grid takes (hydro.water_plan.Tuning.for_device)."""
    renderer = ctx.info.get("GL_RENDERER", "").lower()
    return "cpu" if any(name in renderer for name in ("llvmpipe", "softpipe", "swiftshader")) else "gpu"


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
