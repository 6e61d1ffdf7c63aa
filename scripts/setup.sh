#!/usr/bin/env bash
# Set up hydro on a Linux machine (Debian/Ubuntu, Fedora, Arch): the system libraries it needs, a
# virtual environment in .venv with hydro installed editable, and the real test of OpenGL: the venv's
# moderngl making a GL 4.3 context with compute shaders through EGL (Mesa's llvmpipe gives 4.5 on the
# CPU where there is no GPU).
#
#   scripts/setup.sh          hydro and the demo's window (pyglet)
#   scripts/setup.sh test     also pytest, and Xvfb and xauth for the window tests
#
# What is missing is asked of the system (the dynamic linker's cache, PATH, python3 itself, and for
# Mesa the EGL context itself), not guessed from file paths, which differ between distributions.
# Missing packages are installed with apt-get, dnf or pacman, through sudo when not run as root: that
# is the one step that needs root, and it is skipped when nothing is missing.
set -euo pipefail

FONT_DIRS=(/usr/share/fonts /usr/local/share/fonts)

# ------------------------------------------------------------------------------- what is missing
# `missing` prints what the system lacks, one of these names a line; `describe` says what each is.
describe() {
    case $1 in
        python)     echo "python3 (Python 3.10 or newer)" ;;
        venv)       echo "Python's venv module with ensurepip" ;;
        egl)        echo "libEGL.so.1 (EGL, for contexts without a window)" ;;
        gl)         echo "libGL.so.1 (OpenGL through GLX, for the window)" ;;
        mesa)       echo "Mesa's EGL and GL drivers (llvmpipe where there is no GPU)" ;;
        fontconfig) echo "libfontconfig.so.1 (the window's text)" ;;
        font)       echo "a TrueType or OpenType font" ;;
        xvfb)       echo "Xvfb (a virtual display for the window tests)" ;;
        xauth)      echo "xauth (for xvfb-run)" ;;
    esac
}

ldconfig_cache() {      # ldconfig is in /sbin, off a user's PATH on Debian
    local ldconfig
    ldconfig="$(command -v ldconfig || echo /sbin/ldconfig)"
    "$ldconfig" -p 2>/dev/null || true
}

has_font() {
    local dir
    for dir in "${FONT_DIRS[@]}"; do
        [ -d "$dir" ] && [ -n "$(find "$dir" -type f \( -iname '*.ttf' -o -iname '*.otf' \) -print -quit)" ] &&
            return 0
    done
    return 1
}

missing() {             # $1: demo or test
    local libs
    libs="$(ldconfig_cache)"
    if ! command -v python3 >/dev/null; then
        echo python
    elif ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
        echo venv
    fi
    grep -q '^[[:space:]]*libEGL\.so\.1 ' <<<"$libs" || echo egl
    grep -q '^[[:space:]]*libGL\.so\.1 ' <<<"$libs" || echo gl
    grep -q '^[[:space:]]*libfontconfig\.so\.1 ' <<<"$libs" || echo fontconfig
    has_font || echo font
    if [ "$1" = test ]; then
        command -v Xvfb >/dev/null || echo xvfb
        command -v xauth >/dev/null || echo xauth
    fi
}

# ----------------------------------------------------------------- each distribution's packages
apt_packages() {        # Debian, Ubuntu
    case $1 in
        python)     echo python3 python3-venv ;;
        venv)       echo python3-venv ;;
        egl)        echo libegl1 libegl-mesa0 libgl1-mesa-dri ;;
        gl)         echo libgl1 libglx-mesa0 libgl1-mesa-dri ;;
        mesa)       echo libegl-mesa0 libglx-mesa0 libgl1-mesa-dri ;;
        fontconfig) echo libfontconfig1 ;;
        font)       echo fonts-dejavu-core ;;
        xvfb)       echo xvfb ;;
        xauth)      echo xauth ;;
    esac
}

dnf_packages() {        # Fedora (its python3 has venv and ensurepip)
    case $1 in
        python|venv) echo python3 ;;
        egl)        echo mesa-libEGL mesa-dri-drivers ;;
        gl)         echo mesa-libGL mesa-dri-drivers ;;
        mesa)       echo mesa-libEGL mesa-libGL mesa-dri-drivers ;;
        fontconfig) echo fontconfig ;;
        font)       echo dejavu-sans-fonts ;;
        xvfb)       echo xorg-x11-server-Xvfb ;;
        xauth)      echo xorg-x11-xauth ;;
    esac
}

pacman_packages() {     # Arch (its python has venv and ensurepip; mesa has every driver)
    case $1 in
        python|venv) echo python ;;
        egl|gl|mesa) echo libglvnd mesa ;;
        fontconfig) echo fontconfig ;;
        font)       echo ttf-dejavu ;;
        xvfb)       echo xorg-server-xvfb ;;
        xauth)      echo xorg-xauth ;;
    esac
}

package_manager() {
    local pm
    for pm in apt-get dnf pacman; do
        command -v "$pm" >/dev/null && { echo "$pm"; return; }
    done
    echo none
}

packages() {            # $1: package manager; then names from `missing`. Each package once, in order.
    local pm=$1 name
    shift
    for name in "$@"; do
        case $pm in
            apt-get) apt_packages "$name" ;;
            dnf) dnf_packages "$name" ;;
            pacman) pacman_packages "$name" ;;
        esac
    done | tr ' ' '\n' | awk 'NF && !seen[$0]++' | tr '\n' ' ' | sed 's/ $//'
}

install_command() {     # $1: package manager; then packages. Prints the command, through sudo unless root.
    local pm=$1 sudo=""
    shift
    [ "$(id -u)" = 0 ] || sudo="sudo "
    case $pm in
        apt-get) echo "${sudo}apt-get update -qq && ${sudo}env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $*" ;;
        dnf) echo "${sudo}dnf install -y $*" ;;
        pacman) echo "${sudo}pacman -S --needed --noconfirm $*" ;;
    esac
}

install_system() {      # names from `missing`: install their packages, or say what to install
    local pm command name
    pm="$(package_manager)"
    if [ "$pm" = none ]; then
        echo "setup: found no apt-get, dnf or pacman; please install:" >&2
        for name in "$@"; do echo "  - $(describe "$name")" >&2; done
        exit 1
    fi
    command="$(install_command "$pm" "$(packages "$pm" "$@")")"
    if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
        echo "setup: these need root and there is no sudo; as root run: ${command#sudo }" >&2
        exit 1
    fi
    echo "setup: missing: $*; installing: $command"
    bash -c "$command" >/dev/null
}

# ------------------------------------------------------------------------------------ the venv
egl_context() {         # the real test of Mesa/EGL: prints the context, or the error, from the venv
    .venv/bin/python -c 'import hydro
ctx = hydro.create_context(backend="egl")
version, renderer = ctx.version_code, ctx.info["GL_RENDERER"]
print(f"OpenGL {version // 100}.{version % 100 // 10} through EGL on {renderer}")' 2>&1
}

main() {
    local extra="${1:-demo}" need report
    case $extra in
        demo|test) ;;
        *) echo "setup: expected 'demo' (the default) or 'test', got '$extra'" >&2; exit 2 ;;
    esac
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    need="$(missing "$extra")"
    # shellcheck disable=SC2086 # one name a word
    [ -z "$need" ] || install_system $need
    if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
        echo "setup: hydro needs Python 3.10 or newer; python3 here is $(python3 -V 2>&1)" >&2
        exit 1
    fi
    .venv/bin/python -m pip --version >/dev/null 2>&1 || python3 -m venv --clear .venv
    .venv/bin/python -m pip install -q --upgrade pip setuptools
    # hydro was distributed as "hydro" before hydro-water: an editable install of it here goes
    if .venv/bin/python -m pip show hydro 2>/dev/null | grep -qx "Editable project location: $PWD"; then
        .venv/bin/python -m pip uninstall -q -y hydro
    fi
    .venv/bin/python -m pip install -q -e ".[$extra]"
    if ! report="$(egl_context)"; then
        echo "setup: no OpenGL 4.3 context through EGL yet (${report##*$'\n'})"
        install_system mesa
        if ! report="$(egl_context)"; then
            echo "setup: still no OpenGL 4.3 context through EGL: $report" >&2
            exit 1
        fi
    fi
    echo "setup: ready ($report); .venv has hydro and its '$extra' extra"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    main "$@"
fi
