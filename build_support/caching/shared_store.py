"""A store every machine building the course shares, behind each machine's own (issue 51).

Set by the build's ``shared_store`` setting (build_support/settings.py; ``$COURSE_SHARED_STORE``
in mkdocs.yml): an fsspec URL, ``s3://bucket/prefix``, ``gs://bucket/prefix`` (with gcsfs),
``file:///srv/course-store``, ``memory://`` (the tests'). Its entries are ``store.FileStore``'s,
byte for byte and at the same paths under the URL (``<cache>/<key[:2]>/<key>``: a header line
with the payload's SHA-256, then the payload), so a folder store copied into a bucket serves as
it is. ``$COURSE_SHARED_STORE_OPTIONS``, a JSON mapping, is given to the file system
(``{"client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"}}`` for an S3 server of one's
own); credentials come as the file system finds them (for S3, boto's: ``AWS_*`` variables,
``~/.aws``).

The caches named in ``SHARED_CACHES`` (executed outputs, drawn diagrams, the wheel) look an
entry up in the local store first, then in the shared one (``TieredStore``): a hit there is
checked by the same checksum, then copied into the local store. What the build runs is kept
locally and, unless ``shared_store_mode`` is ``read-only`` (a pull request's build), in the
shared store: one object written whole (on S3 a PUT is atomic; in a folder, a temporary file
renamed). Every other cache stays local.

A fault of the shared store is a miss, never a failed build nor a wrong output, and prints one
``cache warning:`` line naming the store (``course.store``, as ``cache.Cache`` reports): an
entry that fails its checksum or header is that entry's miss; a store that cannot be reached, is
denied, is named wrongly (a bucket that does not exist, an endpoint that is no store) or whose
file system is not installed is asked nothing more for the rest of the build; a store that
refuses writes is written no more. A build prunes only its local store: a bucket is bounded by
its owner (an S3 lifecycle rule, say).

``fsspec`` (and ``s3fs``) are imported on the first use of a shared store, never by a build
that names none.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .store import (
    LIMIT_BYTES,
    Entry,
    EntryFault,
    FileStore,
    Store,
    WriteFault,
    decode,
    encode,
    entry_path,
    store_root,
)

SHARED_CACHES = frozenset({"execution", "diagrams", "wheel", "durations"})
"""The caches whose entries the shared store holds (``durations``: the sessions' durations a
render-only build records, by which shards balance: cluster/shards.py); the others (the pages'
renders, the reach memo, ...) stay on each machine."""
OPTIONS_ENV = "COURSE_SHARED_STORE_OPTIONS"
"""A JSON mapping of the shared store's file-system options (fsspec's ``storage_options``)."""
READ_ONLY = "read-only"
S3_TIMEOUTS = {"connect_timeout": 5, "read_timeout": 20, "retries": {"max_attempts": 2}}
"""botocore's ``config_kwargs`` for an S3 store whose options give none: a store that does not
answer costs a build some seconds once (botocore's own: 60 s a try, 5 tries), then is not
asked again."""

log = logging.getLogger("course.store")  # cache.py gives it its ``cache warning:`` handler


def _cause(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


@dataclass(eq=False)
class SharedStore(Store):
    """The entries at ``url``, read and written through fsspec; every fault is a miss or a
    write not made, reported once in a line naming the store (``fetch``, ``offer``)."""

    url: str
    read_only: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    _fs: Any = field(default=None, repr=False)
    _root: str = field(default="", repr=False)
    _down: str | None = field(default=None, repr=False)  # why it is asked nothing more
    _unwritable: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # ------------------------------------------------ the Store interface (raises its faults)

    def _filesystem(self) -> tuple[Any, str]:
        if self._fs is None:
            import fsspec  # here: a build that names no shared store never imports it

            options = dict(self.options)
            if self.url.split("://")[0] in ("s3", "s3a") and "config_kwargs" not in options:
                options["config_kwargs"] = copy.deepcopy(S3_TIMEOUTS)  # botocore changes it
            self._fs, self._root = fsspec.core.url_to_fs(self.url, **options)
            self._root = self._root.rstrip("/")
        return self._fs, self._root

    def _path(self, cache: str, key: str) -> str:
        return f"{self._root}/{entry_path(cache, key)}" if self._root else entry_path(cache, key)

    def get(self, cache: str, key: str) -> Entry | None:
        """The entry, None where there is none; ``EntryFault`` for an unusable one; any other
        exception where the store itself fails."""
        fs, _ = self._filesystem()
        try:
            data = fs.cat_file(self._path(cache, key))
        except FileNotFoundError as error:
            if key not in str(error):  # not the entry: the bucket, or an endpoint not a store
                raise
            return None
        return decode(data)

    def put(self, cache: str, key: str, entry: Entry) -> None:
        """Write ``entry`` whole; any exception where the store refuses."""
        if self.read_only:
            return
        fs, _ = self._filesystem()
        path, data = self._path(cache, key), encode(entry)
        if "file" not in _protocols(fs):
            fs.pipe_file(path, data)  # one object, written whole (S3, GCS) or not at all
            return
        fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
        temporary = f"{path.rsplit('/', 1)[0]}/.tmp-{uuid.uuid4().hex}"
        try:
            fs.pipe_file(temporary, data)
            fs.mv(temporary, path)  # a rename in one folder: readers see a whole entry
        finally:
            with contextlib.suppress(Exception):
                if fs.exists(temporary):
                    fs.rm_file(temporary)

    def prune(self, limit_bytes: int = LIMIT_BYTES) -> int:
        return 0  # a shared store is bounded by its owner, never by one of its builds

    # ------------------------------------------------ what the tiered store uses (never raises)

    def fetch(self, cache: str, key: str) -> Entry | None:
        """``get``, with every fault a miss reported once."""
        if self._down is not None:
            return None
        try:
            return self.get(cache, key)
        except EntryFault as fault:
            self._warn(f"{cache} entry {key[:12]} unusable ({fault}): a miss")
        except Exception as error:
            self._fail(error)
        return None

    def offer(self, cache: str, key: str, entry: Entry) -> None:
        """``put``, unless the store is read-only, down or refused a write before."""
        if self.read_only or self._down is not None or self._unwritable:
            return
        try:
            self.put(cache, key, entry)
        except Exception as error:
            with self._lock:
                first, self._unwritable = not self._unwritable, True
            if first:
                self._warn(f"cannot store entries ({_cause(error)}): kept in the local store only")

    def _fail(self, error: BaseException) -> None:
        with self._lock:
            first = self._down is None
            self._down = self._down or _cause(error)
        if first:
            self._warn(f"cannot be read ({_cause(error)}): a miss, and not asked again this build")

    def _warn(self, message: str) -> None:
        log.warning("shared store %s: %s", self.url, message)


def _protocols(fs: Any) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


@dataclass
class TieredStore(Store):
    """The local store, then the shared one: a shared hit is copied into the local store; a
    write goes to both (the shared one unless it is read-only). The local store's faults are
    raised as ``FileStore`` raises them; the shared store's are its own (``SharedStore``)."""

    local: FileStore
    shared: SharedStore

    def get(self, cache: str, key: str) -> Entry | None:
        local_fault = None
        try:
            entry = self.local.get(cache, key)
        except EntryFault as fault:
            entry, local_fault = None, fault
        if entry is not None:
            return entry
        entry = self.shared.fetch(cache, key)
        if entry is not None:
            with contextlib.suppress(WriteFault):  # a local store that cannot keep it: reuse
                self.local.put(cache, key, entry)
            return entry
        if local_fault is not None:
            raise local_fault
        return None

    def put(self, cache: str, key: str, entry: Entry) -> None:
        try:
            self.local.put(cache, key, entry)
        finally:
            self.shared.offer(cache, key, entry)

    def prune(self, limit_bytes: int = LIMIT_BYTES) -> int:
        return self.local.prune(limit_bytes)


# Process scope: one shared store per build (its faults reported once, a store found down asked
# nothing more), made again for the next build of a ``mkdocs serve``.
_made: tuple[object, SharedStore] | None = None
_made_lock = threading.Lock()


def options_from_env() -> dict[str, Any]:
    """``$COURSE_SHARED_STORE_OPTIONS``, a JSON mapping; ``ValueError`` naming it otherwise."""
    text = os.environ.get(OPTIONS_ENV, "").strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ValueError(f"${OPTIONS_ENV} is not JSON ({error})") from error
    if not isinstance(value, dict):
        raise ValueError(f"${OPTIONS_ENV} is a JSON {type(value).__name__}, not a mapping")
    return value


def shared_store(project_root: Path) -> SharedStore | None:
    """The shared store of the project's build, None where its settings name none."""
    global _made
    from .. import settings  # here: the rest of this module needs the standard library only

    current = settings.current(project_root)
    if not current.shared_store:
        return None
    with _made_lock:
        if _made is None or _made[0] is not current:
            store = SharedStore(current.shared_store, current.shared_store_mode == READ_ONLY)
            try:
                store.options = options_from_env()
            except ValueError as error:
                store._fail(error)
            _made = (current, store)
        return _made[1]


def store_for(cache: str, project_root: Path) -> Store:
    """The store of the named cache: the local one, behind which the shared one where the
    build names one and the cache is shared."""
    local = FileStore(store_root(project_root))
    shared = shared_store(project_root) if cache in SHARED_CACHES else None
    return local if shared is None else TieredStore(local, shared)
