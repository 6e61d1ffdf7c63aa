"""What bandwidth GL compute reaches on this device: copy kernels of several shapes, in one process.

The water benchmarks divide by a copy kernel's bandwidth; this script checks that kernel against
other ways of copying (wider loads per invocation, 2D images) and, when PyTorch is installed, against a
device copy through CUDA in the same process, so the GL ceiling is known and not assumed. With
nvidia-smi on the PATH it also prints the clocks while each copy runs.

    python bench/bandwidth.py --mb 1024
"""
import argparse
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                     # noqa: E402

BUFFER_KERNELS = {
    # name: (element type, elements per invocation, workgroup size)
    "vec4 x1, 256": ("vec4", 1, 256),
    "vec4 x4, 256": ("vec4", 4, 256),
    "vec4 x1, 1024": ("vec4", 1, 1024),
    "float x1, 256": ("float", 1, 256),
    "float x4, 256": ("float", 4, 256),
    "float x1, 1024": ("float", 1, 1024),
    "vec2 x2, 128": ("vec2", 2, 128),
}

BUFFER_SRC = """#version 430
layout(local_size_x = {wg}) in;
layout(std430, binding = 0) restrict readonly buffer Src {{ {t} src[]; }};
layout(std430, binding = 1) restrict writeonly buffer Dst {{ {t} dst[]; }};
uniform int n;
void main() {{
    int base = int(gl_WorkGroupID.x) * {wg} * {per} + int(gl_LocalInvocationID.x);
    for (int k = 0; k < {per}; k++) {{ int i = base + k * {wg}; if (i < n) dst[i] = src[i]; }}
}}
"""

IMAGE_SRC = """#version 430
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0, {fmt}) uniform restrict readonly image2D src;
layout(binding = 1, {fmt}) uniform restrict writeonly image2D dst;
void main() {{ ivec2 c = ivec2(gl_GlobalInvocationID.xy); imageStore(dst, c, imageLoad(src, c)); }}
"""

TEXTURE_SRC = """#version 430
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform sampler2D src;
layout(binding = 1, {fmt}) uniform restrict writeonly image2D dst;
void main() {{ ivec2 c = ivec2(gl_GlobalInvocationID.xy); imageStore(dst, c, texelFetch(src, c, 0)); }}
"""


def clocks():
    if not shutil.which("nvidia-smi"):
        return ""
    out = subprocess.run(["nvidia-smi", "--query-gpu=pstate,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem",
                          "--format=csv,noheader"], capture_output=True, text=True)
    return out.stdout.strip()


def best_time(run, finish, repeats, seconds_for_clocks=0.3, watch_clocks=True):
    """Best wall time of one `run()`; halfway (with `watch_clocks` and nvidia-smi), the clocks while
    the kernel keeps the device busy."""
    best, seen = math.inf, ""
    for i in range(repeats + 2):
        finish()
        t = time.perf_counter()
        run()
        finish()
        best = min(best, time.perf_counter() - t)
        if watch_clocks and i == repeats // 2 and shutil.which("nvidia-smi"):
            proc = subprocess.Popen(["sleep", "0.15"])
            end = time.perf_counter() + seconds_for_clocks
            while time.perf_counter() < end:
                run()
            seen = clocks()
            finish()
            proc.wait()
    return best, seen


def buffer_copy(ctx, megabytes, t="vec4", per=1, wg=256, repeats=10, watch_clocks=True):
    """(GB/s read + write, clocks seen) of a storage-buffer copy, `per` elements of type `t` per
    invocation, workgroups of `wg`."""
    nbytes = megabytes * 2**20
    src, dst = ctx.buffer(reserve=nbytes), ctx.buffer(reserve=nbytes)
    src.clear()
    src.bind_to_storage_buffer(0)
    dst.bind_to_storage_buffer(1)
    n = nbytes // {"float": 4, "vec2": 8, "vec4": 16}[t]
    prog = ctx.compute_shader(BUFFER_SRC.format(t=t, per=per, wg=wg))
    prog["n"].value = n
    groups = -(-n // (wg * per))
    best, seen = best_time(lambda: prog.run(groups), ctx.finish, repeats, watch_clocks=watch_clocks)
    src.release(), dst.release(), prog.release()
    return 2 * nbytes / best / 1e9, seen


BUFFER_TEXTURE_SRC = """#version 430
layout(local_size_x = 256) in;
layout(binding = 0) uniform samplerBuffer src;
layout(std430, binding = 1) restrict writeonly buffer Dst {{ float dst[]; }};
uniform int n;
void main() {{ int i = int(gl_GlobalInvocationID.x); if (i < n) dst[i] = texelFetch(src, i).r; }}
"""


def buffer_texture_copy(ctx, megabytes, repeats=10, watch_clocks=True):
    """(GB/s read + write, clocks seen) of a float copy between storage buffers that reads through an r32f
    buffer texture of the source (texelFetch, the texture path: hydro._native.BufferViews) and writes as a
    storage buffer, one float per invocation, 256 wide: how a tile kernel reading its flows as buffer
    textures would (tried on the water tile kernel: docs/benchmarks-log.md). None where the context cannot
    make buffer textures through moderngl's loader."""
    from hydro import _native
    nbytes = megabytes * 2**20
    n = min(nbytes // 4, 2**27)                   # GL guarantees buffer textures of 2^16 texels; NVIDIA 2^27
    values = np.arange(n, dtype=np.float32)
    src, dst = ctx.buffer(values.tobytes()), ctx.buffer(reserve=4 * n)
    views = _native.BufferViews.create(ctx, [src], 0)
    if views is None:
        src.release(), dst.release()
        return None
    views.bind_texture(0, src)
    dst.bind_to_storage_buffer(1)
    prog = ctx.compute_shader(BUFFER_TEXTURE_SRC.format())
    prog["n"].value = n
    best, seen = best_time(lambda: prog.run(-(-n // 256)), ctx.finish, repeats, watch_clocks=watch_clocks)
    copied = np.array_equal(np.frombuffer(dst.read(), np.float32), values)
    views.release(), src.release(), dst.release(), prog.release()
    if not copied:
        raise RuntimeError("buffer_texture_copy: the copy does not match its source")
    return 2 * 4 * n / best / 1e9, seen


def image_copy(ctx, megabytes, fmt="rgba32f", repeats=10, watch_clocks=True, fetch=False):
    """(GB/s read + write, clocks seen) of an image-to-image copy in 16x16 workgroups; with `fetch`
    the copy reads with texelFetch (the texture path) and writes with imageStore."""
    comps = {"r32f": 1, "rgba32f": 4}[fmt]
    w = int(math.sqrt(megabytes * 2**20 // (4 * comps))) // 16 * 16
    a, b = ctx.texture((w, w), comps, dtype="f4"), ctx.texture((w, w), comps, dtype="f4")
    if fetch:
        a.use(0)
    else:
        a.bind_to_image(0, read=True, write=False)
    b.bind_to_image(1, read=False, write=True)
    prog = ctx.compute_shader((TEXTURE_SRC if fetch else IMAGE_SRC).format(fmt=fmt))
    best, seen = best_time(lambda: prog.run(w // 16, w // 16), ctx.finish, repeats, watch_clocks=watch_clocks)
    a.release(), b.release(), prog.release()
    return 2 * w * w * 4 * comps / best / 1e9, seen


def gl_copies(ctx, megabytes, repeats):
    results = {f"buffer {name}": buffer_copy(ctx, megabytes, t, per, wg, repeats)
               for name, (t, per, wg) in BUFFER_KERNELS.items()}
    for fmt in ("r32f", "rgba32f"):
        results[f"image {fmt} 16x16"] = image_copy(ctx, megabytes, fmt, repeats)
        results[f"texelFetch {fmt} to image, 16x16"] = image_copy(ctx, megabytes, fmt, repeats, fetch=True)
    texture_copy = buffer_texture_copy(ctx, megabytes, repeats)
    if texture_copy is not None:
        results["buffer texture (texelFetch) to buffer, float x1, 256"] = texture_copy
    return results


def torch_copy(megabytes, repeats):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    n = megabytes * 2**20 // 4
    a = torch.zeros(n, device="cuda")
    b = torch.empty_like(a)
    best, seen = best_time(lambda: b.copy_(a), torch.cuda.synchronize, repeats)
    return 2 * n * 4 / best / 1e9, seen


def main():
    ap = argparse.ArgumentParser(description="GL copy bandwidth")
    ap.add_argument("--mb", type=int, default=128, help="megabytes per buffer")
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    ctx = hydro.create_context()
    print("GL_RENDERER:", ctx.info["GL_RENDERER"], "| GL_VERSION:", ctx.info["GL_VERSION"])
    print(f"idle clocks: {clocks()}")
    print("| copy | GB/s (read + write) | pstate, sm MHz, mem MHz, max sm, max mem while running |")
    print("|---|---|---|")
    for name, (gbs, seen) in gl_copies(ctx, args.mb, args.repeats).items():
        print(f"| GL {name} | {gbs:.0f} | {seen} |")
    t = torch_copy(args.mb, args.repeats)
    if t:
        print(f"| CUDA torch copy_ | {t[0]:.0f} | {t[1]} |")
    ctx.release()


if __name__ == "__main__":
    main()
