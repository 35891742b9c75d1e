"""The one store behind every cache of the build: executed outputs, drawn diagrams, trimmed
notebook pages, the wheel and the pages' renders.

An entry is one file, ``<root>/<cache>/<key[:2]>/<key>``: a JSON header line (the payload's
SHA-256 and size, and the cache's own metadata), then the payload's bytes. The root is the
build's ``cache_dir`` setting (build_support/settings.py: ``.cache/`` in the project, or
``$COURSE_CACHE_DIR``). Every entry is

- checked when read: a payload that fails its checksum is a fault, never an output;
- written atomically: a temporary file in the same folder, then ``os.replace`` (a reader or a
  second build sees the old entry or the new one, never half of one);
- readable by the group: the mode any file the build writes gets (0644 under umask 022), not
  ``mkstemp``'s 0600, so a cache volume shared between users works;
- bounded: past ``LIMIT_BYTES`` in all, ``prune`` deletes the least recently used entries
  (a hit refreshes an entry's mtime) until the store is under 3/4 of it. A build calls it at
  its end (hooks/cache_store.py).

``Store`` is the interface; ``FileStore`` its file-system implementation, which raises
``EntryFault`` for an entry it cannot use and ``WriteFault`` for one it cannot write. The
caches use it through ``build_support.caching.cache.Cache``, which turns either into a miss;
their keys come from ``cache.key_of``. Behind it, where the build names one, a store every
machine shares (an fsspec URL: ``shared_store.py``) holds the same entries (``encode``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LIMIT_BYTES = 200 * 2**20
"""The store's bound. A build after an edit to ``examples/`` stores about 0.9 MB: this keeps
some two hundred such builds' entries (branches, device settings), on 200 MB of disk at most
(and one build's new entries, until its end)."""
PRUNE_TO = 0.75  # pruning goes below the bound, so that the next builds need not prune again
STALE_TEMP_S = 3600  # a temporary file this old was left by a writer that died

_KEY = re.compile(r"[0-9A-Za-z_-]{8,128}")
PRUNE_LOCK = ".prune.lock"
"""Held (``fcntl.flock``) by the build pruning the store: builds sharing it (clones, users)
never prune at once; the builds of one checkout take turns anyway (``build_lock.py``)."""


@contextlib.contextmanager
def _alone(path: Path):
    """Whether this process holds the lock at ``path`` now (never waits); True where the store
    cannot hold a lock file (read-only): nothing will be deleted there anyway."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def read_umask() -> int:
    """The process's umask, which gives an entry the mode any file the build writes gets.
    Linux shows it; elsewhere set-and-restore (briefly 0 for the whole process, when a
    ``FileStore`` is made: a hook's ``on_config``)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    umask = os.umask(0)
    os.umask(umask)
    return umask


class StoreError(Exception):
    """Something the store could not do; ``Cache`` turns every one into a miss."""


class EntryFault(StoreError):
    """An entry is there but cannot be used: unreadable, corrupt or of the wrong shape."""


class WriteFault(StoreError):
    """An entry could not be written (read-only file system, full disk, permission)."""


@dataclass(frozen=True)
class Entry:
    payload: bytes
    meta: dict[str, Any] = field(default_factory=dict)


def encode(entry: Entry) -> bytes:
    """An entry as a store holds it: its header line (checksum, size, metadata), its payload."""
    head = {"sha256": hashlib.sha256(entry.payload).hexdigest(), "size": len(entry.payload)}
    return json.dumps(head | {"meta": entry.meta}).encode() + b"\n" + entry.payload


def decode(data: bytes) -> Entry:
    """The entry ``encode`` wrote; ``EntryFault`` where its header or its checksum fails."""
    header, _, payload = data.partition(b"\n")
    try:
        head = json.loads(header)
        checksum, meta = head["sha256"], head["meta"]
    except (ValueError, KeyError, TypeError) as error:
        raise EntryFault("no readable header") from error
    if hashlib.sha256(payload).hexdigest() != checksum:
        raise EntryFault("checksum mismatch (truncated or edited)")
    return Entry(payload, meta if isinstance(meta, dict) else {})


def entry_path(cache: str, key: str) -> str:
    """An entry's place under a store's root: ``<cache>/<key[:2]>/<key>``."""
    if not _KEY.fullmatch(key):
        raise ValueError(f"a store key is 8-128 letters, digits, '-' or '_'; got {key!r}")
    return f"{cache}/{key[:2]}/{key}"


class Store(ABC):
    """Entries of bytes, by cache name and key."""

    @abstractmethod
    def get(self, cache: str, key: str) -> Entry | None:
        """The entry, or None when there is none; raises ``EntryFault``."""

    @abstractmethod
    def put(self, cache: str, key: str, entry: Entry) -> None:
        """Store ``entry``; raises ``WriteFault``."""

    @abstractmethod
    def prune(self, limit_bytes: int = LIMIT_BYTES) -> int:
        """Delete least recently used entries past ``limit_bytes``; return how many."""


def prune_least_used(files: list[tuple[Path, os.stat_result]], limit_bytes: int) -> int:
    """Where ``files`` total more than ``limit_bytes``, delete the least recently modified
    first until they total ``PRUNE_TO`` of it at most; how many. A file that cannot be deleted
    (a read-only store) is left, and the build goes on."""
    total, removed = sum(stat.st_size for _, stat in files), 0
    if total <= limit_bytes:
        return 0
    for path, stat in sorted(files, key=lambda item: item[1].st_mtime):
        if total <= limit_bytes * PRUNE_TO:
            break
        try:
            path.unlink()
        except OSError:
            continue
        total, removed = total - stat.st_size, removed + 1
    return removed


def store_root(project_root: Path) -> Path:
    """The store's folder: the ``cache_dir`` setting of the project's build."""
    from ..settings import current  # here: the rest of this module needs the standard library only

    return Path(current(project_root).cache_dir)


def _cause(error: OSError) -> str:
    words = {
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EROFS: "read-only file system",
        errno.ENOSPC: "disk full",
        errno.EDQUOT: "disk quota exceeded",
        errno.EISDIR: "a folder where an entry should be",
        errno.ENOTDIR: "a file where a folder should be",
    }
    return words.get(error.errno, f"{type(error).__name__}: {error.strerror or error}")


@dataclass
class FileStore(Store):
    root: Path
    umask: int = field(default_factory=read_umask, repr=False, compare=False)
    """The mode bits an entry withholds: the process's umask when the store is made."""

    def path(self, cache: str, key: str) -> Path:
        return self.root / entry_path(cache, key)

    def get(self, cache: str, key: str) -> Entry | None:
        path = self.path(cache, key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise EntryFault(_cause(error)) from error
        entry = decode(data)
        with contextlib.suppress(OSError):  # a read-only store still serves its entries
            os.utime(path)  # least recently used goes first when the store is pruned
        return entry

    def put(self, cache: str, key: str, entry: Entry) -> None:
        path = self.path(cache, key)
        data = encode(entry)
        temporary = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(handle, "wb") as file:
                file.write(data)
                os.fchmod(file.fileno(), 0o666 & ~self.umask)  # not mkstemp's 0600
            os.replace(temporary, path)  # atomic: readers see the old entry or the new one
        except OSError as error:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    Path(temporary).unlink()
            raise WriteFault(_cause(error)) from error

    def entries(self, cache: str = "*") -> list[tuple[Path, os.stat_result]]:
        """Every file of the store's own layout (nothing else under the root is touched)."""
        found = []
        for path in self.root.glob(f"{cache}/??/*"):
            entry = _KEY.fullmatch(path.name) and path.name[:2] == path.parent.name
            if entry or path.name.startswith(".tmp-"):
                try:
                    found.append((path, path.stat()))
                except OSError:
                    continue
        return found

    def prune(self, limit_bytes: int = LIMIT_BYTES) -> int:
        with _alone(self.root / PRUNE_LOCK) as alone:
            return self._prune(limit_bytes) if alone else 0  # another build prunes it now

    def _prune(self, limit_bytes: int) -> int:
        entries, now = [], time.time()
        for path, stat in self.entries():
            if path.name.startswith(".tmp-") and now - stat.st_mtime > STALE_TEMP_S:
                with contextlib.suppress(OSError):  # a read-only store is pruned by no one
                    path.unlink()
                    continue
            entries.append((path, stat))
        return prune_least_used(entries, limit_bytes)

    def clear(self) -> int:
        """Delete every entry (``make clean``), then the folders left empty; return how many."""
        entries = self.entries()
        for path, _ in entries:
            path.unlink(missing_ok=True)
        for folder in sorted({path.parent for path, _ in entries}, reverse=True):
            for empty in (folder, folder.parent):
                with contextlib.suppress(OSError):
                    empty.rmdir()
        return len(entries)


if __name__ == "__main__":  # python -m build_support.caching.store clear (make clean)
    if sys.argv[1:] != ["clear"]:
        raise SystemExit("usage: python -m build_support.caching.store clear")
    root = store_root(Path.cwd())
    print(f"{root}: {FileStore(root).clear()} cache entries removed")
