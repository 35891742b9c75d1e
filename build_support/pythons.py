"""The CPythons of the support matrix found on this machine: the Makefile builds with the newest
(``make check-pythons`` also with the oldest, ``check_pythons.py``).

    python3 -m build_support.pythons newest|oldest|list

The matrix is ``requires-python`` in ``pyproject.toml`` (its one home): every ``3.N`` from its
lower bound to below its upper bound. A version is found as ``python3.N`` on ``PATH``, else in
pyenv's versions folder (``$PYENV_ROOT``, default ``~/.pyenv``): pyenv's shims run only the
versions pyenv has selected, and fail for the others (a shim is tried after pyenv's own copy).
Each candidate is run once to check that it is a CPython of that version; what is printed is its
own ``sys.executable``. Standard library only: the Makefile runs it (``make_vars.py``) before
any virtual environment exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from .section import ROOT

__all__ = ["find", "first", "found", "matrix"]

_BOUND = re.compile(r"(>=|<)\s*3\.(\d+)")
_PROBE = "import sys; print(sys.implementation.name, *sys.version_info[:2], sys.executable)"


def matrix(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """Every minor version ``requires-python`` allows, oldest first: ``["3.11", ...]``."""
    spec = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["requires-python"]
    bounds = dict((operator, int(minor)) for operator, minor in _BOUND.findall(spec))
    if set(bounds) != {">=", "<"}:
        raise ValueError(f"requires-python {spec!r}: expected a >=3.N and a <3.M bound")
    return [f"3.{minor}" for minor in range(bounds[">="], bounds["<"])]


def _candidates(version: str) -> list[str]:
    """Where to look, in order: ``python3.N`` on ``PATH``, then pyenv's own copies, newest patch
    first; a pyenv shim on ``PATH`` comes after them (each probe through a shim starts a shell
    and pyenv: 0.3 s of every ``make``)."""
    on_path = shutil.which(f"python{version}")
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    installed = sorted(
        (pyenv / "versions").glob(f"{version}.*/bin/python{version}"),
        key=lambda path: [int(part) for part in re.findall(r"\d+", path.parts[-3])],
        reverse=True,
    )
    shim = on_path is not None and Path(on_path).parent == pyenv / "shims"
    first, last = ([], [on_path]) if shim else ([on_path] if on_path else [], [])
    return [*first, *map(str, installed), *last]


def _executable(candidate: str, version: str) -> str | None:
    """``candidate``'s own executable if it runs and is CPython ``version``, else None."""
    try:
        result = subprocess.run(
            [candidate, "-c", _PROBE], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    name, major, minor, executable = [*result.stdout.split(maxsplit=3), "", "", "", ""][:4]
    if result.returncode == 0 and (name, f"{major}.{minor}") == ("cpython", version):
        return executable.strip()
    return None


def find(version: str) -> str | None:
    """The executable of CPython ``version`` on this machine, or None."""
    runs = (_executable(candidate, version) for candidate in _candidates(version))
    return next(filter(None, runs), None)


def found(versions: list[str] | None = None) -> dict[str, str]:
    """``{version: executable}`` for each version of the matrix this machine has, oldest first."""
    pythons = ((version, find(version)) for version in versions or matrix())
    return {version: executable for version, executable in pythons if executable}


def first(versions: list[str]) -> str | None:
    """The executable of the first of ``versions`` this machine has (and only that is run)."""
    return next(filter(None, map(find, versions)), None)


def main(argv: list[str]) -> int:
    if argv not in (["newest"], ["oldest"], ["list"]):
        print("usage: python3 -m build_support.pythons newest|oldest|list", file=sys.stderr)
        return 2
    versions = matrix()
    if argv == ["list"]:
        print("\n".join(f"{version} {path}" for version, path in found(versions).items()))
        return 0
    executable = first(versions[::-1] if argv == ["newest"] else versions)
    if executable is None:
        print(f"no CPython of {', '.join(versions)} found", file=sys.stderr)
        return 1
    print(executable)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
