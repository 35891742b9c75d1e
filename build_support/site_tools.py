"""What the tests and the benchmarks both use: the strict build command, a local static
server, the built site's pages and ``make publish`` run in a throw-away copy (the browser they
drive, and its settings: ``build_support.browser``). Standard library only: the
numeric tests also run where only jax, numpy and pytest are installed."""

from __future__ import annotations

import functools
import io
import os
import shutil
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from .store import ROOT_ENV as CACHE_ROOT_ENV

ROOT = Path(__file__).resolve().parent.parent

LOCAL_HOST = "127.0.0.1"
SECTION_PAGE = "p5-9-1-gpus-and-parallel-processing"
# The same switches as the Makefile (see there).
BUILD_ENV = {
    "NO_MKDOCS_2_WARNING": "1",
    "NBCONVERT_DISABLE_CONFIG_EXPORTERS": "1",
    "OPENBLAS_THREAD_TIMEOUT": "4",
}


_PROJECT_DIRS = ["docs", "hooks", "examples", "build_support", "overrides"]
_PROJECT_FILES = ["mkdocs.yml", "uv.lock", "pyproject.toml", "hatch_build.py", "README.md"]


def copy_project(destination: Path) -> Path:
    """A throw-away copy of what a build reads (node_modules linked). Build it with
    ``copy_env(destination)``: the copy's ``examples`` package first on ``PYTHONPATH``."""
    for name in _PROJECT_DIRS:
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / name, destination / name, ignore=ignore)
    for name in _PROJECT_FILES:
        shutil.copy2(ROOT / name, destination / name)
    (destination / "node_modules").symlink_to(ROOT / "node_modules")
    return destination


def copy_env(project: Path) -> dict[str, str]:
    """The copy's package first on PYTHONPATH (see STACK-NOTES), and its own store of caches."""
    return {"PYTHONPATH": str(project), CACHE_ROOT_ENV: str(project / ".cache")}


def mkdocs_build(
    config: Path,
    site_dir: Path,
    *,
    fresh: bool = True,
    cache_dir: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """Run the strict build, the only build, and return what it printed.

    ``fresh`` (the default, as in CI): execute everything, reuse nothing. Every cache (the
    store: outputs, diagrams, trimmed pages, the wheel) lives in ``cache_dir`` (default: beside
    ``site_dir``, so a fresh build starts from an empty one), never in the checkout's ``.cache``:
    a new browser or tinycss2 is exercised by the tests, not hidden by the checkout's entries.
    """
    cache_dir = cache_dir or site_dir.parent / f"{site_dir.name}-cache"
    build_env = {**os.environ, **BUILD_ENV, CACHE_ROOT_ENV: str(cache_dir)}
    build_env["FRESH"] = "1" if fresh else ""
    build_env |= env or {}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            str(config),
            "-d",
            str(site_dir),
        ],
        cwd=config.parent,
        env=build_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the callers report what matters themselves
        pass


@contextmanager
def serve(
    directory: Path, handler_class: type[SimpleHTTPRequestHandler] = _QuietHandler
) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 from a thread; yield the base URL (ending in /)."""
    handler = functools.partial(handler_class, directory=str(directory))
    server = ThreadingHTTPServer((LOCAL_HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL_HOST}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def site_prefix() -> str:
    """The path part of ``site_url`` (``""`` or ``course/``): where the site lives on its host."""
    text = (ROOT / "mkdocs.yml").read_text()
    site_url = next(line for line in text.splitlines() if line.startswith("site_url:"))
    path = urlsplit(site_url.split(":", 1)[1].split(" #")[0].strip().strip("'\"")).path.strip("/")
    return f"{path}/" if path else ""


def built_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as paths relative to its root (``glossary/``, ...)."""
    pages = []
    for html in sorted(site.rglob("*.html")):
        relative = html.relative_to(site).as_posix()
        pages.append(relative.removesuffix("index.html"))
    return pages


def section_version() -> str:
    """The version, read by the Makefile from the section page's front matter."""
    result = subprocess.run(
        ["make", "-s", "print-version"], cwd=ROOT, env=author_env(), capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def author_env() -> dict[str, str]:
    """The environment of an author running git and make: no outer make flags, a git identity."""
    # A make started from `make test` must not inherit the outer make's job-server flags.
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    for role in ("AUTHOR", "COMMITTER"):  # mike commits to gh-pages
        env[f"GIT_{role}_NAME"] = "course-tests"
        env[f"GIT_{role}_EMAIL"] = "tests@example.invalid"
    env.pop(CACHE_ROOT_ENV, None)  # a copy's builds use the copy's own .cache/, empty at first
    return env  # the Makefile sets the build's own switches


_SOURCES = ["Makefile", "mkdocs.yml", "pyproject.toml", "uv.lock", "package.json", "README.md"]
_SOURCES += ["package-lock.json", ".gitignore", "hatch_build.py", "docs", "hooks", "overrides"]
_SOURCES += ["examples", "build_support"]


def publish_copy(workdir: Path) -> Path:
    """Run ``make publish`` in a throw-away git repository holding a copy of the sources.

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
    run_in(repo, "git", "init", "-q", "-b", "main")
    run_in(repo, "git", "add", "-A")
    run_in(repo, "git", "commit", "-q", "-m", "sources under test")
    # The copy shares the checkout's .venv and node_modules: never set them up from the copy
    # (`uv sync` there would re-point the editable install at the copy).
    run_in(repo, "make", "-o", ".venv/.synced", "-o", "node_modules/.installed", "publish")
    return repo


def run_in(repo: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in ``repo`` (git and make as an author would); it must succeed."""
    result = subprocess.run(command, cwd=repo, env=author_env(), capture_output=True, text=True)
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
