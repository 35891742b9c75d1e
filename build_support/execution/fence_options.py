"""What a ``python exec`` fence's options say, read in one place: the block's id, whether it
is a timing (``timed="yes"``), and the options' part of its cache key."""

from __future__ import annotations

from typing import Any

from ..caching.cache import canonical, digest

NO_ID = "(no id)"
"""The id of a block whose fence has none, in the Build report, the record and its failures."""
TIMED = 'timed="yes"'


def block_id(options: dict[str, Any]) -> str:
    return options.get("id") or NO_ID


def is_timed(header_or_options: str | dict[str, Any]) -> bool:
    """A ``timed="yes"`` block (a fence's header line, or markdown-exec's options): a timing,
    expected to change from build to build; run once the notebooks' cells have run."""
    if isinstance(header_or_options, dict):
        return (header_or_options.get("extra") or {}).get("timed") == "yes"
    return TIMED in header_or_options


def own_ingredients(options: dict[str, Any]) -> dict[str, str]:
    """A block's own part of its key: its code and its options."""
    plain = {name: value for name, value in options.items() if name not in ("code", "md")}
    return {"source": digest(options["code"]), "options": digest(canonical(plain))}


def own_digest(options: dict[str, Any]) -> str:
    """``own_ingredients`` as one digest: stored with each block of a session's entry."""
    return digest(canonical(own_ingredients(options)))
