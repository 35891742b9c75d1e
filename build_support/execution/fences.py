"""The one reader of an executed fence: the plan (``sessions.plan_ahead``, before any page
renders) and the page (``sessions.py``) read a fence here, so they cannot read one differently.

``read`` finds each executed fence of a page's Markdown and reads its options with superfences'
option pattern and markdown-exec's own validator, as the page will pass them to the formatter;
the rest says what they mean: its name, a timing (``timed="yes"``), its ``timeout``, what its
worker runs (``to_run``: ``RUNS_AS``, ``PROMPT_LINES``), its own part of the cache key. Which
kinds run where is ARCHITECTURE.md's table (a shell block runs every build: ``SHELL_RUNS``).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..caching.cache import canonical, digest
from ..caching.ingredients import expand_snippets
from .executor import DEFAULT_TIMEOUT_S

RUNS_AS = {  # a fence's language -> what its worker runs: Python, or the shell named
    "python": "python",
    "py": "python",
    "pycon": "python",
    "sh": "sh",
    "bash": "bash",
    "console": "sh",
}
LANGUAGES = tuple(RUNS_AS)
REFUSED = {
    "pyodide": (
        "a pyodide block loads Pyodide from another host in the reader's browser, and this "
        "site requests no other host: use a python block (it runs at build time), or the "
        "page's Try it panel"
    ),
}
SHELL_RUNS = "a shell block runs every build: the files it reads cannot be recorded"
TIMEOUT_OPTION = "timeout"  # ```python exec="on" id="slow" timeout="120"
# ```python exec="on" varying="yes": an output that differs from run to run (an address, a
# clock): ``make check-cache`` compares the rest of the page and masks it (``is_varying``).
VARYING_OPTION = "varying"
BUILD_OPTIONS = ("timed", TIMEOUT_OPTION, VARYING_OPTION)  # the build's own fence options
# What markdown-exec hands back to superfences and pymdownx.highlight as the fence's own
# (``extra``): its title and its lines; ``icons`` is the tree's.
RENDER_OPTIONS = ("title", "hl_lines", "linenums", "linenums_style", "icons")
KNOWN_OPTIONS = (
    "exec", "id", "idprefix", "html", "source", "result", "returncode", "session", "updatetoc",
    "tabs", "workdir", "width", *RENDER_OPTIONS, *BUILD_OPTIONS,
)  # fmt: skip
NO_ID = "(no id)"
"""The name of a block its page's Markdown does not show, and that has no ``id`` or ``title``."""
BLOCK_NAME = "block_name"  # the build's own key in a block's options: its name (``named``)


@dataclass(frozen=True)
class Fence:
    """One executed fence: markdown-exec's options for it (``code`` among them), and its header
    line (after the language), which a session's key holds as written."""

    options: dict[str, Any]
    header: str
    line: int = 0  # the line of its header in its page's Markdown, from 1

    @property
    def code(self) -> str:
        """The code as a session's key holds it: without the empty lines at its end."""
        return str(self.options["code"]).rstrip("\n")


@dataclass(frozen=True)
class _Found:
    """A fence as superfences reads it: its header's parts, its code (dedented) and line."""

    start: re.Match[str]  # superfences' RE_NESTED_FENCE_START on its header
    code: str
    line: int

    @property
    def language(self) -> str:
        return self.start["lang"] or ""


def _found(markdown: str, first_line: int) -> Iterator[_Found]:
    """Every fence of ``markdown`` as superfences' scan finds it: a header it does not recognise
    is text; a fence holds no other fence; a line indented less than its opener abandons it, and
    one never closed holds the rest of the page."""
    from pymdownx.superfences import RE_NESTED_FENCE_START

    lines = markdown.split("\n")
    at = 0
    while at < len(lines):
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip(" \t"))]
        start = RE_NESTED_FENCE_START.match(lines[at], len(indent))
        opened, at = at, at + 1
        if start is None or start["unrecognized"]:
            continue
        closing = re.compile(rf"{start['fence']}[ \t]*$")
        body: list[str] = []
        while at < len(lines):
            line, at = lines[at], at + 1
            if not line.strip():
                body.append(line[len(indent) :])
            elif not line.startswith(indent):
                break  # not indented enough: no fence
            elif closing.match(content := line[len(indent) :]):
                code = "\n".join(body)
                yield _Found(start, code, first_line + opened)
                break
            else:
                body.append(content)
        else:
            return  # never closed: the rest of the page is its content


def read(markdown: str, languages: tuple[str, ...], first_line: int = 1) -> Iterator[Fence]:
    """Every fence of ``languages`` that markdown-exec executes, in page order (``first_line``:
    the line of ``markdown``'s first in its page)."""
    for found in _found(markdown, first_line):
        options = _executed(found)
        if options is None:
            continue
        if found.language in ("md", "markdown"):  # literate Markdown: its blocks run too
            yield from read(found.code, languages, found.line + 1)
        if found.language not in languages:
            continue
        # A last empty line kept, as superfences keeps it.
        language = "python" if found.language == "py" else found.language
        header = f"{language} {(found.start['options'] or '').strip()}"
        yield Fence(options | {"code": found.code, "language": language}, header, found.line)


def _executed(found: _Found) -> dict[str, Any] | None:
    """markdown-exec's options for the fence, read as superfences reads its options and
    markdown-exec's validator checks them; None where it does not execute it (no ``exec``)."""
    from markdown_exec import validator
    from pymdownx.superfences import RE_OPTIONS

    if not found.language or found.start["attrs"] is not None:
        return None  # ```{.python exec="on"}: superfences hands markdown-exec no options
    values = {}
    for option in RE_OPTIONS.finditer(found.start["options"] or ""):
        values[option["key"]] = option["key"] if option["value"] is None else option["value"]
    options: dict[str, Any] = {}
    return options if validator(found.language, values, options, {}, None) else None


def refused(markdown: str) -> Iterator[tuple[str, int]]:
    """Each fence of a kind the site refuses (``REFUSED``): its language and line."""
    for found in _found(markdown, 1):
        if found.language in REFUSED:
            yield found.language, found.line
        elif found.language in ("md", "markdown") and _executed(found) is not None:
            yield from ((kind, found.line + at) for kind, at in refused(found.code))


def unknown_options(options: dict[str, Any]) -> str | None:
    """What is wrong with a fence's options that no one reads (a misspelt ``timout``)."""
    unknown = sorted(set(options.get("extra") or {}) - set(KNOWN_OPTIONS))
    if not unknown:
        return None
    said = ", ".join(repr(name) for name in unknown)
    return f"unknown fence option {said}: the options are {', '.join(sorted(KNOWN_OPTIONS))}"


def to_run(options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """What the worker runs for the block: its code (a ``pycon``/``console`` block's prompt
    lines, as markdown-exec reads them), and how (Python or the shell, ``RUNS_AS``; the exit
    code expected of a shell; the folder and terminal width the block runs with)."""
    language = options.get("language", "python")
    code = str(options["code"])
    if language in PROMPT_LINES:
        code = PROMPT_LINES[language](code)[0]
    how = {"kind": RUNS_AS[language], "returncode": options.get("returncode") or 0}
    how |= {"workdir": options.get("workdir"), "width": options.get("width") or 0}
    return code, how | {"own_id": options.get("id") or ""}


def _pycon(code: str) -> tuple[str, str]:
    """A ``pycon`` block's code to run and to show: its ``>>>``/``...`` lines, as markdown-exec
    1.12's reads them (its reader is private; the parity test compares the two)."""
    lines = [line for line in code.split("\n") if line.startswith((">>> ", "... "))]
    return "\n".join(line[4:] for line in lines), "\n".join(lines)


def _console(code: str) -> tuple[str, str]:
    """A ``console`` block's commands (its ``$ ``/``% `` lines), shown with the prompt of its
    last line, as markdown-exec 1.12's reads them."""
    lines = code.split("\n")
    commands = "\n".join(line[2:] for line in lines if line[:2] in ("$ ", "% "))
    return commands, textwrap.indent(commands, lines[-1][:2])


PROMPT_LINES = {"pycon": _pycon, "console": _console}
"""markdown-exec's ``transform_source`` for a prompt block: its code to run, and to show."""


def is_shell(options: dict[str, Any]) -> bool:
    return RUNS_AS.get(options.get("language", "python")) != "python"


def by_session(found: list[Fence]) -> list[tuple[str, list[Fence], bool]]:
    """A page's executed fences (``on_page``) by session: each one's name, fences, and whether
    it is a block alone (a session of its own, named by its own digest)."""
    alone: list[tuple[str, list[Fence], bool]] = []
    in_sessions: dict[str, list[Fence]] = {}
    for fence in found:
        if (name := fence.options["session"]) and not is_shell(fence.options):
            in_sessions.setdefault(name, []).append(fence)
        else:
            alone.append((own_digest(fence.options), [fence], True))
    return alone + [(name, found, False) for name, found in in_sessions.items()]


def on_page(markdown: str, config: Any, page: str, first_line: int = 1) -> list[Fence]:
    """A page's executed fences in page order, each ``named``; snippets expanded as the page
    will show them (``config``: MkDocs'), so an edit to a snippet is in the key; ``first_line``:
    the line of ``markdown``'s first in the page's file (after its front matter)."""
    plugin = config.plugins.get("markdown-exec") if config is not None else None
    languages = LANGUAGES if plugin is None else plugin.config.languages  # those it executes
    languages = tuple(name for name in LANGUAGES if name in languages)
    found = list(read(markdown, languages, first_line))
    if config is not None and "--8<--" in markdown:
        expanded = list(read(expand_snippets(markdown, config), languages, first_line))
        found = _at_source_lines(expanded, found)
    return named(found, page)


def _at_source_lines(expanded: list[Fence], own: list[Fence]) -> list[Fence]:
    """The fences of the page with its snippets expanded, each at the line of the next fence of
    the page's own Markdown (``own``) with the same header; one a snippet file brought keeps its
    line in the page as expanded."""
    placed, cursor = [], 0
    for fence in expanded:
        at = next((i for i in range(cursor, len(own)) if own[i].header == fence.header), None)
        if at is not None:
            fence, cursor = Fence(fence.options, fence.header, own[at].line), at + 1
        placed.append(fence)
    return placed


def named(found: list[Fence], page: str) -> list[Fence]:
    """Each fence with its name in its options (``BLOCK_NAME``): its ``id``, else its
    ``title``, else its page and line (``glossary.md:42``); a name two fences of the page share
    is followed by each one's page and line, so no two blocks of a build share a name."""
    plain = [_plain_name(fence.options) or f"{page}:{fence.line}" for fence in found]
    names = []
    for fence, name in zip(found, plain, strict=True):
        if plain.count(name) > 1:
            name = f"{name} ({page}:{fence.line})"
        names.append(Fence(fence.options | {BLOCK_NAME: name}, fence.header, fence.line))
    return names


def _plain_name(options: dict[str, Any]) -> str:
    return str(options.get("id") or (options.get("extra") or {}).get("title") or "")


def block_id(options: dict[str, Any]) -> str:
    """The block's name in the build's messages, the Build report and the record: the name
    its page's Markdown gives it (``named``), else its ``id`` or ``title``."""
    return str(options.get(BLOCK_NAME) or _plain_name(options) or NO_ID)


def is_timed(options: dict[str, Any]) -> bool:
    """A ``timed="yes"`` block: a timing, expected to change from build to build; run once the
    notebooks' cells have run, with nothing running ahead beside it."""
    return (options.get("extra") or {}).get("timed") == "yes"


def is_varying(options: dict[str, Any]) -> bool:
    """A ``varying="yes"`` block: its output differs between two fresh runs by nature, so
    ``make check-cache`` masks it (``caching/compare.py``); it is cached as any other."""
    return (options.get("extra") or {}).get(VARYING_OPTION) == "yes"


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
    # Its name is not: a block that moves on its page is the same block (its worker's file
    # name is its ``id`` or its place in its session, as ``to_run`` says).
    left_out = ("code", "md", BLOCK_NAME)
    plain = {name: value for name, value in options.items() if name not in left_out}
    return {"source": digest(options["code"]), "options": digest(canonical(plain))}


def own_digest(options: dict[str, Any]) -> str:
    """``own_ingredients`` as one digest: stored with each block of a session's entry, and what
    a block run ahead must match for its page to take its reply."""
    return digest(canonical(own_ingredients(options)))
