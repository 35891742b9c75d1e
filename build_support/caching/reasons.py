"""Why an executed output ran, in words: what changed among its key's ingredients since the
last time it was stored (the Build report and the build's log print them)."""

from __future__ import annotations

from ..section import PACKAGE

_WORDS = {
    "tools": "tool versions changed",
    "source": "its source changed",
    "options": "its options changed",
    "session": "a block of its session changed",
    "kernel": "the notebook's kernel changed",
    "markdown": "the Markdown settings changed",
    "rendering tools": "rendering tool versions changed",
    PACKAGE: f"what it reaches in {PACKAGE} changed",
}


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
    return _WORDS.get(name, f"{name} changed")
