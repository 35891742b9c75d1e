"""No block ends, hangs or floods a build, and a failing block says where it failed.

``run`` calls markdown-exec's own formatter for one block under a time limit
(``limits.time_limit``) and turns every way a block can fail into a ``Failure``:

- an ``Exception``: markdown-exec catches it and logs a warning while handling it; the filter
  below takes the exception from that moment (``sys.exc_info()``) and drops the warning, which
  our report replaces;
- ``SystemExit`` (any code), ``KeyboardInterrupt`` and every other ``BaseException``, which
  markdown-exec lets through (a block's ``sys.exit(0)`` once ended ``mkdocs build`` with
  status 0 and no site);
- past its time limit: ``DEFAULT_TIMEOUT_S``, or the fence's ``timeout="120"``;
- an output over ``MAX_OUTPUT_BYTES``.

What a failure does depends on the command (``hooks/execution.py`` sets it at start-up):
``mkdocs build`` (``make build``, ``make publish``, CI) raises ``BlockFailed``, which fails the
build naming the page and the block; ``mkdocs serve`` shows the failure in the page in place of
the block's output (``failure_html``), names it on the terminal, and goes on, so the author's
tab reloads and shows it. A failed block is never stored in the cache, so the next good edit
runs it again and clears the error.
"""

from __future__ import annotations

import html
import logging
import re
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from pymdownx.superfences import SuperFencesException

from ..caching.environment import examples_package_dir
from . import limits
from .fence_options import block_id

# The slowest block today takes ~1.2 s (a fresh build of this 2-core machine), the largest
# output is ~20 KB of HTML: both limits leave room for a slower machine and a bigger chart.
DEFAULT_TIMEOUT_S = 60.0  # the same as a notebook cell's (build_support/execution/notebooks.py)
MAX_OUTPUT_BYTES = 1024 * 1024
TIMEOUT_OPTION = "timeout"  # ```python exec="on" id="slow" timeout="120"
_SHOWN_FRAMES = 6
_BLOCK_FILE = re.compile(r"^<code block: (?:id )?(?P<name>.*)>$")


class BlockFailed(PluginError, SuperFencesException):
    """Fails the build. A ``SuperFencesException``: pymdownx.superfences swallows any other
    exception a fence's formatter raises and leaves the fence as plain text."""


@dataclass
class Failure:
    """What went wrong in one block, and where."""

    page: str
    block_id: str
    summary: str  # "ZeroDivisionError: division by zero"
    where: str = ""  # "line 3 of the block: x = 1 / 0"
    trace: tuple[str, ...] = ()  # the frames in the block and in examples/, innermost last

    def message(self) -> str:
        where = f"\n  at {self.where}" if self.where else ""
        trace = "".join(f"\n    {frame}" for frame in self.trace) if len(self.trace) > 1 else ""
        return f"page {self.page}, block {self.block_id!r} failed: {self.summary}{where}{trace}"


_serving = {"on": False}
_caught: list[BaseException] = []


def set_serving(on: bool) -> None:
    """Under ``mkdocs serve`` a failure is shown in its page; anywhere else it fails the build."""
    _serving["on"] = on


def serving() -> bool:
    return _serving["on"]


class _MarkdownExecErrors(logging.Filter):
    """Takes the exception markdown-exec caught, as it logs it; drops that warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        from markdown_exec import ExecutionError

        handled = sys.exc_info()[1]
        if isinstance(handled, ExecutionError) and record.levelno >= logging.WARNING:
            _caught.append(handled.__cause__ or handled)
            return False
        return True


_filter = _MarkdownExecErrors()


def install() -> None:
    """Put the filter on markdown-exec's loggers (created when it was imported); idempotent."""
    import markdown_exec  # noqa: F401 (its loggers exist once it is imported)

    prefix = "mkdocs.plugins.markdown_exec"
    names = [name for name in logging.root.manager.loggerDict if name.startswith(prefix)]
    if not names:
        raise RuntimeError("markdown-exec's loggers were not found: its failures would go unseen")
    for name in names:
        logger = logging.getLogger(name)
        if _filter not in logger.filters:
            logger.addFilter(_filter)


def run(
    formatter: Callable[..., Any],
    options: dict[str, Any],
    page: str,
) -> tuple[str, bool]:
    """Run one block with markdown-exec's ``formatter``; return its HTML and whether it failed
    (under serve, the HTML is then the failure). Raises ``BlockFailed`` outside serve."""
    failure = _run(formatter, options, page, block_id(options))
    if not isinstance(failure, Failure):
        return failure, False  # the block's output
    if not serving():
        raise BlockFailed(failure.message())
    limits.terminal_error(failure.message() + "\n  (shown in the page; make build fails on it)")
    return failure_html(failure), True


def _run(formatter, options, page, block_id) -> str | Failure:
    """The block's output, or why it failed."""
    extra = dict(options.get("extra") or {})
    seconds = _timeout(extra.pop(TIMEOUT_OPTION, None))
    if isinstance(seconds, str):
        return Failure(page, block_id, seconds)
    del _caught[:]
    limit = limits.Limit(seconds, f"page {page}, block {block_id!r}")
    started = time.perf_counter()
    try:
        with limits.time_limit(limit):
            output = str(formatter(**options | {"extra": extra}))
    except BaseException as error:  # SystemExit, KeyboardInterrupt, ... too
        if limit.interrupted:
            raise  # Ctrl-C by the author stops the build
        summary = _summary(error)
        if limit.timed_out:
            summary = f"still running after its time limit of {seconds:g} s ({_TIMEOUT_HINT})"
        return _failure(page, block_id, summary, error, options["code"])
    if _caught:
        error = _caught[-1]
        return _failure(page, block_id, _summary(error), error, options["code"])
    if time.perf_counter() - started > seconds:  # it caught BlockTimeout itself
        summary = f"ran past its time limit of {seconds:g} s ({_TIMEOUT_HINT})"
        return Failure(page, block_id, summary)
    size = len(output.encode())
    if size > MAX_OUTPUT_BYTES:
        summary = (
            f"its output is {size:,} bytes, over the limit of {MAX_OUTPUT_BYTES:,} "
            "(MAX_OUTPUT_BYTES in build_support/execution/guard.py)"
        )
        return Failure(page, block_id, summary)
    return output


_TIMEOUT_HINT = f'default {DEFAULT_TIMEOUT_S:g} s; the fence option timeout="120" sets another'


def _timeout(value: str | None) -> float | str:
    """The block's time limit in seconds, or what is wrong with its ``timeout`` option."""
    if value is None:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        return f'timeout="{value}": expected a number of seconds greater than 0'
    return seconds


def _summary(error: BaseException) -> str:
    name = type(error).__qualname__
    module = type(error).__module__
    if module != "builtins" and not module.startswith("_code_block"):  # markdown-exec's name
        name = f"{module}.{name}"
    summary = f"{name}: {error}" if str(error) else name
    if isinstance(error, SystemExit):
        summary += " (a block may not end the build: any SystemExit is a failure)"
    return summary


def _failure(page, block_id, summary, error, code) -> Failure:
    frames = traceback.extract_tb(error.__traceback__)
    shown = [line for line in (_frame(frame, code, block_id) for frame in frames) if line]
    if isinstance(error, SyntaxError) and error.lineno and _BLOCK_FILE.match(error.filename or ""):
        shown.append(f"line {error.lineno} of the block: {(error.text or '').strip()}")
    shown = shown[-_SHOWN_FRAMES:]
    return Failure(page, block_id, summary, shown[-1] if shown else "", tuple(shown))


def _frame(frame: traceback.FrameSummary, code: str, block_id: str) -> str:
    """A frame in the block or in ``examples/``, as one line; "" for any other."""
    block = _BLOCK_FILE.match(frame.filename)
    if block:
        lines = code.splitlines()
        this_block = block["name"] == block_id and frame.lineno and frame.lineno <= len(lines)
        line = lines[frame.lineno - 1].strip() if this_block else ""
        name = "the block" if this_block or block["name"] == block_id else f"block {block['name']}"
        return f"line {frame.lineno} of {name}: {line}".rstrip(": ")
    package = examples_package_dir()
    package = package and package.resolve()
    path = Path(frame.filename).resolve()
    if package is None or not path.is_relative_to(package):
        return ""
    relative = Path(package.name, path.relative_to(package)).as_posix()
    return f"{relative}, line {frame.lineno}, in {frame.name}: {(frame.line or '').strip()}"


def failure_html(failure: Failure) -> str:
    """The failure in the page, in place of the block's output (Material's failure callout)."""
    block_id = html.escape(failure.block_id)
    where = f"<p>at {html.escape(failure.where)}</p>\n" if failure.where else ""
    trace = ""
    if len(failure.trace) > 1:
        frames = html.escape("\n".join(failure.trace))
        trace = f'<pre class="exec-error-trace"><code>{frames}</code></pre>\n'
    return (
        '<div class="admonition failure exec-error" role="alert">\n'
        f'<p class="admonition-title">Block <code>{block_id}</code> failed</p>\n'
        f"<p><code>{html.escape(failure.summary)}</code></p>\n{where}{trace}"
        "<p><em>Shown by <code>make serve</code>; <code>make build</code> fails on it. "
        "The next edit that fixes it clears this.</em></p>\n</div>"
    )
