"""``make check-pythons``: the book computed on the oldest and on the newest Python of the support
matrix found on this machine, side by side; fail on any difference.

    python -m build_support.check_pythons [--project DIR] [--out DIR]

The Pythons are ``pythons.py``'s (``requires-python``, found on ``PATH`` or in pyenv). Each side
is a scratch copy of the project with a virtual environment of its own, synced from ``uv.lock``,
built fresh (``scratch_builds.py``): no cache is reused. Both sites land in ``--out`` (default
``.cache/check-pythons/``, one folder per version) and are compared as ``make check-cache``
compares (``caching/compare.py``: timings by their shape only), the captions that name the
Python, jax or numpy version apart, and the outputs marked varying (a fence's ``varying="yes"``,
a cell's ``varying-output`` tag) masked as there. A difference is named by page, block and
first line.
Fewer than two Pythons of the matrix found: nothing to compare, and it fails, saying so.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import pythons
from .caching.check_cache import project_and_out
from .caching.compare import Varying, differences, without_versions
from .scratch_builds import Scratch


def _side(copy: Scratch, site: Path, version: str) -> list[str]:
    """One Python's environment synced from the lock, then its build: what failed."""
    for step, run in (("uv sync --locked", copy.locked), ("the build", lambda: copy.build(site))):
        result = run()
        if result.returncode != 0:
            return [f"check-pythons: on Python {version}, {step} failed:\n{result.stderr[-4000:]}"]
    return []


def check(project: Path, out: Path, found: dict[str, str]) -> list[str]:
    """Build on the oldest and the newest of ``found`` into ``out``; the differences."""
    if len(found) < 2:
        matrix = ", ".join(pythons.matrix(project / "pyproject.toml"))
        return [f"check-pythons: found {', '.join(found) or 'none'} of {matrix}: need two"]
    versions = list(found)  # oldest first
    oldest, newest = versions[0], versions[-1]
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with (
        tempfile.TemporaryDirectory(prefix="check-pythons-") as scratch,
        ThreadPoolExecutor(max_workers=2) as pool,
    ):
        copies = {v: Scratch(project, Path(scratch) / v, found[v]) for v in (oldest, newest)}
        runs = [pool.submit(_side, copy, out / v, v) for v, copy in copies.items()]
        failed = [line for run in runs for line in run.result()]
    if failed:
        return failed
    names = (f"Python {oldest}", f"Python {newest}")
    return compared(out / oldest, out / newest, names, Varying.read(project / "docs"))


def compared(a: Path, b: Path, names: tuple[str, str], varying: Varying) -> list[str]:
    """The differences between the sites ``a`` and ``b``: version captions apart, and the
    outputs ``varying`` names (the project's marks) masked, as ``make check-cache`` masks them."""
    return differences(a, b, names, without_versions, varying)


def main(argv: list[str] | None = None) -> int:
    project, out = project_and_out(__doc__, "check-pythons", argv)
    found = pythons.found(pythons.matrix(project / "pyproject.toml"))
    print("check-pythons: " + "; ".join(f"{v} {path}" for v, path in found.items()))
    started = time.perf_counter()
    problems = check(project, out, found)
    seconds = time.perf_counter() - started
    for line in problems:
        print(line)
    verdict = f"{len(problems)} difference(s) or failure(s)" if problems else "oldest equals newest"
    print(f"check-pythons: {verdict}; both builds and the comparison took {seconds:.1f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
