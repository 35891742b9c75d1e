"""What the tests and the benchmarks both use: the strict build command, a local static
server, headless chromium's settings and the built site's pages. Standard library only: the
numeric tests also run where only jax, numpy and pytest are installed."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent

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
    """The copy's package first on PYTHONPATH (see STACK-NOTES), and its own cache."""
    return {"PYTHONPATH": str(project), "EXECUTION_CACHE_DIR": str(project / ".cache/execution")}


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

    ``fresh`` (the default, as in CI): execute everything, reuse nothing. The execution cache
    goes to ``cache_dir`` (default: beside ``site_dir``), never into the checkout's ``.cache``.
    """
    cache_dir = cache_dir or site_dir.parent / f"{site_dir.name}-execution-cache"
    build_env = {**os.environ, **BUILD_ENV, "EXECUTION_CACHE_DIR": str(cache_dir)}
    build_env["FRESH"] = "1" if fresh else ""
    # Builds of copies reuse the checkout's wheel cache: its entries are keyed on their content.
    build_env.setdefault("COURSE_WHEEL_CACHE", str(ROOT / ".cache" / "wheel"))
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


def built_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as paths relative to its root (``glossary/``, ...)."""
    pages = []
    for html in sorted(site.rglob("*.html")):
        relative = html.relative_to(site).as_posix()
        pages.append(relative.removesuffix("index.html"))
    return pages
