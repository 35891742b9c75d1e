"""A failing block says where it failed; under ``mkdocs serve`` it shows in its page.

``failures`` turns every way a block's rendering can fail into a ``Failure`` (whatever it
raises, ``SystemExit`` too, a limit passed, its worker ended, a bad option, an output over
``MAX_OUTPUT_BYTES`` once rendered), ``handling_failed`` a fault of the build's own handling of
it. Each is said on the terminal as it happens and shown in place of the block's output, and the
build goes on (``Failing``): ``mkdocs build`` fails once every page has rendered, naming every
failed block (``Failing.fail_if_any``), as strict mode does with its warnings. A failed block is
never stored, so the edit that fixes it clears it.
"""

from __future__ import annotations

import contextlib
import html
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mkdocs.exceptions import PluginError
from pymdownx.superfences import SuperFencesException

from .. import progress
from . import executor
from .executor import BlockError
from .worker import summary as _summary


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


@dataclass
class Outcome:
    """What a guarded block shows: its output, or its failure under ``mkdocs serve``."""

    html: str = ""
    failed: bool = False


@dataclass
class Failing:
    """One build's failed blocks: under ``serving`` shown in their pages; otherwise also
    failing the build once its pages are rendered."""

    serving: bool
    found: list[Failure] = field(default_factory=list)

    def fail_if_any(self) -> None:
        """``BlockFailed`` naming every block that failed (``mkdocs build``)."""
        if self.found and not self.serving:
            count = f"{len(self.found)} block{'s' if len(self.found) > 1 else ''}"
            said = "\n".join(failure.message() for failure in self.found)
            raise BlockFailed(f"{count} failed; the build stops here:\n{said}")


@contextlib.contextmanager
def failures(page: str, block_id: str, failing: Failing) -> Iterator[Outcome]:
    """One block's rendering inside: its ``BlockError``, or an output over ``MAX_OUTPUT_BYTES``,
    is the block's failure (``fail_or_show``)."""
    progress.at_block(page, block_id)
    outcome = Outcome()
    try:
        yield outcome
    except BlockError as error:
        failure = Failure(page, block_id, error.summary, error.where, error.trace)
    else:
        size = len(outcome.html.encode())
        if size <= executor.MAX_OUTPUT_BYTES:
            return
        summary = (
            f"its output is {size:,} bytes, over the limit of {executor.MAX_OUTPUT_BYTES:,} "
            f"({executor.OUTPUT_SETTING})"
        )
        failure = Failure(page, block_id, summary)
    outcome.html, outcome.failed = shown(failure, failing), True


def handling_failed(page: str, block_id: str, error: BaseException, failing: Failing) -> str:
    """The build's own handling of a block raised ``error``: the block fails, named, where
    pymdownx.superfences would swallow it and ship the fence as plain text, exit 0."""
    where = traceback.extract_tb(error.__traceback__)
    innermost = f" (in {Path(where[-1].filename).name}, line {where[-1].lineno})" if where else ""
    summary = f"the build could not handle its output: {_summary(error)}{innermost}"
    return shown(Failure(page, block_id, summary), failing)


def shown(failure: Failure, failing: Failing) -> str:
    """The failure said on the terminal, kept in ``failing``, and shown in place of the
    block's output (Material's failure callout)."""
    failing.found.append(failure)
    after = "make build fails on it" if failing.serving else "the build fails once pages render"
    # In MkDocs' layout on stderr, outside its strict-mode warning count: the build goes on.
    first, *rest = f"{failure.message()}\n  (shown in the page; {after})".splitlines()
    continued = "".join(f"{' ' * 11}{line}\n" for line in rest)  # as mkdocs indents them
    sys.stderr.write(f"{'ERROR':<8}-  {first}\n{continued}")
    sys.stderr.flush()
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
