"""A ``python exec`` block rendered through markdown-exec's public names, its code run in a
worker process (``workers.py``), never in the build's interpreter.

``format_python`` is markdown-exec's exported formatter entry point, ``base_format``, given a
``run`` of ours: it reads the fence's options (source, result, tabs, width, ...) and renders the
output as markdown-exec does, while ``run`` hands the code to the worker of the block's session
(taken only when the code must run: a cached block starts none) and returns what it printed.

A block's failure leaves ``run`` as ``workers.BlockError``: ``base_format`` handles only its own
``ExecutionError``, so nothing is logged and nothing caught; ``guard`` turns it into the
block's failure, naming page and block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from .fence_options import block_id
from .limits import DEFAULT_TIMEOUT_S
from .workers import Worker


@dataclass
class Execution:
    """One block handed to a worker: which one (``worker``, called when the code runs), its
    time limit, and the worker's reply once it has run."""

    worker: Callable[[str], Worker]  # given the code of the block it runs
    timed: bool = False
    seconds: float = DEFAULT_TIMEOUT_S
    reply: dict[str, Any] | None = None


def format_python(execution: Execution, /, **options: Any) -> str:
    """The block's HTML: markdown-exec's rendering of what its worker printed."""
    from markdown_exec import base_format  # imported on use: a cached build needs none of it

    # "python" for `py` fences too, as markdown-exec's own python formatter renders them.
    return str(base_format(language="python", run=partial(run, execution=execution), **options))


def run(
    code: str,
    *,
    execution: Execution,
    returncode: int | None = None,  # a shell's exit code; Python has none to check
    session: str | None = None,  # its worker is ``execution.worker``'s
    id: str = "",
    **extra: Any,
) -> str:
    """Run ``code`` in the block's worker; what it printed. A failure raises ``BlockError``."""
    worker = execution.worker(code)
    execution.reply = worker.run(code, block_id({"id": id}), execution.timed, execution.seconds)
    return execution.reply["output"]
