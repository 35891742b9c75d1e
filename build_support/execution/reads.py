"""The files a block reads while it runs, stored with its output and checked before reuse.

Only a block's code is known before it runs, not what it then reads (a data file, matplotlib's
settings). So, as make's dependency files do, each file the block opens for reading (Python's
``open`` audit event, in the thread running it in its worker) is recorded with its SHA-256, and
an entry is reused only while every one is unchanged; one under the project by its path there,
so an entry survives a move of the checkout. One this user cannot open is a miss, said once.

Left out: files the block wrote; Python's own (compiled modules, ``sys.prefix``: keyed by
``uv.lock`` and the Python version); ``/proc``, ``/sys``, ``/dev`` (the backend label); the
course package's modules as Python imports them (the key holds what the output reaches of them,
``caching/reach.py``, where recording them would re-run the block that first imports the package
on any edit of it); the user's own caches (``$XDG_CACHE_HOME``, else ``~/.cache``) and
matplotlib's font list (``fontlist-*.json``): caches of what is recorded or keyed elsewhere,
which differ from user to user and may be unreadable to a colleague sharing the store. A user's
matplotlibrc is recorded.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

_IMPORTER = "<frozen importlib._bootstrap_external>"  # where Python reads a module to import
_SYSTEM = ("/proc/", "/sys/", "/dev/")
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT
# Process scope: an audit hook is added once per process and cannot be removed, so it is
# switched on per thread (``_local.opened``) while a block runs.
_local = threading.local()
_hook_installed = threading.Lock()
_installed: list[bool] = []
log = logging.getLogger("course.store")


class Opened:
    """What one block opened while it ran: paths read, paths written."""

    def __init__(self, package_dir: str | None) -> None:
        self.read: set[str] = set()
        self.written: set[str] = set()
        self.package = str(Path(package_dir).resolve()) + os.sep if package_dir else "\0"

    def inputs(self) -> set[str]:
        """What it read and did not write, less Python's own files and the user's caches."""
        return {path for path in self.read - self.written if not excluded(path)}


def _hook(event: str, args: tuple) -> None:
    if event != "open":
        return
    opened = getattr(_local, "opened", None)
    if opened is None or not isinstance(args[0], str | bytes | os.PathLike):
        return
    path, mode, flags = args
    path = os.path.abspath(os.fsdecode(path))
    if path.startswith(opened.package) and sys._getframe(1).f_code.co_filename == _IMPORTER:
        return  # the package's modules, imported: in the key, as far as the output reaches them
    writes = any(c in mode for c in "wax+") if isinstance(mode, str) else bool(flags & _WRITES)
    (opened.written if writes else opened.read).add(path)


@contextmanager
def recorded(package_dir: str | None) -> Iterator[Opened]:
    """Record what the current thread opens inside the ``with`` block."""
    with _hook_installed:
        if not _installed:  # an audit hook cannot be removed: one per process, switched here
            sys.addaudithook(_hook)
            _installed.append(True)
    outer = getattr(_local, "opened", None)
    _local.opened = Opened(package_dir)
    try:
        yield _local.opened
    finally:
        inner, _local.opened = _local.opened, outer
        if outer is not None:  # nested: the outer block read these too
            outer.read |= inner.read
            outer.written |= inner.written


def excluded(path: str) -> bool:
    """Python's own files (and compiled modules: their bytes change with every compile), and
    the user's own caches."""
    if path.startswith(_SYSTEM) or path.endswith(".pyc") or "/__pycache__/" in path:
        return True
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    if any(path.startswith(prefix + os.sep) for prefix in prefixes):
        return True
    name = os.path.basename(path)
    if name.startswith("fontlist-") and name.endswith(".json"):  # wherever MPLCONFIGDIR puts it
        return True
    caches = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.realpath(path).startswith(os.path.realpath(caches) + os.sep)


def digests(read: Iterable[str], written: Iterable[str], project_root: Path) -> dict[str, str]:
    """Name -> SHA-256 of every file a block read and did not write (an ``Opened``'s, from its
    worker; names relative to the project where they are in it)."""
    root = str(project_root.resolve()) + os.sep
    found = {}
    for path in sorted(set(read) - set(written)):
        if excluded(path) or not os.path.isfile(path):
            continue
        name = path.removeprefix(root) if path.startswith(root) else path
        try:
            found[name] = _digest(Path(path))
        except OSError:  # the block could read it, the build cannot: never reused
            found[name] = "unreadable"
    return found


def changed(stored: dict[str, str] | None, project_root: Path) -> list[str]:
    """Why an entry's reads no longer hold: one reason per file changed or gone."""
    reasons = []
    for name, digest in (stored or {}).items():
        path = project_root / name  # an absolute name stays absolute
        if excluded(str(path)):  # a cache an older entry recorded: not an input
            continue
        try:
            current = _digest(path) if path.is_file() else None
        except OSError as error:  # another user's file, say: a miss, never a failure
            reason = f"`{name}` cannot be read here ({error.strerror or error})"
            log.warning("a block's recorded read: %s; ran again", reason)
            reasons.append(f"{reason} (read by the block)")
            continue
        if current != digest:
            what = "changed" if current else "gone"
            reasons.append(f"`{name}` {what} (read by the block)")
    return reasons


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
