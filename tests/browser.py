"""Headless Debian chromium against a site served on 127.0.0.1, and the publish step it reads.

Used by the browser tests and by ``benchmarks/page_weight.py``.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import tarfile
from pathlib import Path

from build_support.site_tools import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LOCAL_HOST,
    ROOT,
    built_pages,
    serve,
    site_prefix,
)

from .helpers import WHEEL_CACHE

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "LOCAL_HOST", "built_pages", "serve", "site_prefix"]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind((LOCAL_HOST, 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((LOCAL_HOST, port)) == 0


def section_version() -> str:
    """The version, read by the Makefile from the section page's front matter."""
    result = subprocess.run(
        ["make", "-s", "print-version"], cwd=ROOT, env=_plain_env(), capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _plain_env() -> dict[str, str]:
    # A make started from `make test` must not inherit the outer make's job-server flags.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    for role in ("AUTHOR", "COMMITTER"):  # mike commits to gh-pages
        env[f"GIT_{role}_NAME"] = "course-tests"
        env[f"GIT_{role}_EMAIL"] = "tests@example.invalid"
    env.setdefault("COURSE_WHEEL_CACHE", str(WHEEL_CACHE))
    return env  # the Makefile sets the build's own switches


_SOURCES = ["Makefile", "mkdocs.yml", "pyproject.toml", "uv.lock", "package.json", "README.md"]
_SOURCES += ["package-lock.json", ".gitignore", "hatch_build.py", "docs", "hooks", "overrides"]
_SOURCES += ["examples", "build_support"]


def publish_copy(workdir: Path) -> Path:
    """Run ``make publish`` in a throw-away git repository holding a copy of the sources.

    The real repository's gh-pages branch is never touched. Returns the copy's root.
    """
    env = _plain_env()
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
    (ROOT / ".cache").mkdir(exist_ok=True)
    for name in (".venv", "node_modules", ".cache"):  # .cache: diagrams drawn (mermaid_svg.py)
        (repo / name).symlink_to(ROOT / name)
    run_in(repo, "git", "init", "-q", "-b", "main")
    run_in(repo, "git", "add", "-A")
    run_in(repo, "git", "commit", "-q", "-m", "sources under test")
    # The copy shares the checkout's .venv and node_modules: never set them up from the copy
    # (`uv sync` there would re-point the editable install at the copy).
    run_in(repo, "make", "-o", ".venv/.synced", "-o", "node_modules/.installed", "publish")
    return repo


def run_in(repo: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in ``repo`` (git and make as an author would); it must succeed."""
    result = subprocess.run(command, cwd=repo, env=_plain_env(), capture_output=True, text=True)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result


def extract_branch(repo: Path, branch: str, destination: Path) -> None:
    """Write the files of ``branch`` (symlinks included, as mike's aliases are) to a folder."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", branch], cwd=repo, capture_output=True, check=True
    )
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(destination, filter="data")
