"""The one reader of a ``python exec`` fence: the plan (``plan.py``, before any page renders) and
the page (``sessions.py``) read a fence here, so they cannot read one differently.

``read`` finds each executed fence of a page's Markdown and reads its options with superfences'
option pattern and markdown-exec's own validator, as the page will pass them to the formatter.
The rest says what a fence's options mean: its id, whether it is a timing (``timed="yes"``), its
time limit (``timeout``), and its own part of the cache key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..caching.cache import canonical, digest
from ..caching.ingredients import expand_snippets
from .executor import DEFAULT_TIMEOUT_S

LANGUAGES = ("python", "py")  # markdown-exec's names for the language the build runs
TIMEOUT_OPTION = "timeout"  # ```python exec="on" id="slow" timeout="120"
NO_ID = "(no id)"
"""The id of a block whose fence has none, in the Build report, the record and its failures."""

_FENCE = re.compile(  # a fence: its header line, then its code
    r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})[ \t]*(?P<language>[\w-]+)(?P<header>[^\n]*)\n"
    r"(?P<code>.*?)^(?P=indent)(?P=ticks)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Fence:
    """One executed fence: markdown-exec's options for it (``code`` among them), and its header
    line (after the language), which a session's key holds as written."""

    options: dict[str, Any]
    header: str

    @property
    def code(self) -> str:
        """The code as a session's key holds it: without the empty lines at its end."""
        return str(self.options["code"]).rstrip("\n")


def read(markdown: str, languages: tuple[str, ...] = LANGUAGES) -> Iterator[Fence]:
    """Every fence of ``languages`` that markdown-exec executes, in page order."""
    from markdown_exec import validator
    from pymdownx.superfences import RE_OPTIONS

    for match in _FENCE.finditer(markdown):
        if match["language"] not in languages:
            continue
        values = {}
        for option in RE_OPTIONS.finditer(match["header"]):
            values[option["key"]] = option["key"] if option["value"] is None else option["value"]
        options: dict[str, Any] = {}
        if not validator(match["language"], values, options, {}, None):
            continue  # not executed
        indent = len(match["indent"])
        code = "\n".join(line[indent:] for line in match["code"].splitlines())
        # A last empty line kept, as superfences keeps it.
        yield Fence(options | {"code": code}, match["header"].strip())


def of_page(markdown: str, config: Any) -> list[tuple[str, list[Fence], bool]]:
    """A page's executed fences by session: each one's name, fences, and whether it is a block
    alone (a session of its own, named by its own digest); snippets expanded as the page will
    show them (``config``: MkDocs'), so an edit to a snippet is in the key."""
    plugin = config.plugins.get("markdown-exec") if config is not None else None
    languages = LANGUAGES if plugin is None else plugin.config.languages  # those it executes
    if config is not None and "--8<--" in markdown:
        markdown = expand_snippets(markdown, config)
    alone: list[tuple[str, list[Fence], bool]] = []
    in_sessions: dict[str, list[Fence]] = {}
    for fence in read(markdown, tuple(name for name in LANGUAGES if name in languages)):
        if name := fence.options["session"]:
            in_sessions.setdefault(name, []).append(fence)
        else:
            alone.append((own_digest(fence.options), [fence], True))
    return alone + [(name, found, False) for name, found in in_sessions.items()]


def block_id(options: dict[str, Any]) -> str:
    return options.get("id") or NO_ID


def is_timed(options: dict[str, Any]) -> bool:
    """A ``timed="yes"`` block: a timing, expected to change from build to build; run once the
    notebooks' cells have run, with nothing running ahead beside it."""
    return (options.get("extra") or {}).get("timed") == "yes"


def timeout(options: dict[str, Any]) -> float | str:
    """The block's time limit in seconds (its ``timeout`` option), or what is wrong with it."""
    value = (options.get("extra") or {}).get(TIMEOUT_OPTION)
    if value is None:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        return f'timeout="{value}": expected a number of seconds greater than 0'
    return seconds


def own_ingredients(options: dict[str, Any]) -> dict[str, str]:
    """A block's own part of its key: its code and its options."""
    plain = {name: value for name, value in options.items() if name not in ("code", "md")}
    return {"source": digest(options["code"]), "options": digest(canonical(plain))}


def own_digest(options: dict[str, Any]) -> str:
    """``own_ingredients`` as one digest: stored with each block of a session's entry, and what
    a block run ahead must match for its page to take its reply."""
    return digest(canonical(own_ingredients(options)))
