"""A built site served on 127.0.0.1 from a thread, ``mkdocs serve`` of a project, a page fetched
until it shows a text, and the ports a test or benchmark starts a server on (``free_port`` is
the one ``examples.processes`` picks its coordinator's with)."""

from __future__ import annotations

import functools
import gzip
import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from build_support.build_command import BUILD_ENV
from examples.processes import LOCAL_HOST, free_port

__all__ = [
    "LOCAL_HOST",
    "answering",
    "fetch_text",
    "free_port",
    "listening",
    "mkdocs_serve",
    "serve",
    "serve_gzip",
    "wait_for_text",
]


def listening(port: int) -> bool:
    """Whether something accepts connections on ``port`` of 127.0.0.1 now."""
    with socket.socket() as probe:
        return probe.connect_ex((LOCAL_HOST, port)) == 0


def answering(port: int) -> bool:
    """Whether an HTTP server on ``port`` of 127.0.0.1 answers a request now (any status).

    ``mkdocs serve`` listens before it starts watching for changes, and answers only after: an
    edit made once it merely listens can land in the watcher's first snapshot and never rebuild
    (a loaded CI run met that)."""
    try:
        with urllib.request.urlopen(f"http://{LOCAL_HOST}:{port}/", timeout=30):
            return True
    except urllib.error.HTTPError:
        return True  # an answer all the same
    except OSError:
        return False


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


COMPRESSED_SUFFIXES = {".html", ".css", ".js", ".json", ".map", ".xml", ".svg", ".txt"}


@functools.lru_cache(maxsize=512)
def _compressed(path: Path, mtime_ns: int, size: int) -> bytes:
    # Each file is compressed once while it is unchanged (its time and size are in the key), as
    # a CDN keeps it: compressing on every request ran on the same cores as the page being
    # measured, while it loaded (about 0.5 MB at level 9 per section page load).
    return gzip.compress(path.read_bytes())


class _GzipHandler(_QuietHandler):
    """Text files gzip-compressed for a client that accepts it, as GitHub Pages serves them."""

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir() and self.path.split("?")[0].endswith("/"):
            path = path / "index.html"
        accepts_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts_gzip and path.is_file() and path.suffix in COMPRESSED_SUFFIXES):
            return super().send_head()
        stat = path.stat()
        body = _compressed(path, stat.st_mtime_ns, stat.st_size)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


def serve_gzip(directory: Path):
    """Like ``serve``, with text files gzip-compressed (benchmarks: a phone on GitHub Pages)."""
    return serve(directory, _GzipHandler)


@contextmanager
def mkdocs_serve(
    project: Path, env: dict[str, str], log: Path, *options: str
) -> Iterator[tuple[subprocess.Popen, str]]:
    """``mkdocs serve --strict`` of ``project`` on a free port of 127.0.0.1, with the build's
    switches and ``env`` added to this environment, and ``options``; what it prints goes to
    ``log``. Yields the server and its base URL (ending in /) once it answers (after its first
    build, and once it watches for edits); on exit it is stopped as Ctrl-C stops it, killed if
    it has not ended 20 s later."""
    port = free_port()
    address = f"{LOCAL_HOST}:{port}"
    command = [sys.executable, "-m", "mkdocs", "serve", "--strict", "-a", address, *options]
    with log.open("w", encoding="utf-8") as output:
        server = subprocess.Popen(
            command,
            cwd=project,
            env={**os.environ, **BUILD_ENV, **env},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 240
            while not answering(port):
                assert server.poll() is None, log.read_text(encoding="utf-8")
                assert time.monotonic() < deadline, "mkdocs serve did not start answering"
                time.sleep(0.2)
            yield server, f"http://{address}/"
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def fetch_text(url: str) -> str | None:
    """The page at ``url``, or None where nothing answers there (yet)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.read().decode()
    except OSError:
        return None


def wait_for_text(url: str, text: str, timeout_s: float = 120) -> str:
    """The page at ``url`` once it shows ``text`` (asked again and again); an assertion error
    naming both after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        page = fetch_text(url)
        if page is not None and text in page:
            return page
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never showed at {url}")
