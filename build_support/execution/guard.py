"""No block ends, hangs or floods a build, and a failing block says where it failed.

``run`` calls the block's formatter (``python_exec.format_python``) under a time limit
(``limits.time_limit``) and turns every way a block can fail into a ``Failure``:

- whatever the block raises, ``Exception`` or not: ``python_exec.run`` lets it through
  markdown-exec's ``base_format`` as it was raised (``SystemExit`` of any code, too: a block's
  ``sys.exit(0)`` once ended ``mkdocs build`` with status 0 and no site);
- past its time limit: ``DEFAULT_TIMEOUT_S``, or the fence's ``timeout="120"``;
- an output over ``MAX_OUTPUT_BYTES``.

What a failure does depends on the command (``state.PROCESS``, set at start-up):
``mkdocs build`` (``make build``, ``make publish``, CI) raises ``BlockFailed``, which fails the
build naming the page and the block; ``mkdocs serve`` shows the failure in the page in place of
the block's output (``failure_html``), names it on the terminal, and goes on, so the author's
tab reloads and shows it. A failed block is never stored in the cache, so the next good edit
runs it again and clears the error.
"""

from __future__ import annotations

import html
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from pymdownx.superfences import SuperFencesException

from ..caching.environment import examples_package_dir
from . import limits, progress
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


def run(
    formatter: Callable[..., Any],
    options: dict[str, Any],
    page: str,
    serving: bool,
) -> tuple[str, bool]:
    """Run one block with ``formatter``; return its HTML and whether it failed (under
    ``serving``, the HTML is then the failure). Raises ``BlockFailed`` otherwise."""
    progress.note(f"page {page}, block {block_id(options)!r}")
    failure = _run(formatter, options, page, block_id(options))
    if not isinstance(failure, Failure):
        return failure, False  # the block's output
    if not serving:
        raise BlockFailed(failure.message())
    limits.terminal_error(failure.message() + "\n  (shown in the page; make build fails on it)")
    return failure_html(failure), True


def _run(formatter, options, page, block_id) -> str | Failure:
    """The block's output, or why it failed."""
    extra = dict(options.get("extra") or {})
    seconds = _timeout(extra.pop(TIMEOUT_OPTION, None))
    if isinstance(seconds, str):
        return Failure(page, block_id, seconds)
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
    said = _said(error)
    summary = f"{name}: {said}" if said else name
    if isinstance(error, SystemExit):
        summary += " (a block may not end the build: any SystemExit is a failure)"
    return summary


def _said(error: BaseException) -> str:
    """``str(error)``, or why it cannot be read: a block's exception may define ``__str__``
    that raises, and the description of a failure must not fail in turn."""
    try:
        return str(error)
    except BaseException as unreadable:  # whatever the block's __str__ raises
        return f"<its message could not be read: {type(unreadable).__qualname__}>"


def handling_failed(page: str, block_id: str, error: BaseException, serving: bool) -> str:
    """The build's own handling of a block (rendering, encoding, caching, describing its output)
    raised ``error``: the block fails, named, as any failing block does. pymdownx.superfences
    would otherwise swallow the exception and ship the fence as plain text, exit 0."""
    where = traceback.extract_tb(error.__traceback__)
    innermost = f" (in {Path(where[-1].filename).name}, line {where[-1].lineno})" if where else ""
    summary = f"the build could not handle its output: {_summary(error)}{innermost}"
    failure = Failure(page, block_id, summary)
    if not serving:
        raise BlockFailed(failure.message()) from error
    limits.terminal_error(failure.message() + "\n  (shown in the page; make build fails on it)")
    return failure_html(failure)


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
