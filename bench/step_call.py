"""Where a WaterGrid.step() call's time goes, beyond its substeps: the settle pass, the volume /
deepest-water reduction queued at the end of each call, and how the next call gets it.

For each grid: wall time per call of back-to-back `step(dt, substeps=s)` calls as a game makes them,
as hydro does it (the previous call's stats through the fenced ring, no wait), with a plain buffer
read instead (which waits for the GPU to drain), and with the reduction skipped as well, which leaves
the substeps alone; GL timer queries around each pass; and how long a 16-byte buffer read waits when
40 substeps were queued after the pass that filled it (still bound, or copied to a buffer no pass
uses): on the H200 it waits for all of them, which is why step() reads through fences.

    python bench/step_call.py --sizes 2048 4096 --kinds square hex
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hydro                                     # noqa: E402
from hydro import _gl, water                     # noqa: E402
from bench.water import scene                    # noqa: E402


def gpu_us(ctx, fn, repeats=10):
    """GPU time of fn() in µs (GL timer query), mean over `repeats` calls recorded back to back."""
    fn()
    ctx.finish()
    q = ctx.query(time=True)
    with q:
        for _ in range(repeats):
            fn()
    return q.elapsed / 1e3 / repeats


def wall_ms_per_call(ctx, g, h, substeps, calls=20):
    g.step(h * substeps, substeps=substeps)
    ctx.finish()
    t = time.perf_counter()
    for _ in range(calls):
        g.step(h * substeps, substeps=substeps)
    ctx.finish()
    return (time.perf_counter() - t) / calls * 1e3


def probe(ctx, kind, n, records):
    water.STATS_RECORDS = records
    cls = hydro.HexWaterGrid if kind == "hex" else hydro.WaterGrid
    terrain, depth = scene(n, kind)
    g = cls(ctx, terrain, water=depth, friction=0.02)
    h = 0.5 * g.max_stable_dt()
    out = {"walk": g._stats_walk, "records": g._tiles}
    t = time.perf_counter()                       # warm up: the first calls on a new grid run slow
    while time.perf_counter() - t < 1.0:
        g.step(h, substeps=1)
        ctx.finish()
    for _ in range(2):                                    # twice each, interleaved
        for s in (1, 4):
            out.setdefault(f"call_{s}", []).append(wall_ms_per_call(ctx, g, h, s))
        g._planning_stats = lambda: (g._read_stats(), 0)  # a plain read: waits for the GPU to drain
        for s in (1, 4):
            out.setdefault(f"sync_{s}", []).append(wall_ms_per_call(ctx, g, h, s))
        del g.__dict__["_planning_stats"]
    stats = g._read_stats()
    g._planning_stats = lambda: (stats, 0)                # no reduction either: the substeps (and settle)
    queue = g._queue_stats
    g._queue_stats = lambda edit=True: None
    for s in (1, 4):
        out[f"bare_{s}"] = [wall_ms_per_call(ctx, g, h, s)]
    g._queue_stats = queue
    del g.__dict__["_planning_stats"], g.__dict__["_queue_stats"]

    g._set_step_uniforms(h)
    g._bind_step()
    out["gpu_substeps_1"] = gpu_us(ctx, lambda: g._run_substeps(h, 1))
    out["gpu_substeps_4"] = gpu_us(ctx, lambda: g._run_substeps(h, 4))
    settle = g._programs["settle"]
    out["gpu_settle"] = gpu_us(ctx, lambda: _gl.dispatch(ctx, settle, g.nx, g.ny))
    out["gpu_stats_both"] = gpu_us(ctx, g._queue_stats)
    stats_prog, final = g._programs["stats"], g._programs["stats_final"]
    out["gpu_stats_tiles"] = gpu_us(ctx, lambda: (stats_prog.run(*g._stats_groups, 1), ctx.memory_barrier()))
    out["gpu_stats_final"] = gpu_us(ctx, lambda: (final.run(1, 1, 1), ctx.memory_barrier()))

    out.update(readback_waits(ctx, g, h))
    g.release()
    return out


def readback_waits(ctx, g, h):
    """ms a 16-byte readback waits when 40 substeps were queued after the pass that filled it: a read
    of the stats buffer itself, of a copy of it in a buffer no pass binds, and of the fenced ring."""
    out = {}
    staging = {"copy": ctx.buffer(reserve=16)}
    for name in ("bound", "copy", "fenced"):
        g._queue_stats(edit=False)
        if name in staging:
            ctx.copy_buffer(staging[name], g._stats_buffer)
        g._set_step_uniforms(h)
        g._bind_step()
        g._run_substeps(h, 40)
        t = time.perf_counter()
        if name == "fenced":
            g._readback.newest(g._stats_seq)
        else:
            (staging[name] if name in staging else g._stats_buffer).read()
        out[f"wait_{name}_ms"] = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        ctx.finish()
        out[f"rest_{name}_ms"] = (time.perf_counter() - t) * 1e3
    for buf in staging.values():
        buf.release()
    return out


def main():
    ap = argparse.ArgumentParser(description="hydro: where a step() call's time goes")
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--kinds", nargs="+", default=["square", "hex"])
    ap.add_argument("--records", type=int, nargs="+", default=[water.STATS_RECORDS, 1 << 30],
                    help="STATS_RECORDS values to compare (1<<30: one record per tile)")
    args = ap.parse_args()
    ctx = hydro.create_context()
    print(f"GL_RENDERER: {ctx.info['GL_RENDERER']}  GL_VERSION: {ctx.info['GL_VERSION']}  "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for n in args.sizes:
        for kind in args.kinds:
            for records in args.records:
                r = probe(ctx, kind, n, records)
                ms = {k: "/".join(f"{v:.3f}" for v in r[k]) for k in r if k[:5] in ("call_", "sync_", "bare_")}
                print(f"{kind} {n}² walk {r['walk']} ({r['records']} records): ms/call with 1 and 4 substeps: "
                      f"fenced {ms['call_1']}, {ms['call_4']} | buffer read {ms['sync_1']}, {ms['sync_4']} | "
                      f"substeps alone {ms['bare_1']}, {ms['bare_4']}", flush=True)
                print(f"    GPU µs: 1 substep + settle {r['gpu_substeps_1']:.1f}, 4 + settle {r['gpu_substeps_4']:.1f}, "
                      f"settle {r['gpu_settle']:.1f}, stats {r['gpu_stats_both']:.1f} (tiles {r['gpu_stats_tiles']:.1f}, "
                      f"final {r['gpu_stats_final']:.1f})", flush=True)
                print("    readback waits (ms, then the rest of the 40 substeps): " + ", ".join(
                    f"{k}: {r[f'wait_{k}_ms']:.3f} + {r[f'rest_{k}_ms']:.3f}"
                    for k in ("bound", "copy", "fenced")), flush=True)


if __name__ == "__main__":
    main()
