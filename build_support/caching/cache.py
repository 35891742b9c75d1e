"""The cache's one protocol, in one file: a key (``key_of``), one result of a read
(``Lookup``), a named cache in the store where a fault is a miss (``Cache``), and the protocol
every executed output goes through (``OutputCache``, kept by ``ExecutionCache``).

- ``key_of(*parts)``: the one key function, for every cache: the SHA-256 of its parts, each
  length-prefixed (no two lists collide); a mapping (an output's ingredients) is one part, as
  canonical JSON.
- ``Lookup``: what one read found: the ``entry`` (None: a miss), the ``fault`` that made it a
  miss if one did, and for an executed output its ``ingredients`` and why it must run.
- ``Cache``: one named cache in the store (``execution``, ``reach``, ``diagrams``, ``notebook-
  trim``, ``wheel``): an entry that cannot be used (corrupt, unreadable, of the wrong shape) and
  an entry that cannot be stored (read-only or full disk) cost a run, never a failed build or a
  wrong output, and print one line naming the cache and the cause. That line is a WARNING of the
  ``course.store`` logger, outside the ``mkdocs`` logger tree on purpose: ``mkdocs build
  --strict`` counts the warnings of that tree and aborts, and a cache fault must not fail a
  build whose output is right. It prints as ``cache warning: <cache>: <what> (<cause>)``.
- ``OutputCache``: ``look_up`` finds the entry for an output's ingredients and remembers them
  (its reuse), or says why the output must run; ``keep`` stores what the run produced and
  remembers its ingredients, so that the next run can say what changed (``reasons.py``).
  Blocks, sessions, notebooks, their rendered pages and the prose's numbers all go through it.

An entry is reused only when every ingredient of its key is the same as when it was stored, and
every file its run read is unchanged (``build_support/execution/reads.py``). What the key holds
is listed once, in ``environment.Environment.described`` (the Build report prints that list);
``reach.py`` says what it holds of the ``examples`` package, ``ingredients.py`` why each
rendering and environment ingredient is there. Entries are JSON mappings in the store's
``execution`` cache (``store.py``: under ``.cache/``, or ``$COURSE_CACHE_DIR``; behind it, a
store shared by every machine where the build names one: ``shared_store.py``), checksummed
and written atomically: an entry that is truncated, edited, unreadable or not a mapping is a
miss, and the output runs again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import settings
from .reasons import why_it_ran
from .shared_store import SharedStore, TieredStore, shared_store, store_for
from .store import Entry, EntryFault, FileStore, Store, StoreError, WriteFault, store_root

log = logging.getLogger("course.store")


class _Stderr(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(f"{self.format(record)}\n")  # sys.stderr as it is now (pytest swaps it)


if not log.handlers:
    _handler = _Stderr()
    _handler.setFormatter(logging.Formatter("cache warning: %(message)s"))
    log.addHandler(_handler)


def digest(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def key_of(*parts: str | bytes | Mapping[str, Any]) -> str:
    """The key of every cache: the SHA-256 of ``parts``, each length-prefixed (no two lists
    collide); a mapping (an output's ingredients) counts as its canonical JSON."""
    hashed = hashlib.sha256()
    for part in parts:
        text = canonical(part) if isinstance(part, Mapping) else part
        data = text.encode() if isinstance(text, str) else text
        hashed.update(f"{len(data)}:".encode())
        hashed.update(data)
    return hashed.hexdigest()


@dataclass
class Lookup:
    """One read of a cache: the entry it found, or a miss (and the fault that made it one); for
    an executed output, what it was looked up by and why it must run (then ``keep`` it)."""

    key: str
    entry: Any = None  # the stored payload, shaped by the reader; None: a miss
    meta: dict[str, Any] = field(default_factory=dict)
    fault: str | None = None  # an entry was there but could not be used: a miss all the same
    ingredients: dict[str, str] = field(default_factory=dict)
    identity: str | None = None  # page + block: whose last ingredients say why it ran
    reasons: list[str] = field(default_factory=list)  # why it runs, when entry is None


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
        """The named cache of the project's build: in its local store, behind which its shared
        store where the build names one and the cache is shared (``shared_store.py``)."""
        return cls(name, store_for(name, project_root))

    def read(self, key: str, shape: Callable[[bytes], Any] = as_bytes) -> Lookup:
        try:
            entry = self.store.get(self.name, key)
            if entry is None:
                return Lookup(key)
            return Lookup(key, shape(entry.payload), entry.meta)
        except EntryFault as fault:
            self._report("read", fault, "entry %s unusable (%s): a miss", key[:12])
            return Lookup(key, fault=str(fault))

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
        return self.read(key, as_text).entry

    def write_text(self, key: str, text: str, **meta: Any) -> bool:
        return self.write(key, text.encode(), **meta)

    def read_mapping(self, key: str) -> Lookup:
        return self.read(key, as_mapping)

    def write_mapping(self, key: str, value: dict[str, Any], **meta: Any) -> bool:
        return self.write(key, json.dumps(value, sort_keys=True).encode(), **meta)


# ---------------------------------------------------------------- executed outputs


def _entry_of(key: str, payload: bytes) -> dict[str, Any]:
    """The stored mapping, if it is the entry of ``key`` (an entry copied under another key is
    a fault, as a corrupt one is: a miss, reported once by the store)."""
    entry = as_mapping(payload)
    if entry.get("key") != key:
        raise EntryFault("it holds another key")
    return entry


def no_objections(payload: dict[str, Any]) -> list[str]:
    return []


class OutputCache(ABC):
    """Executed outputs under the key of their ingredients: the protocol every output follows."""

    @abstractmethod
    def look_up(
        self,
        ingredients: dict[str, str],
        identity: str | None = None,
        objections: Callable[[dict[str, Any]], list[str]] = no_objections,
    ) -> Lookup:
        """The entry to reuse (its ingredients then remembered for ``identity``), or why the
        output runs; ``objections(payload)``: why a stored entry cannot serve (files it read
        that have changed since), each a reason to run."""

    @abstractmethod
    def keep(self, found: Lookup, payload: dict[str, Any]) -> None:
        """Store what the output's run produced, and remember its ingredients."""


@dataclass
class ExecutionCache(OutputCache):
    """``OutputCache`` in the store under ``root`` (``store.FileStore``): executed outputs
    (``store``/``load``) and each output's last ingredients (``remember``); a fault is a miss,
    reported once by the store."""

    root: Path
    read_enabled: bool = True
    name: str = "execution"
    shared: SharedStore | None = None  # the store shared by every machine, behind ``root``'s

    def __post_init__(self) -> None:
        local = FileStore(self.root)
        tiers = local if self.shared is None else TieredStore(local, self.shared)
        self._cache = Cache(self.name, tiers)

    @classmethod
    def for_project(cls, project_root: Path) -> ExecutionCache:
        fresh = settings.current(project_root).fresh  # the same build's settings as the root's
        shared = shared_store(project_root)
        return cls(root=store_root(project_root), read_enabled=not fresh, shared=shared)

    def look_up(self, ingredients, identity=None, objections=no_objections) -> Lookup:
        found = self.load(key_of(ingredients))
        found.ingredients, found.identity = ingredients, identity
        if found.entry is not None:
            found.reasons = objections(found.entry)
            if not found.reasons:
                self._remember(found)
                return found
            found.entry = None  # stored, but it cannot serve: the output runs
        found.reasons = found.reasons or self._why_it_runs(found)
        return found

    def keep(self, found: Lookup, payload: dict[str, Any]) -> None:
        self.store(found.key, payload)
        self._remember(found)

    def _remember(self, found: Lookup) -> None:
        if found.identity is not None:
            self.remember(found.identity, found.ingredients)

    def _why_it_runs(self, found: Lookup) -> list[str]:
        if not self.read_enabled:
            return ["FRESH=1"]
        if found.fault is not None:
            return ["cache entry corrupt"]
        identity = found.identity
        previous = self.last_ingredients(identity) if identity is not None else None
        return why_it_ran(previous, found.ingredients)

    def load(self, key: str) -> Lookup:
        """The stored entry of ``key`` (a mapping), or a miss."""
        if not self.read_enabled:
            return Lookup(key)
        return self._cache.read(key, lambda payload: _entry_of(key, payload))

    def store(self, key: str, payload: dict[str, Any]) -> None:
        self._cache.write_mapping(key, {**payload, "key": key})

    def last_ingredients(self, identity: str) -> dict[str, str] | None:
        """The ingredients this output (page + block) had the last time it was stored."""
        return self._cache.read_mapping(key_of("last", identity)).entry

    def remember(self, identity: str, ingredients: dict[str, str]) -> None:
        if self.last_ingredients(identity) != ingredients:  # a read is cheaper than a write
            self._cache.write_mapping(key_of("last", identity), ingredients)
