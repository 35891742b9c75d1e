"""A failing block says where it failed; under ``mkdocs serve`` it shows in its page.

``run`` renders a block through ``python_exec.format_python``, whose code runs in a worker
process under the limits of ``limits.py`` (``workers.py`` enforces them), and turns every way a
block can fail into a ``Failure``: whatever it raises, ``Exception`` or not (``SystemExit`` of
any code too), a limit passed, its worker ended in any way, a bad ``timeout`` option, an output
over ``MAX_OUTPUT_BYTES`` once rendered.

What a failure does depends on the command (``state.PROCESS``, set at start-up):
``mkdocs build`` (``make build``, ``make publish``, CI) raises ``BlockFailed``, which fails the
build naming the page and the block; ``mkdocs serve`` shows the failure in the page in place of
the block's output (``failure_html``), names it on the terminal, and goes on, so the author's
tab reloads and shows it. A failed block is never stored in the cache, so the next good edit
runs it again and clears the error.
"""

from __future__ import annotations

import html
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from pymdownx.superfences import SuperFencesException

from . import limits, progress, python_exec
from .block_worker import summary as _summary
from .fence_options import block_id
from .workers import BlockError

MAX_OUTPUT_BYTES = limits.MAX_OUTPUT_BYTES


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
    execution: python_exec.Execution,
    options: dict[str, Any],
    page: str,
    serving: bool,
) -> tuple[str, bool]:
    """Run one block in its worker; return its HTML and whether it failed (under ``serving``,
    the HTML is then the failure). Raises ``BlockFailed`` otherwise."""
    progress.note(f"page {page}, block {block_id(options)!r}")
    failure = _run(execution, options, page, block_id(options))
    if not isinstance(failure, Failure):
        return failure, False  # the block's output
    if not serving:
        raise BlockFailed(failure.message())
    limits.terminal_error(failure.message() + "\n  (shown in the page; make build fails on it)")
    return failure_html(failure), True


def _run(execution, options, page, block_id) -> str | Failure:
    """The block's output, or why it failed."""
    extra = dict(options.get("extra") or {})
    seconds = limits.timeout_s(extra.pop(limits.TIMEOUT_OPTION, None))
    if isinstance(seconds, str):
        return Failure(page, block_id, seconds)
    execution.seconds = seconds
    try:
        output = python_exec.format_python(execution, **options | {"extra": extra})
    except BlockError as error:
        return Failure(page, block_id, error.summary, error.where, error.trace)
    size = len(output.encode())
    if size > MAX_OUTPUT_BYTES:
        summary = (
            f"its output is {size:,} bytes, over the limit of {MAX_OUTPUT_BYTES:,} "
            "(MAX_OUTPUT_BYTES in build_support/execution/limits.py)"
        )
        return Failure(page, block_id, summary)
    return output


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
