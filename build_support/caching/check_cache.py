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
Outputs their author marked as differing from run to run (a fence's ``varying="yes"``, a
notebook cell's ``varying-output`` tag: ``compare.Varying``, read from ``docs/``) are masked,
and the check says how many.

Where the two sides differ, a second fresh build (``fresh-again/``, only then: a check that
finds nothing costs the two builds alone) tells the two causes apart: a place that differs
between the two fresh builds as well is an output that differs from run to run, named with the
mark it needs; any other is a stale entry, or an ingredient missing from the key.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..build_command import CACHE_DIR_ENV, FRESH_ENV, ROOT, run_build
from ..settings import SHARED_STORE_ENV
from .compare import Varying, differences, place

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
    """FRESH=1, every cache under ``cache_root`` (empty), and no shared store (``FRESH`` skips
    executed outputs only: a shared store would still serve diagrams and the wheel)."""
    return {CACHE_DIR_ENV: str(cache_root), FRESH_ENV: "1", SHARED_STORE_ENV: ""}


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
    checked = run_check(project, out, env, again=False)
    return checked.found, checked.cached


@dataclass
class Checked:
    """What one check found: the differences, the cached side's build, the marks masked, and
    the places that differ between two fresh builds (None: no second one was built)."""

    found: list[str]
    cached: subprocess.CompletedProcess[str]
    varying: Varying = field(default_factory=Varying)
    between_fresh: set[str] | None = None

    def diagnosed(self) -> tuple[list[str], list[str]]:
        """The differences told apart: those the two fresh builds share (run to run), each
        said so with the mark it needs, and the rest (stale)."""
        varying, stale = [], []
        for difference in self.found:
            where = place(difference)
            if self.between_fresh is not None and where in self.between_fresh:
                varying.append(f"{where}: {differs_between_fresh_runs(where)}")
            else:
                stale.append(difference)
        return varying, stale


def differs_between_fresh_runs(where: str) -> str:
    """What to say of a place whose output differs between two fresh builds."""
    if ", cell " in where:
        mark = "tag the notebook's cell varying-output"
    elif ", block " in where or ", timing block " in where:
        mark = 'add varying="yes" to its fence'
    else:
        mark = "a varying output's trace outside its block: mark the block or cell it comes from"
    return f"this output differs between fresh runs (mark it varying: {mark})"


def run_check(
    project: Path, out: Path, env: dict[str, str] | None = None, again: bool = True
) -> Checked:
    """Build both sides into ``out`` and compare them, masking what ``docs/`` marks varying;
    where they differ and ``again``, a second fresh build (``out/fresh-again``) says which
    places differ between fresh runs too."""
    env = env or {}
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    varying = Varying.read(project / "docs")
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
        if failed:
            return Checked(failed, results[0], varying)
        found = differences(out / "cached", out / "fresh", varying=varying)
        checked = Checked(found, results[0], varying)
        if found and again:
            cache = fresh_env(Path(scratch) / "empty-cache-again")
            result = build(copy, out / "fresh-again", {**env, **cache})
            if result.returncode != 0:
                said = f"check-cache: the second fresh build failed:\n{result.stderr[-4000:]}"
                return Checked([*found, said], results[0], varying)
            sides_named = ("fresh", "fresh again")
            again_found = differences(
                out / "fresh", out / "fresh-again", sides_named, varying=varying
            )
            checked.between_fresh = {place(line) for line in again_found}
    return checked


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
    checked = run_check(project, out)
    seconds = time.perf_counter() - started
    print(f"check-cache: the cached build's page renders: {page_renders(checked.cached.stderr)}")
    print(f"check-cache: {checked.varying.said()}")
    varying, stale = checked.diagnosed()
    for line in varying + stale:
        print(line)
    if varying:
        print(
            f"check-cache: {len(varying)} difference(s) differ between two fresh builds too "
            f"({out / 'fresh-again'}): outputs that differ from run to run, not the cache's "
            "doing; mark each varying (a fence's varying=\"yes\", a cell's varying-output tag)"
        )
    if stale:
        print(
            "check-cache: the cached build showed what a fresh build does not: a stale entry, or "
            "an ingredient missing from the key (build_support/caching/ingredients.py). "
            f"Both sites are in {out}; `make build FRESH=1` stores fresh outputs."
        )
    found = checked.found
    verdict = f"{len(found)} difference(s)" if found else "cached equals fresh"
    print(f"check-cache: {verdict}; the builds and the comparison took {seconds:.1f} s")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
