"""git and make as an author runs them: their environment, the version ``make`` reads, and
``make publish`` in a throw-away git repository (the real gh-pages branch is never touched)."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

from build_support.build_command import CACHE_DIR_ENV, FRESH_ENV
from build_support.publishing.uncommitted import BUILT_FROM

from .project import ROOT


def author_env() -> dict[str, str]:
    """The environment of an author running git and make: no outer make flags, a git identity."""
    # A make started from `make test` must not inherit the outer make's job-server flags.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    for role in ("AUTHOR", "COMMITTER"):  # mike commits to gh-pages
        env[f"GIT_{role}_NAME"] = "course-tests"
        env[f"GIT_{role}_EMAIL"] = "tests@example.invalid"
    env.pop(CACHE_DIR_ENV, None)  # a copy's builds use the copy's own .cache/, empty at first
    return env  # the Makefile sets the build's own switches


def run_in(repo: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in ``repo`` (git and make as an author would); it must succeed."""
    result = subprocess.run(command, cwd=repo, env=author_env(), capture_output=True, text=True)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result


def make_dry_run(*arguments: str) -> str:
    """The commands ``make ARGUMENTS`` would run in the checkout (``make -n``), as an author
    runs it (``FRESH`` only where ``ARGUMENTS`` set it)."""
    env = {k: v for k, v in author_env().items() if k != FRESH_ENV}
    command = ["make", "-n", *arguments]
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout


def publish_as(repo: Path, release: str, section_page: Path, version: str) -> None:
    """Make ``repo`` (a copy) publish ``release`` (its pyproject.toml's), with the section of
    ``section_page`` at ``version``, as an author moves both (ARCHITECTURE, "The course
    model")."""
    for path, pattern, line in (
        (repo / "pyproject.toml", r"^release = .*$", f'release = "{release}"'),
        (section_page, r"^version: .*$", f"version: {version}"),
    ):
        text = path.read_text(encoding="utf-8")
        moved = re.sub(pattern, line, text, count=1, flags=re.M)
        assert moved != text or line in text, f"{path}: no {pattern!r} to change"
        path.write_text(moved, encoding="utf-8")


def section_version() -> str:
    """The release ``make publish`` deploys, as the Makefile reads it (``make print-version``):
    the version folder the tests read the published site from."""
    return run_in(ROOT, "make", "-s", "print-version").stdout.strip()


# What a build reads, and what make reads to set up and publish.
_SOURCES = [*BUILT_FROM, ".gitignore"]


def publish_copy(workdir: Path, config_edit: Callable[[str], str] | None = None) -> Path:
    """Run ``make publish`` in a throw-away git repository holding a copy of the sources, its
    ``mkdocs.yml`` first passed through ``config_edit`` where one is given.

    The real repository's gh-pages branch is never touched. Returns the copy's root.
    """
    env = author_env()
    # The copy links to this checkout's .venv and node_modules: bring them up to date here
    # first, or the copy's `make` would reinstall them through the links (npm ci empties the
    # linked folder).
    subprocess.run(["make", "-s", "setup"], cwd=ROOT, env=env, check=True, capture_output=True)
    repo = workdir / "repo"
    repo.mkdir()
    for name in _SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, repo / name)  # keeps mtimes: the set-up stamps stay fresh
    for name in (".venv", "node_modules"):  # not .cache: a publish starts from an empty store
        (repo / name).symlink_to(ROOT / name)
    if config_edit is not None:
        config = repo / "mkdocs.yml"
        config.write_text(config_edit(config.read_text(encoding="utf-8")), encoding="utf-8")
    run_in(repo, "git", "init", "-q", "-b", "main")
    run_in(repo, "git", "add", "-A")
    run_in(repo, "git", "commit", "-q", "-m", "sources under test")
    # The copy shares the checkout's .venv and node_modules: never set them up from the copy
    # (`uv sync` there would re-point the editable install at the copy).
    run_in(repo, "make", "-o", ".venv/.synced", "-o", "node_modules/.installed", "publish")
    return repo


def extract_branch(repo: Path, branch: str, destination: Path) -> None:
    """Write the files of ``branch`` (symlinks included, as mike's aliases are) to a folder."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", branch], cwd=repo, capture_output=True, check=True
    )
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(destination, filter="data")
        else:  # Python before 3.11.4 (Debian 12's 3.11.2): no filters; the archive is our own
            tar.extractall(destination)
