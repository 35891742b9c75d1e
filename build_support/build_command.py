"""The strict build as a command: the project's root, the switches every build runs with, the
builder, and the ``mkdocs build`` command line. The Makefile exports ``BUILD_ENV`` from here
(through ``make_vars.py``); ``make check-cache``
(``caching/check_cache.py``) and the tests' and benchmarks' tooling (``testkit``) import it.
Standard library only: the Makefile runs it before the virtual environment exists, and the
numeric tests also run where only jax, numpy and pytest are installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .section import ROOT

__all__ = [
    "BUILDER",
    "BUILD_ENV",
    "CACHE_DIR_ENV",
    "FRESH_ENV",
    "ROOT",
    "build_command",
    "run_build",
]

BUILDER = "mkdocs"
"""The builder every build runs with unless told otherwise: ``mkdocs``, or ``properdocs`` (the
maintained fork of MkDocs 1.6; ``make build BUILDER=properdocs``). The Makefile reads it here
(through ``make_vars.py``); switching is changing it (see README)."""

BUILD_ENV = {
    "NO_MKDOCS_2_WARNING": "1",
    # nbconvert (loaded by mkdocs-jupyter) otherwise builds every exporter it knows, PDF and Qt
    # included, just to list their names in its help: 0.3-0.5 s of every build. A documented switch.
    "NBCONVERT_DISABLE_CONFIG_EXPORTERS": "1",
    # Timed comparisons take turns between numpy and JAX; OpenBLAS threads that spin ~0.1 s after
    # each numpy call would slow whichever comes next (see benchmarks/throughput.py). Sleep at once.
    "OPENBLAS_THREAD_TIMEOUT": "4",
}
"""The switches every build runs with: exported by the Makefile, set by check-cache and testkit."""

FRESH_ENV = "FRESH"
"""Sets the build's ``fresh`` setting (mkdocs.yml reads it): ``make build FRESH=1``."""
CACHE_DIR_ENV = "COURSE_CACHE_DIR"
"""Sets the build's ``cache_dir`` setting (mkdocs.yml reads it): the store's folder."""


def build_command(
    config: Path, site_dir: Path, builder: str = BUILDER, python: str = sys.executable
) -> list[str]:
    """The strict build of ``config`` into ``site_dir``, with ``python``'s (default: this
    interpreter's) ``builder``: ``mkdocs``, or ``properdocs`` (``BUILDER=properdocs``)."""
    command = [python, "-m", builder, "build", "--strict"]
    return [*command, "-f", str(config), "-d", str(site_dir)]


def run_build(
    config: Path,
    site_dir: Path,
    env: dict[str, str],
    timeout: float | None = None,
    builder: str = BUILDER,
    python: str = sys.executable,
) -> subprocess.CompletedProcess[str]:
    """Run that build in ``config``'s folder, with ``BUILD_ENV`` and ``env`` over this process's
    environment; what it printed is returned, not shown."""
    full_env = {**os.environ, **BUILD_ENV, **env}
    command = build_command(config, site_dir, builder, python)
    return subprocess.run(
        command, cwd=config.parent, env=full_env, capture_output=True, text=True, timeout=timeout
    )
