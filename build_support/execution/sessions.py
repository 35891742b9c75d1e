"""markdown-exec sessions, the data: each session's blocks read from the page's Markdown before
it renders (``fences``), the slots its outputs go into (``Session``, ``Slot``), and the worker
process its blocks run in (``Session.worker``: one per page and session, whose globals they
share; never markdown-exec's, never the build's). How a build runs them, one cache entry and
one run per session: ``session_runs.py``.

Blocks of a session share their globals, so a session is one cache entry, keyed on all of its
code (``fences`` reads it from the page's Markdown, snippets expanded by pymdownx.snippets as
the page will show them). While the page renders, each block of a session is given a slot, not
its output: if a later block turns out not to match the stored run, every earlier block is run
again and its slot takes the new output. ``Session.fill`` writes the slots into the page's HTML
(``on_page_content``), so every output, caption and timing on the page comes from one run.
"""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..caching.cache import Lookup, digest, key_of
from .fence_options import is_timed

NOT_READ = "session not read from the page's Markdown"

# A fence that markdown-exec executes in a session: its header line, then its code.
_SESSION_FENCE = re.compile(
    r'^(?P<indent>[ \t]*)(?P<ticks>`{3,})[ \t]*(?:python|py)\b(?P<header>[^\n]*\bsession="'
    r'(?P<session>[^"]+)"[^\n]*)\n(?P<code>.*?)^(?P=indent)(?P=ticks)[ \t]*$',
    re.MULTILINE | re.DOTALL,
)
_NOT_EXECUTED = re.compile(r'\bexec="(?:no|off|false|0)"')


def fences(markdown: str) -> Iterator[tuple[str, str, str]]:
    """(session name, header, code) of every executed session fence, in page order."""
    for match in _SESSION_FENCE.finditer(markdown):
        if _NOT_EXECUTED.search(match["header"]) or "exec=" not in match["header"]:
            continue
        indent = len(match["indent"])
        code = "\n".join(line[indent:] for line in match["code"].splitlines())
        yield match["session"], match["header"].strip(), code.rstrip("\n")


@dataclass
class Slot:
    """Where one block's output and run label go in the page, filled once the session is done."""

    output_token: str
    ran_on_token: str
    html: str = ""
    ran_on: str = ""
    run: Any = None  # the block's runs.Run, completed when filled


@dataclass
class Session:
    """A session's blocks on one page, read from its Markdown, and how this build treats it."""

    headers: list[str]
    codes: list[str]
    name: str = ""  # markdown-exec's session name
    position: int = 0  # blocks of it formatted so far
    entry: dict[str, Any] | None = None  # reused from the cache when set
    reasons: list[str] = field(default_factory=list)
    found: Lookup | None = None  # its look-up in the cache, at its first block
    blocks: list[dict[str, Any]] = field(default_factory=list)  # what this build ran
    options_seen: list[dict[str, Any]] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    reads: dict[str, str] = field(default_factory=dict)  # files its run read
    failed: bool = False
    measured: dict[str, str] | None = None
    worker: Any = None  # LazyWorker (the process its blocks share), or ahead.Replies
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def timed(self) -> bool:
        return any(is_timed(header) for header in self.headers)

    def run_afresh(self) -> None:
        """Run again from its first block: in a new worker, with no block run yet."""
        self.close()
        self.blocks, self.measured = [], None

    def close(self) -> None:
        """End its worker (and whatever its blocks started): the session is done."""
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def new_slot(self) -> Slot:
        prefix = f"exec-session-{self.token}-{len(self.slots)}"
        slot = Slot(f"{prefix}-output", f"{prefix}-ran-on")
        self.slots.append(slot)
        return slot

    def stored(self, position: int) -> dict[str, Any] | None:
        """Block ``position`` of the stored run being reused, if there is one."""
        blocks = self.entry["blocks"] if self.entry is not None else []
        return blocks[position] if position < len(blocks) else None

    def complete(self) -> bool:
        """Every block the page's Markdown showed has run in this build, none failed."""
        return not self.failed and len(self.blocks) == len(self.codes) == len(self.slots)

    def fill(self, content: str) -> str:
        """The page's HTML with this session's outputs and run labels in their slots."""
        for slot in self.slots:
            content = content.replace(slot.output_token, slot.html)
            content = content.replace(slot.ran_on_token, html.escape(slot.ran_on))
            slot.run.ran_on = slot.ran_on
        return content


def session_lookup(
    build: Any,
    page: str,
    name: str,
    headers: list[str],
    codes: list[str],
    plan: bool = False,
) -> Lookup:
    """A session's look-up in the cache, keyed on all its code (``plan``: ahead of its page,
    ``ahead.py``; the page's own look-up reuses it). ``build``: the ``state.BuildState``."""
    all_code = "\n".join(codes)
    ingredients = build.environment.ingredients(
        all_code, rendered=True, session=digest("\n".join(headers) + "\n" + all_code)
    )
    identity = f"{page} session {name}"
    if not codes:
        key = key_of(ingredients)
        return Lookup(key, ingredients=ingredients, identity=identity, reasons=[NOT_READ])

    def objections(payload: dict[str, Any]) -> list[str]:
        blocks = len(payload.get("blocks", []))
        shape = [] if blocks == len(codes) else [f"its entry holds {blocks} blocks"]
        return build.stale_reads(payload) or shape

    return build.look_up(ingredients, identity, objections, plan=plan)
