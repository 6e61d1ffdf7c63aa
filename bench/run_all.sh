#!/usr/bin/env bash
# The runs docs/benchmarks.md reports, one after another on one machine; text and JSON under $1
# (default bench-out/). PYTHON picks the interpreter (default python3).
#     bench/run_all.sh /tmp/results
set -u
out=${1:-bench-out}
py=${PYTHON:-python3}
mkdir -p "$out"
run() { local name=$1; shift; echo "## $*" | tee "$out/$name.txt"; "$py" "$@" 2>&1 | tee -a "$out/$name.txt"; }
date -u +"%Y-%m-%d %H:%M UTC" | tee "$out/date.txt"
run gpu_check bench/gpu_check.py
run bandwidth bench/bandwidth.py --mb 1024
run water bench/water.py --sizes 256 512 1024 4096 --calls 1 4 64 --seconds 0.25 --copy-mb 512 --json "$out/water.json"
run water_kernels bench/water.py --sizes 256 512 1024 4096 --calls 1 4 64 --seconds 0.25 --copy-mb 512 --kernels cells fused blocked
run water_inertia bench/water.py --sizes 512 4096 --calls 4 64 --seconds 0.25 --copy-mb 64 --inertia --manning 0.03
run game_calls bench/game_calls.py
run replay bench/replay.py --size 512 --frames 240
run peers bench/peers/run.py --sizes 256 512 1024 4096 --steps 400
run smoke bench/smoke.py --sizes 256 512 1024 2048 --steps 30
run smoke_1e3 bench/smoke.py --sizes 1024 --steps 30 --configs 1e-3 --conserve both
run smoke_source bench/smoke.py --sizes 1024 --steps 20 --scene source
run smoke_profile bench/smoke.py --sizes 1024 --profile --configs 1e-3
run smoke_open_top bench/smoke.py --sizes 1024 --steps 20 --open-top --configs 1e-3 1e-4
run smoke_stream bench/smoke.py --sizes 1024 --stream --configs "2 cycles" --tile-shapes 64x32/32x32 64x32/32x32/16x32
run demo_512 bench/demo.py --size 512 --substeps 4
date -u +"%Y-%m-%d %H:%M UTC" | tee -a "$out/date.txt"
