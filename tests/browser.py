"""Headless Debian chromium against a site served on 127.0.0.1, and the publish step it reads.

Used by the browser tests and by ``benchmarks/page_weight.py``.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import socket
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from .helpers import ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
LOCAL_HOST = "127.0.0.1"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # the tests report what matters themselves
        pass


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind((LOCAL_HOST, 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((LOCAL_HOST, port)) == 0


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 from a thread; yield the base URL (ending in /)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
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
    return env  # the Makefile sets the build's own switches


_SOURCES = ["Makefile", "mkdocs.yml", "pyproject.toml", "uv.lock", "package.json"]
_SOURCES += ["package-lock.json", ".gitignore", "docs", "hooks", "examples"]


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

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
        assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
        return result

    run("git", "init", "-q", "-b", "main")
    run("git", "add", "-A")
    run("git", "commit", "-q", "-m", "sources under test")
    run("make", "publish")
    return repo


def extract_branch(repo: Path, branch: str, destination: Path) -> None:
    """Write the files of ``branch`` (symlinks included, as mike's aliases are) to a folder."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", branch], cwd=repo, capture_output=True, check=True
    )
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(destination, filter="data")


def built_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as paths relative to its root (``glossary/``, ...)."""
    pages = []
    for html in sorted(site.rglob("*.html")):
        relative = html.relative_to(site).as_posix()
        pages.append(relative.removesuffix("index.html"))
    return pages
