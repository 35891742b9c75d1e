"""A headless browser against a site served on 127.0.0.1, and the publish step it reads.

The server and the publish step live in ``build_support.site_tools``, the browser and its
settings in ``build_support.browser`` (the benchmarks and the build share both); this module
adds what only the tests use.
"""

from __future__ import annotations

import socket

from build_support.site_tools import (
    LOCAL_HOST,
    ROOT,
    built_pages,
    extract_branch,
    publish_copy,
    run_in,
    section_version,
    serve,
    site_prefix,
)

__all__ = [
    "LOCAL_HOST",
    "built_pages",
    "extract_branch",
    "publish_copy",
    "run_in",
    "section_version",
    "serve",
    "site_prefix",
]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind((LOCAL_HOST, 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((LOCAL_HOST, port)) == 0
