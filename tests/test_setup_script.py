"""scripts/setup.sh's detection and install plan, on machines made of a fake PATH: an ldconfig whose cache
lists what the machine "has", a python3 with or without venv, Xvfb or not, and apt-get, dnf or pacman.
The script is sourced (its functions, not its main) in a bash whose PATH holds only those fakes and the
few tools the functions use. The real run is CI's: `.ci/run` runs `scripts/setup.sh test` itself."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "setup.sh"
TOOLS = ("grep", "awk", "tr", "sed", "find", "cat", "dirname")
CACHE = {   # what `ldconfig -p` prints for each library, as on a Debian machine
    "libEGL.so.1": "\tlibEGL.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libEGL.so.1",
    "libGL.so.1": "\tlibGL.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libGL.so.1",
    "libfontconfig.so.1": "\tlibfontconfig.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libfontconfig.so.1",
}


def _executable(path, text):
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)


@pytest.fixture
def machine(tmp_path):
    """make(libraries=..., venv=True, commands=(), uid=1000, font=True, python=True) -> run(bash code),
    which returns the CompletedProcess of that code run with the script's functions on that machine."""
    def make(libraries=tuple(CACHE), venv=True, commands=(), uid=1000, font=True, python=True):
        home = Path(tempfile.mkdtemp(dir=tmp_path))
        bin_ = home / "bin"
        bin_.mkdir()
        for tool in TOOLS:
            (bin_ / tool).symlink_to(shutil.which(tool))
        # lines of other libraries, one with a name that only starts like a wanted one
        cache = ["\tlibEGL_mesa.so.0 (libc6,x86-64) => /x", "\tlibGL.so.1.7.0-extra (libc6,x86-64) => /x"]
        _executable(bin_ / "ldconfig", "cat <<'EOF'\n" + "\n".join(cache + [CACHE[lib] for lib in libraries]) + "\nEOF\n")
        if python:
            _executable(bin_ / "python3", f'case "$2" in *ensurepip*) exit {0 if venv else 1};; esac\n'
                                          f'exec {sys.executable} "$@"\n')
        _executable(bin_ / "id", f"echo {uid}\n")
        for command in commands:
            _executable(bin_ / command, "exit 0\n")
        fonts = home / "fonts"
        (fonts / "truetype").mkdir(parents=True)
        if font:
            (fonts / "truetype" / "DejaVuSans.ttf").write_bytes(b"\0")

        def run(code):
            env = {"PATH": str(bin_), "HOME": str(home)}
            script = f'source "{SCRIPT}"; FONT_DIRS=("{fonts}"); {code}'
            return subprocess.run(["/bin/bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
        return run
    return make


def test_the_script_parses():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0


def test_a_machine_with_everything_misses_nothing(machine):
    result = machine(commands=("Xvfb", "xauth"))("missing test")
    assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr


def test_a_bare_machine_misses_each_thing_by_name(machine):
    result = machine(libraries=(), venv=False, font=False)("missing test")
    assert result.stdout.split() == ["venv", "egl", "gl", "fontconfig", "font", "xvfb", "xauth"], result.stderr
    assert machine(libraries=("libGL.so.1",))("missing demo").stdout.split() == ["egl", "fontconfig"]
    assert machine(python=False)("missing demo").stdout.split() == ["python"]


@pytest.mark.parametrize("pm, expected", [
    ("apt-get", "libegl1 libegl-mesa0 libgl1-mesa-dri libgl1 libglx-mesa0 fonts-dejavu-core xvfb xauth"),
    ("dnf", "mesa-libEGL mesa-dri-drivers mesa-libGL dejavu-sans-fonts xorg-x11-server-Xvfb xorg-x11-xauth"),
    ("pacman", "libglvnd mesa ttf-dejavu xorg-server-xvfb xorg-xauth"),
])
def test_each_distribution_gets_its_own_packages_each_once(machine, pm, expected):
    run = machine(commands=(pm,))
    assert run("package_manager").stdout.strip() == pm
    assert run(f"packages {pm} egl gl font xvfb xauth").stdout.strip() == expected
    venv = run(f"packages {pm} venv").stdout.strip()
    assert venv == {"apt-get": "python3-venv", "dnf": "python3", "pacman": "python"}[pm]


@pytest.mark.parametrize("uid, prefix", [(1000, "sudo "), (0, "")])
def test_the_install_runs_through_sudo_unless_root(machine, uid, prefix):
    run = machine(uid=uid)
    apt = run("install_command apt-get libegl1 xvfb").stdout.strip()
    assert apt == (f"{prefix}apt-get update -qq && {prefix}env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                   f"libegl1 xvfb")
    assert run("install_command dnf mesa-libEGL").stdout.strip() == f"{prefix}dnf install -y mesa-libEGL"
    assert run("install_command pacman mesa").stdout.strip() == f"{prefix}pacman -S --needed --noconfirm mesa"


def test_without_a_package_manager_or_sudo_it_says_what_to_install(machine):
    result = machine()("install_system egl xvfb")
    assert result.returncode == 1
    assert "no apt-get, dnf or pacman" in result.stderr and "libEGL.so.1" in result.stderr and "Xvfb" in result.stderr
    result = machine(commands=("dnf",))("install_system mesa")
    assert result.returncode == 1 and "as root run: dnf install -y mesa-libEGL mesa-libGL mesa-dri-drivers" in \
        result.stderr, result.stderr


def test_a_bad_argument_is_refused(machine):
    result = subprocess.run(["bash", str(SCRIPT), "tests"], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ))
    assert result.returncode == 2 and "expected 'demo' (the default) or 'test', got 'tests'" in result.stderr
