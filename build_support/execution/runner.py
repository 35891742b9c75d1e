"""One build's execution: the ``Build`` that every ``python exec`` block and notebook is run or
reused through, and its place in markdown-exec and MkDocs.

``hooks/execution.py`` maps MkDocs' events onto the current ``Build`` (``start_build``,
``current_build``); nothing else touches markdown-exec's formatters. The python formatter is
replaced once per process (``install_formatters``: a rebuild under ``mkdocs serve`` finds it
already there and keeps it) by one that hands each block to ``Build.format_block``.

``Build`` holds one build's state; what it does lives beside it, one concern a module:
``blocks.py`` (a block alone), ``session_runs.py`` (markdown-exec sessions, one run each),
``notebook_runs.py`` (notebooks in the background), ``notebook_page.py`` (a notebook's page),
``publishing/runs.py`` (what ran, for the Build report and the drift record). Every output goes
through the execution cache's one protocol (``caching.cache.OutputCache``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..caching.cache import ExecutionCache
from ..caching.environment import Environment
from ..publishing.record import Output
from ..publishing.runs import Run, outputs
from ..section import PACKAGE
from . import blocks, guard, notebook_page, notebook_runs, notebooks, reads, session_runs
from .sessions import Session

LANGUAGES = ("python", "py")  # markdown-exec's names for the language the build runs


@dataclass
class Build:
    """One build's state; its behaviour is in the modules named in this module's notes."""

    project_root: Path
    cache: ExecutionCache
    environment: Environment
    config: Any = None  # MkDocs' config: its Markdown settings expand a session's snippets
    page: str = "?"
    runs: list[Run] = field(default_factory=list)
    sessions: dict[tuple[str, str], Session] = field(default_factory=dict)
    notebook_runs: dict[str, notebooks.NotebookRun] = field(default_factory=dict)

    def read_sessions(self, page: str, markdown: str) -> None:
        session_runs.read_sessions(self, page, markdown)

    def fill_sessions(self, page: str, content: str) -> str:
        return session_runs.fill_sessions(self, page, content)

    def format_block(self, language: str, options: dict[str, Any]) -> str:
        """The block's output in the page: reused or run, in a session or alone; recorded."""
        if options.get("session"):  # its output is known once its session is filled in
            output, run = session_runs.format_in_session(self, language, options)
        else:
            output, run = blocks.format_alone(self, language, options)
            blocks.note_shown(run, options, output)
        self.runs.append(run)
        return blocks.wrapped(options, output, run)

    def stale_reads(self, payload: dict[str, Any]) -> list[str]:
        """The files a stored run read that have changed since (``reads.py``)."""
        return reads.changed(payload.get("reads"), self.project_root)

    def cached_value(self, name: str, compute: Callable[[], Any], code: str) -> Any:
        """A JSON value computed from the ``examples`` package (numbers quoted in the prose),
        cached as a block of ``code`` (what ``compute`` runs: the key follows what it reaches)."""
        found = self.cache.look_up(self.environment.ingredients(code, value=name))
        if found.entry is not None:
            return found.entry["value"]
        value = compute()
        self.cache.keep(found, {"value": value})
        return value

    def start_notebooks(self, pages: list[tuple[str, Path]], kernel_name: str) -> None:
        notebook_runs.start_notebooks(self, pages, kernel_name)

    def wait_for_notebooks(self) -> None:
        notebook_runs.wait_for_notebooks(self)

    def render_notebook_page(self, page, render, config, files, scratch: Path) -> None:
        notebook_page.render_notebook_page(self, page, render, config, files, scratch)

    def record_notebook(self, src_uri: str, content: str) -> None:
        notebook_runs.record_notebook(self, src_uri, content)

    def finish_notebooks(self) -> None:
        notebook_runs.finish_notebooks(self)

    def outputs(self) -> list[Output]:
        return outputs(self.runs)


def drop_examples_modules() -> list[str]:
    """Forget ``examples`` and its submodules; the next import reads them from disk again.

    The blocks run inside the MkDocs process, where Python caches imported modules: without
    this, ``mkdocs serve`` would rebuild with the old code after an edit to ``examples/``.
    """
    names = [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]
    for name in names:
        del sys.modules[name]
    return names


def _formatter(language: str) -> Callable[..., str]:
    def format_block(**options: Any) -> str:
        return current_build().format_block(language, options)

    return format_block


_FORMATTERS = {language: _formatter(language) for language in LANGUAGES}
_build_holder: dict[str, Build | None] = {"build": None}


def current_build() -> Build:
    build = _build_holder["build"]
    if build is None:
        raise RuntimeError("no build in progress: hooks/execution.py starts one in on_config")
    return build


def install_formatters() -> None:
    """Put the build's formatter in markdown-exec's registry once per process, markdown-exec's
    own kept in ``blocks.original_formatters``; idempotent."""
    import markdown_exec

    for language, formatter in _FORMATTERS.items():
        current = markdown_exec.formatters[language]
        if current is not formatter:
            blocks.original_formatters[language] = current
            markdown_exec.formatters[language] = formatter
    guard.install()  # a block's failure is seen whatever it raised


def start_build(project_root: Path, config: Any = None) -> Build:
    """``config``: MkDocs' config (its Markdown settings are in every block's key)."""
    build = Build(
        project_root=project_root,
        cache=ExecutionCache.for_project(project_root),
        environment=Environment.read(project_root, config),
        config=config,
    )
    _build_holder["build"] = build
    return build
