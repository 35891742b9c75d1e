"""The support matrix, read from its one home, pyproject.toml: the Pythons (every Python 3 that
``requires-python`` accepts), the systems (``[tool.course] systems`` and ``gpu-systems``, as uv
names them), the jax and numpy each Python and system must get (the ``[project] dependencies``
whose environment markers hold there), uv's resolution of a requirement for one of them, and
the CPython interpreters of the matrix found on this machine.

The tests resolve the wheel on every target (tests/test_support_matrix.py) and install it on
every Python found here (tests/test_reader_pythons.py).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from build_support.publishing.wheel_build import supported_pythons

from .project import ROOT

UV = str(Path(sys.executable).with_name("uv"))

# How each system, named as uv's ``--python-platform`` names it, reads in environment markers.
MARKERS_OF_SYSTEM = {
    "x86_64-manylinux_2_28": ("linux", "Linux", "x86_64", "posix"),
    "aarch64-manylinux_2_28": ("linux", "Linux", "aarch64", "posix"),
    "aarch64-apple-darwin": ("darwin", "Darwin", "arm64", "posix"),
    "x86_64-pc-windows-msvc": ("win32", "Windows", "AMD64", "nt"),
}


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _course() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["course"]


def requires_python() -> str:
    """``requires-python`` of pyproject.toml: the Pythons the wheel says it installs on."""
    return _project()["requires-python"]


def pythons() -> list[str]:
    """Every Python of the matrix, oldest first (``3.11`` ...)."""
    return supported_pythons(requires_python())


def systems() -> list[str]:
    """The systems the CPU line installs on (``[tool.course] systems``)."""
    return list(_course()["systems"])


def gpu_systems() -> list[str]:
    """The systems the GPU line installs on (``[tool.course] gpu-systems``)."""
    return list(_course()["gpu-systems"])


def marker_environment(python: str, system: str) -> dict[str, str]:
    """The environment markers of CPython ``python`` on ``system``."""
    if system not in MARKERS_OF_SYSTEM:
        raise KeyError(f"{system}: add how it reads in environment markers to MARKERS_OF_SYSTEM")
    sys_platform, platform_system, machine, os_name = MARKERS_OF_SYSTEM[system]
    return {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "sys_platform": sys_platform,
        "platform_system": platform_system,
        "platform_machine": machine,
        "os_name": os_name,
    }


def expected_pins(python: str, system: str) -> dict[str, str]:
    """What ``python`` on ``system`` must get: each ``[project] dependencies`` pin whose marker
    holds there (name -> version); an assertion error where a name gets none or two."""
    environment = marker_environment(python, system)
    pins: dict[str, list[str]] = {}
    for requirement in map(Requirement, _project()["dependencies"]):
        if requirement.marker is None or requirement.marker.evaluate(environment):
            [spec] = requirement.specifier
            assert spec.operator == "==", f"pyproject.toml pins {requirement} with {spec.operator}"
            pins.setdefault(requirement.name, []).append(spec.version)
    for name in {Requirement(r).name for r in _project()["dependencies"]}:
        assert len(pins.get(name, [])) == 1, f"{name} on {python} {system}: {pins.get(name)}"
    return {name: versions[0] for name, versions in pins.items()}


def resolved(requirement: str, python: str, system: str) -> dict[str, str]:
    """``requirement`` resolved by uv for CPython ``python`` on ``system``: each package's
    version. Nothing is downloaded but metadata (and a wheel given by an http address)."""
    run = resolution(requirement, python, system)
    assert run.returncode == 0, f"{python} {system}: {run.stderr}"
    pins = [line.split("==") for line in run.stdout.splitlines() if "==" in line]
    return {name: version for name, version in pins}


def resolution(requirement: str, python: str, system: str) -> subprocess.CompletedProcess[str]:
    """``uv pip compile`` of ``requirement`` for CPython ``python`` on ``system``, as it ran."""
    target = ["--python-platform", system, "--python-version", python]
    # This Python, named: uv would otherwise look for (and try to download) a ``python``.
    target += ["--python", sys.executable, "--no-python-downloads"]
    return subprocess.run(
        [UV, "pip", "compile", "-", *target, "--no-header", "--no-annotate", "--quiet"],
        input=requirement,
        capture_output=True,
        text=True,
        timeout=300,
    )


def this_system() -> str | None:
    """The system of the matrix this machine is (its ``sys.platform`` and machine), or None."""
    machine = platform.machine()
    for system, (sys_platform, _, machine_marker, _) in MARKERS_OF_SYSTEM.items():
        if system in systems() and (sys_platform, machine_marker) == (sys.platform, machine):
            return system
    return None


def _pyenv_versions() -> Path:
    return Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"


def find_cpython(python: str) -> Path | None:
    """A CPython ``python`` (``3.12``) of this machine, its executable: ``python3.12`` on
    ``PATH`` where it runs (a pyenv shim may not), else the newest of pyenv's versions; None
    where there is none."""
    candidates = [shutil.which(f"python{python}")]
    versions = sorted(_pyenv_versions().glob(f"{python}.*/bin/python{python}"), key=_patch)
    probe = "import platform, sys; print(platform.python_implementation(), *sys.version_info[:2])"
    probe += "; print(sys.executable)"
    for candidate in [c for c in candidates if c] + [str(path) for path in reversed(versions)]:
        try:
            run = subprocess.run(
                [candidate, "-c", probe], capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        lines = run.stdout.splitlines()
        wanted = ["CPython", *python.split(".")]
        if run.returncode == 0 and len(lines) == 2 and lines[0].split() == wanted:
            return Path(lines[1])
    return None


def _patch(executable: Path) -> tuple[int, ...]:
    """A pyenv version's number from its folder (``3.12.1`` -> (3, 12, 1)); 0 where not one."""
    parts = executable.parent.parent.name.split("-")[0].split(".")
    return tuple(int(part) if part.isdigit() else 0 for part in parts)


def where_pythons_are_looked_for(python: str) -> str:
    """Where ``find_cpython`` looked, for a skip's reason."""
    return f"python{python} on PATH, {_pyenv_versions()}/{python}.*"
