"""One build of a checkout at a time: ``make build``, ``make publish`` and each of ``make
serve``'s rebuilds take the checkout's build lock (``fcntl.flock`` on ``site.builds/lock``).

Two builds of one checkout share its staging folder, its progress file and the swap: at once,
one would report a false failure, or swap in a site with no assets. So the second build waits
for the first, and says whose build it waits for (its command, process id and start), read from
the lock file, where the holder writes them. It waits rather than refuses, so that a ``make
build`` started beside a serve rebuild, or two CI steps, both succeed, one after the other. The
lock is the kernel's: it is released when its holder ends, however it ends, so a killed build
never leaves the checkout locked. Standard library only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

BUILDS = "site.builds"
"""The folder beside ``site`` that holds each build's staging folder, its progress, the lock."""
LOCK = "lock"


def _holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it (it writes once it has the lock)."""
    for _ in range(20):
        with contextlib.suppress(OSError, ValueError):
            holder = json.loads(os.pread(fd, 4096, 0) or b"null")
            if holder:
                started = time.strftime("%H:%M:%S", time.localtime(holder["started"]))
                return f"{holder['what']}, process {holder['pid']}, started at {started}"
        time.sleep(0.05)
    return "a build that has not said who it is yet"


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def held(root: Path, what: str, say: Callable[[str], None] = _say) -> Iterator[Path]:
    """The checkout's build lock, for ``what`` (``make build``, ``make serve``'s rebuild):
    waited for, saying whose build is waited for; yields the builds' folder."""
    builds = root / BUILDS
    builds.mkdir(exist_ok=True)
    fd = os.open(builds / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"{what}: waiting for the other build of this checkout ({_holder(fd)}) to end")
            fcntl.flock(fd, fcntl.LOCK_EX)
        me = {"what": what, "pid": os.getpid(), "started": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        yield builds
    finally:
        os.close(fd)  # releases the lock


class RebuildLock:
    """The build lock of ``make serve``'s rebuilds: taken in one hook (``on_config``) and
    released in another (``on_post_build``), so not around a ``with`` block."""

    def __init__(self) -> None:
        self._held: contextlib.ExitStack | None = None
        self.serving = False  # taken only where set: under ``mkdocs serve``

    def take(self, root: Path, what: str) -> None:
        if self._held is None:
            stack = contextlib.ExitStack()
            stack.enter_context(held(root, what))
            self._held = stack

    def release(self) -> None:
        if self._held is not None:
            self._held.close()
            self._held = None
