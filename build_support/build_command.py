"""The strict build as a command: the project's root, the switches the Makefile exports, and the
``mkdocs build`` command line. One home for ``make check-cache`` (``check_cache.py``) and the
tests' and benchmarks' tooling (``testkit``), which import it; nothing in the build does.
Standard library only: the numeric tests also run where only jax, numpy and pytest are
installed."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The project's root: the folder of ``mkdocs.yml``."""

BUILD_ENV = {
    "NO_MKDOCS_2_WARNING": "1",
    "NBCONVERT_DISABLE_CONFIG_EXPORTERS": "1",
    "OPENBLAS_THREAD_TIMEOUT": "4",
}
"""The switches the Makefile exports to every build (see there why each is set)."""


def build_command(config: Path, site_dir: Path) -> list[str]:
    """The strict build of ``config`` into ``site_dir``, with this interpreter's mkdocs."""
    command = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    return [*command, "-f", str(config), "-d", str(site_dir)]
