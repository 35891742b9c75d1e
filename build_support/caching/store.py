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

Pruning walks every file of the store only when it may have to delete one. The store's size
is kept in ``.usage.json`` at its root, per folder (``<cache>/<key[:2]>``): the folder's mtime
when it was last counted and the bytes of its entries then. Every write, replacement or
deletion of an entry renames or unlinks a file in its folder, which changes the folder's mtime
(a hit's ``os.utime`` changes the entry's, not the folder's): ``prune`` stats the folders
(some 1,500 where the store has 24,000 entries), counts again only those whose mtime moved,
and walks every entry only when that total passes the bound (then it deletes the least
recently used, as above), when there is no usable record, or once every ``WALK_EVERY``
prunes (stale temporary files of dead writers go then, and any drift is corrected). A folder
whose mtime is within ``RACY_S`` of its count is counted again the next time (a file system
with coarse mtimes could hide a write made in the same tick). The record is written
atomically, as entries are, and only by the build holding ``PRUNE_LOCK``; a record that
cannot be read or written costs a full walk, never a wrong deletion: it can only make the
store be walked more often.

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

WALK_EVERY = 100  # prunes between two walks of every entry where the bound is never near
RACY_S = 2.0  # a folder's mtime this close to its count is not trusted (coarse mtimes)
USAGE = ".usage.json"  # the store's size per folder, at its root (see above)

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


def _is_stored(path: Path, folder: str | None = None) -> bool:
    """An entry of the store's layout (its key, in the folder of its first two letters), or a
    writer's temporary file."""
    folder = path.parent.name if folder is None else folder
    entry = _KEY.fullmatch(path.name) is not None and path.name[:2] == folder
    return entry or path.name.startswith(".tmp-")


def _is_count(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(n, int) for n in value)


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
    folders_counted: int = field(default=0, repr=False, compare=False)
    """How many folders ``prune`` counted again (their mtime moved), in this object's life."""

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
            if _is_stored(path):
                try:
                    found.append((path, path.stat()))
                except OSError:
                    continue
        return found

    def prune(self, limit_bytes: int = LIMIT_BYTES) -> int:
        with _alone(self.root / PRUNE_LOCK) as alone:
            return self._prune(limit_bytes) if alone else 0  # another build prunes it now

    def _prune(self, limit_bytes: int) -> int:
        """Count the folders that changed; walk every entry only where the bound may be
        passed, there is no record, or ``WALK_EVERY`` prunes have gone by (module docstring)."""
        record = self._read_usage()
        if record is not None and record["prunes"] + 1 < WALK_EVERY:
            folders = self._counted(record["folders"])
            if sum(size for _, size in folders.values()) <= limit_bytes:
                self._write_usage({"folders": folders, "prunes": record["prunes"] + 1})
                return 0  # the bound cannot be passed: no entry is walked
        removed = self._walk_and_prune(limit_bytes)
        self._write_usage({"folders": self._counted({}), "prunes": 0})
        return removed

    def _walk_and_prune(self, limit_bytes: int) -> int:
        entries, now = [], time.time()
        for path, stat in self.entries():
            if path.name.startswith(".tmp-") and now - stat.st_mtime > STALE_TEMP_S:
                with contextlib.suppress(OSError):  # a read-only store is pruned by no one
                    path.unlink()
                    continue
            entries.append((path, stat))
        return prune_least_used(entries, limit_bytes)

    def _counted(self, known: dict[str, list[int]]) -> dict[str, list[int]]:
        """``{"<cache>/<xx>": [mtime_ns, bytes]}`` for every folder of the store: a folder
        whose mtime is the one ``known`` holds keeps its count; another is counted again
        (recorded as mtime -1 where racy: counted again the next time)."""
        counted, now = {}, time.time_ns()
        for folder in self.root.glob("*/??"):
            name = f"{folder.parent.name}/{folder.name}"
            try:
                mtime = folder.stat().st_mtime_ns
            except OSError:
                continue
            before = known.get(name)
            if before is not None and before[0] == mtime:
                counted[name] = before
                continue
            self.folders_counted += 1
            size = 0
            with contextlib.suppress(OSError), os.scandir(folder) as found:
                for item in found:
                    if _is_stored(Path(item.name), folder.name):
                        with contextlib.suppress(OSError):
                            size += item.stat().st_size
            racy = now - mtime < RACY_S * 1e9
            counted[name] = [-1 if racy else mtime, size]
        return counted

    def _read_usage(self) -> dict[str, Any] | None:
        try:
            record = json.loads((self.root / USAGE).read_text(encoding="utf-8"))
            folders, prunes = record["folders"], record["prunes"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        shaped = isinstance(folders, dict) and isinstance(prunes, int)
        if not shaped or not all(_is_count(value) for value in folders.values()):
            return None
        return record

    def _write_usage(self, record: dict[str, Any]) -> None:
        """Atomically, as an entry; a store that cannot keep it is walked the next time."""
        temporary = None
        try:
            handle, temporary = tempfile.mkstemp(dir=self.root, prefix=".tmp-usage-")
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(record, file, sort_keys=True, separators=(",", ":"))
                os.fchmod(file.fileno(), 0o666 & ~self.umask)
            os.replace(temporary, self.root / USAGE)
        except OSError:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    Path(temporary).unlink()

    def clear(self) -> int:
        """Delete every entry (``make clean``), then the folders left empty; return how many."""
        entries = self.entries()
        for path, _ in entries:
            path.unlink(missing_ok=True)
        (self.root / USAGE).unlink(missing_ok=True)
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
