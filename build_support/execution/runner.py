"""Where the build meets markdown-exec: its formatter registry, through its public names.

``install_formatters`` puts, for each language the build runs, a formatter bound to the build
into markdown-exec's exported ``formatters`` (a ``mkdocs serve`` rebuild puts its own build's in
place); markdown-exec then hands every ``python exec`` block to ``format_block``, which reuses or
runs it, in its session or alone, and records its ``Run``. The code itself runs through
markdown-exec's exported ``base_format`` with a ``run`` of ours (``python_exec.py``), in globals
the build owns.

The build's state is ``state.BuildState``; what it does lives beside it, one concern a module:
``blocks.py`` (a block alone), ``session_runs.py`` (markdown-exec sessions, one run each),
``notebook_runs.py`` (notebooks in the background), ``notebook_page.py`` (a notebook's page),
``publishing/runs.py`` (what ran, for the Build report and the drift record). Every output goes
through the execution cache's one protocol (``caching.cache.OutputCache``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ..section import PACKAGE
from . import blocks, guard, session_runs
from .fence_options import block_id
from .state import BuildState

LANGUAGES = ("python", "py")  # markdown-exec's names for the language the build runs


def format_block(build: BuildState, options: dict[str, Any]) -> str:
    """The block's output in the page: reused or run, in a session or alone; recorded."""
    if options.get("session"):  # its output is known once its session is filled in
        output, run = session_runs.format_in_session(build, options)
    else:
        output, run = blocks.format_alone(build, options)
        blocks.note_shown(run, options, output)
    build.runs.append(run)
    return blocks.wrapped(options, output, run)


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

    The blocks run inside the MkDocs process, where Python caches imported modules: without
    this, ``mkdocs serve`` would rebuild with the old code after an edit to ``examples/``.
    """
    names = [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]
    for name in names:
        del sys.modules[name]
    return names
