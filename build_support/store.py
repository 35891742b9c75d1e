"""The one store behind every cache of the build: executed outputs, drawn diagrams, trimmed
notebook pages and the wheel.

An entry is one file, ``<root>/<cache>/<key[:2]>/<key>``: a JSON header line (the payload's
SHA-256 and size, and the cache's own metadata), then the payload's bytes. The root is
``.cache/`` in the project, or ``$COURSE_CACHE_DIR``. Every entry is

- checked when read: a payload that fails its checksum is a fault, never an output;
- written atomically: a temporary file in the same folder, then ``os.replace`` (a reader or a
  second build sees the old entry or the new one, never half of one);
- readable by the group: the mode any file the build writes gets (0644 under umask 022), not
  ``mkstemp``'s 0600, so a cache volume shared between users works;
- bounded: past ``LIMIT_BYTES`` in all, ``prune`` deletes the least recently used entries
  (a hit refreshes an entry's mtime) until the store is under 3/4 of it. A build calls it at
  its end (hooks/cache_store.py).

``Store`` is the interface; ``FileStore`` its file-system implementation, which raises
``EntryFault`` for an entry it cannot use and ``WriteFault`` for one it cannot write.
``Cache`` (one per cache, by name) turns either into a miss with one line naming the cache and
the cause: a fault only ever costs a run. That line is a WARNING of the ``course.store``
logger, outside the ``mkdocs`` logger tree on purpose: ``mkdocs build --strict`` counts the
warnings of that tree and aborts, and a cache fault must not fail a build whose output is right.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import sys
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT_ENV = "COURSE_CACHE_DIR"
LIMIT_BYTES = 200 * 2**20
"""The store's bound. One full build stores about 1 MB; this keeps a couple of hundred builds'
worth of entries (branches, device settings) on a few hundred MB of disk at most."""
PRUNE_TO = 0.75  # pruning goes below the bound, so that the next builds need not prune again
STALE_TEMP_S = 3600  # a temporary file this old was left by a writer that died

_KEY = re.compile(r"[0-9A-Za-z_-]{8,128}")
_UMASK = os.umask(0)
os.umask(_UMASK)


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


def store_root(project_root: Path) -> Path:
    return Path(os.environ.get(ROOT_ENV) or project_root / ".cache")


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

    def path(self, cache: str, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError(f"a store key is 8-128 letters, digits, '-' or '_'; got {key!r}")
        return self.root / cache / key[:2] / key

    def get(self, cache: str, key: str) -> Entry | None:
        path = self.path(cache, key)
        try:
            with path.open("rb") as file:
                header, payload = file.readline(), file.read()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise EntryFault(_cause(error)) from error
        try:
            head = json.loads(header)
            checksum, meta = head["sha256"], head["meta"]
        except (ValueError, KeyError, TypeError) as error:
            raise EntryFault("no readable header") from error
        if hashlib.sha256(payload).hexdigest() != checksum:
            raise EntryFault("checksum mismatch (truncated or edited)")
        with contextlib.suppress(OSError):  # a read-only store still serves its entries
            os.utime(path)  # least recently used goes first when the store is pruned
        return Entry(payload, meta if isinstance(meta, dict) else {})

    def put(self, cache: str, key: str, entry: Entry) -> None:
        path = self.path(cache, key)
        head = {"sha256": hashlib.sha256(entry.payload).hexdigest(), "size": len(entry.payload)}
        header = json.dumps(head | {"meta": entry.meta}).encode() + b"\n"
        temporary = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(handle, "wb") as file:
                file.write(header + entry.payload)
                os.fchmod(file.fileno(), 0o666 & ~_UMASK)  # not mkstemp's 0600
            os.replace(temporary, path)  # atomic: readers see the old entry or the new one
        except OSError as error:
            if temporary is not None:
                Path(temporary).unlink(missing_ok=True)
            raise WriteFault(_cause(error)) from error

    def entries(self, cache: str = "*") -> list[tuple[Path, os.stat_result]]:
        """Every file of the store's own layout (nothing else under the root is touched)."""
        found = []
        for path in self.root.glob(f"{cache}/??/*"):
            if _KEY.fullmatch(path.name) or path.name.startswith(".tmp-"):
                try:
                    found.append((path, path.stat()))
                except OSError:
                    continue
        return found

    def size_bytes(self, cache: str = "*") -> int:
        return sum(stat.st_size for _, stat in self.entries(cache))

    def prune(self, limit_bytes: int = LIMIT_BYTES) -> int:
        entries = self.entries()
        now, removed = time.time(), 0
        for path, stat in entries:
            if path.name.startswith(".tmp-") and now - stat.st_mtime > STALE_TEMP_S:
                path.unlink(missing_ok=True)
        total = sum(stat.st_size for _, stat in entries)
        if total <= limit_bytes:
            return 0
        for path, stat in sorted(entries, key=lambda item: item[1].st_mtime):
            if total <= limit_bytes * PRUNE_TO:
                break
            try:
                path.unlink()
            except OSError:
                continue
            total -= stat.st_size
            removed += 1
        return removed

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


# ---------------------------------------------------------------- one cache: faults are misses

log = logging.getLogger("course.store")


class _Stderr(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(f"{self.format(record)}\n")  # sys.stderr as it is now (pytest swaps it)


if not log.handlers:
    _handler = _Stderr()
    _handler.setFormatter(logging.Formatter("cache warning: %(message)s"))
    log.addHandler(_handler)


def as_bytes(payload: bytes) -> bytes:
    return payload


def as_text(payload: bytes) -> str:
    try:
        return payload.decode()
    except UnicodeDecodeError as error:
        raise EntryFault("not UTF-8 text") from error


def as_mapping(payload: bytes) -> dict[str, Any]:
    try:
        value = json.loads(as_text(payload))
    except ValueError as error:
        raise EntryFault("not JSON") from error
    if not isinstance(value, dict):
        raise EntryFault(f"a JSON {type(value).__name__} where a mapping should be")
    return value


@dataclass(frozen=True)
class Read:
    """What a cache read found: ``value`` None is a miss; ``fault`` says why, if it was one."""

    value: Any = None
    meta: dict[str, Any] = field(default_factory=dict)
    fault: str | None = None


@dataclass
class Cache:
    """One named cache in the store. Reads and writes never raise a store fault: a fault is a
    miss (the block runs, the diagram is drawn, ...) reported in one line. Make one per build:
    a cause is reported once per cache and build (a full disk fails every write, a store of
    another user's every read), with the first entry it met."""

    name: str
    store: Store
    _reported: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def for_project(cls, name: str, project_root: Path) -> Cache:
        return cls(name, FileStore(store_root(project_root)))

    def read(self, key: str, shape: Callable[[bytes], Any] = as_bytes) -> Read:
        try:
            entry = self.store.get(self.name, key)
            if entry is None:
                return Read()
            return Read(shape(entry.payload), entry.meta)
        except EntryFault as fault:
            self._report("read", fault, "entry %s unusable (%s): a miss", key[:12])
            return Read(fault=str(fault))

    def write(self, key: str, payload: bytes, **meta: Any) -> bool:
        """Store ``payload``; False when the store cannot."""
        try:
            self.store.put(self.name, key, Entry(payload, meta))
            return True
        except WriteFault as fault:
            self._report("write", fault, "cannot store entries (%s): the build goes on")
            return False

    def _report(self, kind: str, fault: StoreError, message: str, *where: str) -> None:
        if (kind, str(fault)) not in self._reported:
            self._reported.add((kind, str(fault)))
            log.warning(f"%s: {message}", self.name, *where, fault)

    def read_text(self, key: str) -> str | None:
        return self.read(key, as_text).value

    def write_text(self, key: str, text: str, **meta: Any) -> bool:
        return self.write(key, text.encode(), **meta)

    def read_mapping(self, key: str) -> Read:
        return self.read(key, as_mapping)

    def write_mapping(self, key: str, value: dict[str, Any], **meta: Any) -> bool:
        return self.write(key, json.dumps(value, sort_keys=True).encode(), **meta)


def key_of(*parts: str | bytes) -> str:
    """A store key: the SHA-256 of ``parts``, each length-prefixed (no two lists collide)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(f"{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()


if __name__ == "__main__":  # python -m build_support.store clear (make clean)
    if sys.argv[1:] != ["clear"]:
        raise SystemExit("usage: python -m build_support.store clear")
    root = store_root(Path.cwd())
    print(f"{root}: {FileStore(root).clear()} cache entries removed")
