"""One named cache in the store (build_support/caching/store.py), where a fault is a miss.

Every cache of the build (``execution``, ``diagrams``, ``notebook-trim``, ``wheel``) reads and
writes through ``Cache``: an entry that cannot be used (corrupt, unreadable, of the wrong shape)
and an entry that cannot be stored (read-only or full disk) cost a run, never a failed build or
a wrong output, and print one line naming the cache and the cause.

That line is a WARNING of the ``course.store`` logger, outside the ``mkdocs`` logger tree on
purpose: ``mkdocs build --strict`` counts the warnings of that tree and aborts, and a cache fault
must not fail a build whose output is right. Nor is it an INFO of that tree: ``mkdocs build -q``
would hide it, and a store that cannot be used is worth seeing. It prints as
``cache warning: <cache>: <what> (<cause>)``, not in mkdocs' ``WARNING -`` form, so it is not
mistaken for a warning that fails the build.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .store import Entry, EntryFault, FileStore, Store, StoreError, WriteFault, store_root

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
