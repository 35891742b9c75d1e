"""A built site served on 127.0.0.1 from a thread, and the ports a test or benchmark starts a
server on (``free_port`` is the one ``examples.processes`` picks its coordinator's with)."""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from examples.processes import LOCAL_HOST, free_port

__all__ = ["LOCAL_HOST", "free_port", "listening", "serve"]


def listening(port: int) -> bool:
    """Whether something accepts connections on ``port`` of 127.0.0.1 now."""
    with socket.socket() as probe:
        return probe.connect_ex((LOCAL_HOST, port)) == 0


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
