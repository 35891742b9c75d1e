"""The strict build, of the checkout or of a throw-away copy of what a build reads, with its
caches kept apart from the checkout's."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from build_support.build_command import BUILDER, CACHE_DIR_ENV, FRESH_ENV, ROOT, run_build
from build_support.publishing.uncommitted import BUILD_READS_DIRS, BUILD_READS_FILES


def copy_project(destination: Path, source: Path = ROOT) -> Path:
    """A throw-away copy of what a build reads (node_modules linked), of this checkout or of
    ``source`` (another commit's tree, for a benchmark). Build it with ``copy_env(destination)``:
    the copy's ``examples`` package first on ``PYTHONPATH``."""
    for name in BUILD_READS_DIRS:
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(source / name, destination / name, ignore=ignore)
    for name in BUILD_READS_FILES:
        shutil.copy2(source / name, destination / name)
    (destination / "node_modules").symlink_to(ROOT / "node_modules")
    return destination


def copy_env(project: Path) -> dict[str, str]:
    """The copy's package first on ``PYTHONPATH`` (the editable install would otherwise import
    the checkout's ``examples``), and its own store of caches."""
    return {"PYTHONPATH": str(project), CACHE_DIR_ENV: str(project / ".cache")}


def mkdocs_build(
    config: Path,
    site_dir: Path,
    *,
    fresh: bool = True,
    cache_dir: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    builder: str = BUILDER,
) -> subprocess.CompletedProcess[str]:
    """Run the strict build, the only build, and return what it printed (``builder``: the
    project's, or another: ``mkdocs``, ``properdocs``).

    ``fresh`` (the default, as in CI): execute everything, reuse nothing. Every cache (the
    store: outputs, diagrams, trimmed pages, the wheel) lives in ``cache_dir`` (default: beside
    ``site_dir``, so a fresh build starts from an empty one), never in the checkout's ``.cache``:
    a new browser or tinycss2 is exercised by the tests, not hidden by the checkout's entries.
    """
    cache_dir = cache_dir or site_dir.parent / f"{site_dir.name}-cache"
    build_env = {CACHE_DIR_ENV: str(cache_dir), FRESH_ENV: "1" if fresh else ""}
    return run_build(config, site_dir, build_env | (env or {}), timeout, builder)


def with_own_workers(tmp_path: Path, monkeypatch) -> Iterator:
    """For a fixture: a build of the checkout (``state.BuildState``) with its store (and so its
    JAX compilation cache) in ``tmp_path`` and workers of its own, forked warm (never
    ``COURSE_WORKER_START=spawn``), all closed at the end."""
    from build_support.execution import executor, state

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "store"))
    monkeypatch.setenv(FRESH_ENV, "")
    monkeypatch.delenv(executor.START_ENV, raising=False)
    monkeypatch.setattr(state.PROCESS, "executor", executor.LocalExecutor())
    yield state.start(ROOT)
    state.PROCESS.executor.close()
