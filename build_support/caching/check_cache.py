"""``make check-cache``: build with the cache and fresh, side by side, and fail on any difference.

    python -m build_support.caching.check_cache [--project DIR] [--out DIR]

The cached side is the author's build: the project's own caches, read and refreshed. The fresh
side reuses nothing: a copy of the project (its caches left behind, its ``examples`` first on
``PYTHONPATH``), ``FRESH=1`` and every cache pointed at an empty folder. Both sites land in
``--out`` (default ``.cache/check-cache/``: ``cached/`` and ``fresh/``). Every file is
compared; an HTML page block by block (``div.exec-block[data-exec-id]``), then the rest of it,
naming the page, the block and the first line that differs. Every page is compared: those the
cached side took from the page cache (hooks/page_render_cache.py; the check prints how many)
as well as those it rendered.

Outputs declared as timings (``expected_to_change`` in ``execution-record.json``: the blocks of
a ``timed="yes"`` session) are compared only for what is not a timing (``compare.py``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..build_command import CACHE_DIR_ENV, FRESH_ENV, ROOT, run_build
from .compare import differences

# Not copied to the fresh side: caches, builds, tools' state (node_modules is linked instead).
_NOT_COPIED = {".git", ".venv", ".cache", "site", "site.builds", "node_modules", "test-artifacts"}
_NOT_COPIED |= {".pytest_cache", ".ruff_cache", ".hypothesis", "__pycache__"}


def build(project: Path, site: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_build(project / "mkdocs.yml", site, {"PYTHONPATH": str(project), **env})


def fresh_copy(project: Path, destination: Path) -> Path:
    """The project's sources without its caches or builds; node_modules linked."""
    ignore = shutil.ignore_patterns(*_NOT_COPIED)
    shutil.copytree(project, destination, ignore=ignore, symlinks=True)
    modules = project / "node_modules"
    if modules.exists():
        (destination / "node_modules").symlink_to(modules.resolve())
    return destination


def fresh_env(cache_root: Path) -> dict[str, str]:
    """FRESH=1 and every cache under ``cache_root`` (empty)."""
    return {CACHE_DIR_ENV: str(cache_root), FRESH_ENV: "1"}


def check(project: Path, out: Path, env: dict[str, str] | None = None) -> list[str]:
    """Build both sides into ``out``; the differences (empty: cached equals fresh)."""
    return check_sides(project, out, env)[0]


def page_renders(log: str) -> str:
    """What a build's log says of its pages' renders (hooks/page_render_cache.py): how many
    were reused from the store, and so compared here as the cache gave them."""
    lines = [line for line in log.splitlines() if "Page renders: " in line]
    return lines[-1].split("Page renders: ", 1)[1] if lines else "not reported"


def check_sides(
    project: Path, out: Path, env: dict[str, str] | None = None
) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """``check``, and the cached side's build (its log says what it reused)."""
    env = env or {}
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="check-cache-") as scratch:
        copy = fresh_copy(project, Path(scratch) / "project")
        sides = [
            (project, out / "cached", {FRESH_ENV: "", **env}),
            (copy, out / "fresh", {**env, **fresh_env(Path(scratch) / "empty-cache")}),
        ]
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda side: build(*side), sides))
    failed = [
        f"check-cache: the {name} build failed:\n{result.stderr[-4000:]}"
        for name, result in zip(("cached", "fresh"), results, strict=True)
        if result.returncode != 0
    ]
    return failed or differences(out / "cached", out / "fresh"), results[0]


def project_and_out(doc: str, name: str, argv: list[str] | None) -> tuple[Path, Path]:
    """The command line of a check (this one, ``make check-pythons``, ``make check-upstream``):
    ``--project`` (default: this project) and ``--out`` (default: its ``.cache/<name>/``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--project", type=Path, default=ROOT)
    parser.add_argument("--out", type=Path, default=None)
    arguments = parser.parse_args(argv)
    project = arguments.project.resolve()
    return project, arguments.out or project / ".cache" / name


def main(argv: list[str] | None = None) -> int:
    project, out = project_and_out(__doc__, "check-cache", argv)
    started = time.perf_counter()
    found, cached = check_sides(project, out)
    seconds = time.perf_counter() - started
    print(f"check-cache: the cached build's page renders: {page_renders(cached.stderr)}")
    for line in found:
        print(line)
    if found:
        print(
            "check-cache: the cached build showed what a fresh build does not: a stale entry, or "
            "an ingredient missing from the key (build_support/caching/ingredients.py). "
            f"Both sites are in {out}; `make build FRESH=1` stores fresh outputs."
        )
    verdict = f"{len(found)} difference(s)" if found else "cached equals fresh"
    print(f"check-cache: {verdict}; both builds and the comparison took {seconds:.1f} s")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
