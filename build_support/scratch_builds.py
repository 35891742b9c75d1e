"""Fresh builds of scratch copies of the project, each with a virtual environment of its own:
what ``make check-pythons`` (``check_pythons.py``) and ``make check-upstream``
(``check_upstream.py``) build and compare.

A copy is ``caching/check_cache.py``'s (the sources, no caches or builds, node_modules linked).
Its environment is made by the uv pinned in the build's own virtual environment, with any
Python (``uv venv --python``): synced from ``uv.lock`` (``locked``), or installed by the caller.
Its build is the strict build (``build_command.py``) with that environment's Python (or another),
``FRESH=1`` and an empty store of its own: nothing is reused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .build_command import CACHE_DIR_ENV, FRESH_ENV, run_build
from .caching.check_cache import fresh_copy

__all__ = ["Scratch", "run_uv", "uv_executable", "versions"]

# A uv run from the build's environment must not act on that environment, or on its project.
_OUTER = ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH", "CONDA_PREFIX")


def uv_executable() -> str:
    """The uv pinned in the build's virtual environment, else the one on ``PATH``."""
    uv = Path(sys.executable).with_name("uv")
    return str(uv) if uv.exists() else "uv"


def run_uv(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The pinned uv, in ``cwd``; what it printed is returned, not shown."""
    env = {k: v for k, v in os.environ.items() if k not in _OUTER}
    command = [uv_executable(), *arguments]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def versions(python: str) -> dict[str, str]:
    """Every distribution installed in ``python``'s environment, with its version (editable
    installs, and the pip that ``python -m venv`` seeds and ``uv venv`` does not, left out)."""
    frozen = run_uv("pip", "freeze", "--python", python, cwd=Path(python).parent).stdout
    pairs = (line.split("==", 1) for line in frozen.splitlines() if "==" in line)
    return {name.lower(): version for name, version in pairs if name.lower() != "pip"}


class Scratch:
    """A copy of ``project`` in ``folder``, with a virtual environment of ``python`` in it."""

    def __init__(self, project: Path, folder: Path, python: str) -> None:
        self.root = fresh_copy(project, folder)
        self.venv = self.root / ".venv"
        self.python = str(self.venv / "bin" / "python")
        made = run_uv("venv", "--quiet", "--python", python, str(self.venv), cwd=self.root)
        if made.returncode != 0:
            raise RuntimeError(f"uv venv --python {python} failed:\n{made.stderr[-2000:]}")

    def locked(self) -> subprocess.CompletedProcess[str]:
        """Sync the environment from the copy's ``uv.lock``, every default group."""
        return run_uv("sync", "--locked", "--python", self.python, cwd=self.root)

    def pip_install(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        """``uv pip install ARGUMENTS`` into the environment."""
        return run_uv("pip", "install", "--python", self.python, *arguments, cwd=self.root)

    def build(self, site: Path, python: str | None = None) -> subprocess.CompletedProcess[str]:
        """The strict build of the copy into ``site``, fresh (an empty store beside ``site``),
        with the environment's Python, or ``python`` (whose own environment then builds it)."""
        env = {"PYTHONPATH": str(self.root), FRESH_ENV: "1"}
        env[CACHE_DIR_ENV] = str(site.parent / f"{site.name}-cache")
        return run_build(self.root / "mkdocs.yml", site, env, python=python or self.python)
