"""Where the build meets markdown-exec: its formatter registry, through its public names.

``install_formatters`` puts, for each language the build runs, a formatter bound to the build
into markdown-exec's exported ``formatters`` (a ``mkdocs serve`` rebuild puts its own build's in
place); markdown-exec then hands every ``python exec`` block to ``format_block``, which reuses or
runs it, in its session or alone (``sessions.py``: the block's code runs through markdown-exec's
exported ``base_format``, in a worker process), and records its ``Run``. A fault of the build's
own handling of a block fails that block, named (``guard.handling_failed``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ..section import PACKAGE
from . import guard, sessions
from .fences import LANGUAGES, block_id
from .state import BuildState


def format_block(build: BuildState, options: dict[str, Any]) -> str:
    """The block's output in the page: reused or run, in a session or alone; recorded."""
    if options.get("session"):  # its output is known once its session is filled in
        output, run = sessions.format_in_session(build, options)
    else:
        output, run = sessions.format_alone(build, options)
        sessions.note_shown(run, options, output)
    build.runs.append(run)
    return sessions.wrapped(options, output, run)


def formatter(build: BuildState) -> Callable[..., str]:
    """markdown-exec's formatter for a Python block in ``build``."""

    def format_python(**options: Any) -> str:
        try:
            return format_block(build, options)
        except guard.BlockFailed:
            raise
        except BaseException as error:  # any fault in the build's own handling
            if isinstance(error, KeyboardInterrupt):
                raise  # Ctrl-C by the author stops the build (a block's own is guard's)
            return guard.handling_failed(build.page, block_id(options), error, build.serving)

    return format_python


def install_formatters(build: BuildState) -> None:
    """``build``'s formatter in markdown-exec's registry, for each language it runs."""
    import markdown_exec

    for language in LANGUAGES:
        markdown_exec.formatters[language] = formatter(build)


def drop_examples_modules() -> list[str]:
    """Forget ``examples`` and its submodules; the next import reads them from disk again.

    Blocks run in worker processes, but hooks import the package in the build's own interpreter
    (``hooks/live_numbers.py``, ``hooks/try_it.py``, ``hooks/wheel.py``), where Python caches
    imported modules: without this, ``mkdocs serve`` would rebuild them with the old code after
    an edit to ``examples/``.
    """
    names = [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]
    for name in names:
        del sys.modules[name]
    return names
