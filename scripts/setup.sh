#!/usr/bin/env bash
# Set up hydro on a fresh Linux machine: the system OpenGL libraries (Mesa's llvmpipe gives GL 4.5
# with compute shaders on the CPU when there is no GPU), then a virtual environment in .venv with
# hydro installed editable. `scripts/setup.sh test` also installs the test extras and Xvfb.
set -euo pipefail
cd "$(dirname "$0")/.."
extra="${1:-demo}"

need=()
ldconfig -p | grep -q 'libEGL.so.1' || need+=(libegl1)
ldconfig -p | grep -q 'libEGL_mesa.so.0' || need+=(libegl-mesa0)
ldconfig -p | grep -q 'libGL.so.1' || need+=(libgl1)
ldconfig -p | grep -q 'libGLX_mesa.so.0' || need+=(libglx-mesa0)
ls /usr/lib/*/dri/swrast_dri.so >/dev/null 2>&1 || need+=(libgl1-mesa-dri)
# the pyglet window and its HUD text
ldconfig -p | grep -q 'libGLU.so.1' || need+=(libglu1-mesa)
ldconfig -p | grep -q 'libfontconfig.so.1' || need+=(libfontconfig1)
ls /usr/share/fonts/truetype/dejavu >/dev/null 2>&1 || need+=(fonts-dejavu-core)
if [ "$extra" = test ]; then
    command -v Xvfb >/dev/null || need+=(xvfb)
    command -v xauth >/dev/null || need+=(xauth)
fi
if [ ${#need[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null; then
        sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
        echo "installing system packages: ${need[*]}"
        $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
    else
        echo "please install OpenGL/EGL (Mesa) libraries: ${need[*]}" >&2
        exit 1
    fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip setuptools wheel
.venv/bin/python -m pip install -q -e ".[$extra]"
