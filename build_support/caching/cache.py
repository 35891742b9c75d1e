"""The execution cache: each executed output stored under the key of what it depends on, and
the one protocol every executed output goes through (``OutputCache``).

An entry is reused only when every ingredient of its key is the same as when it was stored, and
every file its run read is unchanged (``build_support/execution/reads.py``). What the key holds
is listed once, in ``environment.Environment.described`` (the Build report prints that list);
``build_support/caching/ingredients.py`` says why each rendering and environment ingredient is
there.

The protocol (``OutputCache``): ``look_up`` finds the entry for an output's ingredients and
remembers them (its reuse), or says why the output must run; ``keep`` stores what the run
produced and remembers its ingredients, so that the next run can say what changed. Blocks,
sessions, notebooks, their rendered pages and the prose's numbers all go through it.

Entries are JSON mappings in the store's ``execution`` cache (build_support/caching/store.py:
under ``.cache/``, or ``$COURSE_CACHE_DIR``), checksummed and written atomically there: an entry
that is truncated, edited, unreadable or not a mapping is a miss, and the output runs again.
"""

from __future__ import annotations

import functools
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import settings
from ..section import PACKAGE
from . import named_cache, store


def digest(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def key_of(ingredients: dict[str, str]) -> str:
    return digest(canonical(ingredients))


def why_it_ran(previous: dict[str, str] | None, current: dict[str, str]) -> list[str]:
    """What changed since the last time this output was stored, in words."""
    if previous is None:
        return ["no cache entry"]
    names = sorted(set(previous) | set(current), key=_reason_order)
    changed = [name for name in names if previous.get(name) != current.get(name)]
    if not changed:
        return ["no cache entry"]
    return [_reason(name, previous.get(name), current.get(name)) for name in changed]


def _reason_order(name: str) -> tuple[int, str]:
    return (0 if "/" in name or name == PACKAGE else 1, name)


def _reason(name: str, before: str | None, after: str | None) -> str:
    if "/" in name:
        if before is None:
            return f"`{name}` added"
        return f"`{name}` removed" if after is None else f"`{name}` changed"
    if name == "backend":
        return f"backend changed ({after})"
    if name == "python":
        return f"Python changed ({before} -> {after})"
    if name.endswith(" variables"):
        return f"environment changed ({after})"
    words = {
        "tools": "tool versions changed",
        "source": "its source changed",
        "options": "its options changed",
        "session": "a block of its session changed",
        "kernel": "the notebook's kernel changed",
        "markdown": "the Markdown settings changed",
        "rendering tools": "rendering tool versions changed",
    }
    return words.get(name, f"{name} changed")


# ---------------------------------------------------------------- storage


def _entry_of(key: str, payload: bytes) -> dict[str, Any]:
    """The stored mapping, if it is the entry of ``key`` (an entry copied under another key is
    a fault, as a corrupt one is: a miss, reported once by the store)."""
    entry = named_cache.as_mapping(payload)
    if entry.get("key") != key:
        raise store.EntryFault("it holds another key")
    return entry


@dataclass
class Lookup:
    payload: dict[str, Any] | None
    corrupt: bool = False  # an entry was there but could not be used: a miss all the same


def no_objections(payload: dict[str, Any]) -> list[str]:
    return []


@dataclass
class Found:
    """One output's look-up: the stored entry it reuses, or why it must run (then ``keep``
    what the run produced)."""

    key: str
    ingredients: dict[str, str]
    identity: str | None  # page + block: whose last ingredients say why it ran; None: unsaid
    entry: dict[str, Any] | None = None  # the stored payload, reused
    reasons: list[str] = field(default_factory=list)  # why it runs, when entry is None


class OutputCache(ABC):
    """Executed outputs under the key of their ingredients: the protocol every output follows."""

    @abstractmethod
    def look_up(
        self,
        ingredients: dict[str, str],
        identity: str | None = None,
        objections: Callable[[dict[str, Any]], list[str]] = no_objections,
    ) -> Found:
        """The entry to reuse (its ingredients then remembered for ``identity``), or why the
        output runs; ``objections(payload)``: why a stored entry cannot serve (files it read
        that have changed since), each a reason to run."""

    @abstractmethod
    def keep(self, found: Found, payload: dict[str, Any]) -> None:
        """Store what the output's run produced, and remember its ingredients."""


@dataclass
class ExecutionCache(OutputCache):
    """``OutputCache`` in the store under ``root`` (``store.FileStore``): executed outputs
    (``store``/``load``) and each output's last ingredients (``remember``); a fault is a miss,
    reported once by the store."""

    root: Path
    read_enabled: bool = True
    name: str = "execution"

    def __post_init__(self) -> None:
        self._cache = named_cache.Cache(self.name, store.FileStore(self.root))

    @classmethod
    def for_project(cls, project_root: Path) -> ExecutionCache:
        fresh = settings.current(project_root).fresh  # the same build's settings as the root's
        return cls(root=store.store_root(project_root), read_enabled=not fresh)

    def look_up(self, ingredients, identity=None, objections=no_objections) -> Found:
        found = Found(key_of(ingredients), ingredients, identity)
        lookup = self.load(found.key)
        if lookup.payload is not None:
            found.reasons = objections(lookup.payload)
            if not found.reasons:
                found.entry = lookup.payload
                self._remember(found)
                return found
        found.reasons = found.reasons or self._why_it_runs(lookup, identity, ingredients)
        return found

    def keep(self, found: Found, payload: dict[str, Any]) -> None:
        self.store(found.key, payload)
        self._remember(found)

    def _remember(self, found: Found) -> None:
        if found.identity is not None:
            self.remember(found.identity, found.ingredients)

    def _why_it_runs(self, lookup: Lookup, identity, ingredients) -> list[str]:
        if not self.read_enabled:
            return ["FRESH=1"]
        if lookup.corrupt:
            return ["cache entry corrupt"]
        previous = self.last_ingredients(identity) if identity is not None else None
        return why_it_ran(previous, ingredients)

    def load(self, key: str) -> Lookup:
        if not self.read_enabled:
            return Lookup(None)
        found = self._cache.read(key, functools.partial(_entry_of, key))
        return Lookup(found.value, corrupt=found.fault is not None)

    def store(self, key: str, payload: dict[str, Any]) -> None:
        self._cache.write_mapping(key, {**payload, "key": key})

    def last_ingredients(self, identity: str) -> dict[str, str] | None:
        """The ingredients this output (page + block) had the last time it was stored."""
        return self._cache.read_mapping(store.key_of("last", identity)).value

    def remember(self, identity: str, ingredients: dict[str, str]) -> None:
        if self.last_ingredients(identity) != ingredients:  # a read is cheaper than a write
            self._cache.write_mapping(store.key_of("last", identity), ingredients)
