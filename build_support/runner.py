"""One build's execution: every ``python exec`` block and notebook is run or reused from here.

``hooks/execution.py`` maps MkDocs' events onto the ``Build`` below; nothing else touches
markdown-exec's formatters. The python formatter is replaced once per process by
``format_block`` (a rebuild under ``mkdocs serve`` finds it already there and keeps it), which
looks the block up in the cache, runs it with markdown-exec's own formatter when it must, and
records what happened for the Build report and the drift record.

Blocks in a markdown-exec session share their globals: a later block may use a name an earlier
one defined. The session is therefore one cache entry: its blocks are reused together or run
together, and the page shows one run of it (``build_support/sessions.py``).
"""

from __future__ import annotations

import contextlib
import html
import re
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import guard, notebooks, reads
from .cache import (
    Environment,
    ExecutionCache,
    canonical,
    digest,
    key_of,
    tool_versions,
    why_it_ran,
)
from .ingredients import expand_snippets
from .record import Output, shown_output
from .sessions import Session, fences, forget_globals, is_timed

PACKAGE = "examples"
_HEADING = re.compile(r"<h[1-6][\s>]")
_PRINTED_LABEL = re.compile(r"computed on [^<\n]+")


@dataclass
class Run:
    """One executed output of this build, as the Build report shows it."""

    page: str
    block_id: str
    ran: bool
    reasons: list[str]
    seconds: float
    ran_on: str
    kind: str  # "block" or "notebook"
    output_digest: str = ""
    expected_to_change: bool = False
    source: str = ""  # the three below: a block shown with its source and a text output only
    shown: str | None = None
    environment: dict[str, str] | None = None


_originals: dict[str, Any] = {}


@dataclass
class Build:
    project_root: Path
    cache: ExecutionCache
    environment: Environment
    config: Any = None  # MkDocs' config: its Markdown settings expand a session's snippets
    page: str = "?"
    runs: list[Run] = field(default_factory=list)
    sessions: dict[tuple[str, str], Session] = field(default_factory=dict)
    notebook_runs: dict[str, notebooks.NotebookRun] = field(default_factory=dict)

    # ------------------------------------------------------------ blocks

    def read_sessions(self, page: str, markdown: str) -> None:
        """Find the page's session blocks before it renders (a session is one cache entry), with
        their snippets expanded as the page will show them: an edit to a snippet is in the key."""
        if self.config is not None and "--8<--" in markdown:
            markdown = expand_snippets(markdown, self.config)
        for name, header, code in fences(markdown):
            session = self.sessions.setdefault((page, name), Session([], []))
            session.headers.append(header)
            session.codes.append(code)

    def fill_sessions(self, page: str, content: str) -> str:
        """The page's HTML with its sessions' outputs, each session's from one run."""
        for (session_page, _), session in self.sessions.items():
            if session_page == page:
                content = session.fill(content)
                for slot, options in zip(session.slots, session.options_seen, strict=False):
                    _note_shown(slot.run, options, slot.html)
        return content

    def format_block(self, language: str, options: dict[str, Any]) -> str:
        block_id = options.get("id") or "(no id)"
        own = _own_ingredients(options)
        session_name = options.get("session")
        if session_name:
            output, run = self._format_in_session(language, options, own, session_name)
        else:
            output, run = self._format_alone(language, options, own)
        if not session_name:  # a session's outputs are known once it is filled in
            _note_shown(run, options, output)
        self.runs.append(run)
        return _wrapped(block_id, options, output, run)

    def _format_alone(self, language, options, own) -> tuple[str, Run]:
        code, block_id = options["code"], options.get("id") or "(no id)"
        ingredients = self.environment.ingredients(code, rendered=True, **own)
        key, identity = key_of(ingredients), f"{self.page} {block_id}"
        timed = (options.get("extra") or {}).get("quiet") == "yes"
        lookup = self.cache.load(key)
        stale = self._stale_reads(lookup.payload)
        if lookup.payload is not None and not stale:
            self.cache.remember(identity, ingredients)
            (stored,) = lookup.payload["blocks"]
            caption = _measured_caption(lookup.payload.get("measured"), reused=True)
            run = self._run_record(block_id, False, [], 0.0, stored, timed)
            return caption + stored["html"], run
        reasons = stale or self._reasons(lookup, identity, ingredients)
        with reads.recorded() as opened:
            block, failed = self._execute(language, options, timed)
        measured = _measured() if timed and not failed else None
        if not failed and _cacheable(block["html"]):
            files = reads.digests(opened, self.project_root)
            self.cache.store(key, {"blocks": [block], "measured": measured, "reads": files})
            self.cache.remember(identity, ingredients)
        run = self._run_record(block_id, True, reasons, block["seconds"], block, timed)
        return _measured_caption(measured, reused=False) + block["html"], run

    def _format_in_session(self, language, options, own, name) -> tuple[str, Run]:
        """A slot for the block's output (``sessions.Session.fill`` writes it in): reused from
        the stored run while every block matches it; otherwise run, the whole session again
        from its first block when an earlier block's output came from the stored run."""
        block_id = options.get("id") or "(no id)"
        session = self.sessions.setdefault((self.page, name), Session([], []))
        if session.position == 0:
            self._open_session(session, name)
        position = session.position
        session.position += 1
        session.options_seen.append(options)
        slot = session.new_slot()
        stored = session.stored(position)
        if position >= len(session.codes):  # a block the page's Markdown did not show
            session.failed = True  # never stored: the entry would not match the page
            session.reasons = session.reasons or ["session not read from the page's Markdown"]
        if stored is not None and stored["own"] == digest(canonical(own)):
            measured = session.entry.get("measured") if is_timed(options) else None
            slot.html = _measured_caption(measured, reused=True) + stored["html"]
            slot.ran_on = stored["ran_on"]
            slot.run = self._run_record(block_id, False, [], 0.0, stored, session.timed)
        else:
            if session.entry is not None:  # earlier blocks were reused from the stored run
                session.entry = None
                session.reasons = ["its session's blocks did not match the cache entry"]
                self._run_session_from_start(session, language, name)
            elif position == 0:
                forget_globals(name)
            pending = {"html": "", "ran_on": ""}  # completed by _run_in_session
            slot.run = self._run_record(
                block_id, True, session.reasons, 0.0, pending, session.timed
            )
            self._run_in_session(session, language, options, slot)
        self._store_if_complete(session)
        run, slot.run.ran_on = slot.run, slot.ran_on_token  # the label goes in its slot too
        return slot.output_token, run

    def _run_session_from_start(self, session, language, name) -> None:
        forget_globals(name)
        session.blocks, session.measured = [], None
        for earlier, slot in zip(session.options_seen[:-1], session.slots, strict=False):
            slot.run.ran, slot.run.reasons = True, list(session.reasons)
            self._run_in_session(session, language, earlier, slot)

    def _run_in_session(self, session, language, options, slot) -> None:
        timed = is_timed(options)
        with reads.recorded() as opened:
            block, failed = self._execute(language, options, timed)
        session.reads |= reads.digests(opened, self.project_root)
        block["own"] = digest(canonical(_own_ingredients(options)))
        session.failed |= failed
        session.blocks.append(block)
        measured = _measured() if timed and not failed else None
        if measured:
            session.measured = measured
        slot.html = _measured_caption(measured, reused=False) + block["html"]
        slot.ran_on = block["ran_on"]
        slot.run.seconds = block["seconds"]
        slot.run.output_digest = digest(block["html"])

    def _store_if_complete(self, session) -> None:
        if session.entry is not None or not session.complete():
            return
        if all(_cacheable(block["html"]) for block in session.blocks):
            stored = {"blocks": session.blocks, "measured": session.measured}
            self.cache.store(session.key, stored | {"reads": session.reads})
            self.cache.remember(session.identity, session.ingredients)

    def _open_session(self, session, name: str) -> None:
        all_code = "\n".join(session.codes)
        ingredients = self.environment.ingredients(
            all_code, rendered=True, session=digest("\n".join(session.headers) + "\n" + all_code)
        )
        session.key = key_of(ingredients)
        session.identity = f"{self.page} session {name}"
        session.ingredients = ingredients
        if not session.codes:
            session.reasons = ["session not read from the page's Markdown"]
            return
        lookup = self.cache.load(session.key)
        blocks = (lookup.payload or {}).get("blocks", [])
        stale = self._stale_reads(lookup.payload)
        if lookup.payload is not None and len(blocks) == len(session.codes) and not stale:
            session.entry = lookup.payload
            self.cache.remember(session.identity, ingredients)
        else:
            session.reasons = stale or self._reasons(lookup, session.identity, ingredients)

    def _stale_reads(self, payload: dict[str, Any] | None) -> list[str]:
        """The files a stored run read that have changed since (``build_support/reads.py``)."""
        return reads.changed(payload.get("reads"), self.project_root) if payload else []

    def _reasons(self, lookup, identity: str, ingredients: dict[str, str]) -> list[str]:
        if not self.cache.read_enabled:
            return ["FRESH=1"]
        if lookup.corrupt:
            return ["cache entry corrupt"]
        return why_it_ran(self.cache.last_ingredients(identity), ingredients)

    def _execute(self, language: str, options: dict[str, Any], timed: bool) -> tuple[dict, bool]:
        """Run one block with markdown-exec's formatter, under guard's limits: a failure fails
        the build, or under ``mkdocs serve`` shows in the page in place of the output."""
        if timed:
            self.wait_for_notebooks()  # a timing gets the machine to itself
        started = time.perf_counter()
        output, failed = guard.run(_originals[language], options, self.page)
        seconds = time.perf_counter() - started
        return {
            "id": options.get("id") or "(no id)",
            "html": output,
            "seconds": seconds,
            "ran_on": where_it_ran(options["code"]),
            "environment": _environment(),
        }, failed

    def _run_record(self, block_id, ran, reasons, seconds, block, timed) -> Run:
        return Run(
            page=self.page,
            block_id=block_id,
            ran=ran,
            reasons=list(reasons),
            seconds=seconds,
            ran_on=block["ran_on"],
            kind="block",
            output_digest=digest(block["html"]),
            expected_to_change=timed,
            environment=block.get("environment"),  # absent from entries cached before it was
        )

    def cached_value(self, name: str, compute) -> Any:
        """A JSON value computed from the ``examples`` package (numbers quoted in the prose),
        cached under the same ingredients as a block that imports the package."""
        ingredients = self.environment.ingredients(f"import {PACKAGE}", value=name)
        key = key_of(ingredients)
        lookup = self.cache.load(key)
        if lookup.payload is not None:
            return lookup.payload["value"]
        value = compute()
        self.cache.store(key, {"value": value})
        return value

    # ------------------------------------------------------------ notebooks

    def start_notebooks(self, pages: list[tuple[str, Path]], kernel_name: str) -> None:
        import nbformat

        for src_uri, path in pages:
            source = path.read_text()
            ingredients = self.environment.ingredients(
                source, source=digest(source), kernel=kernel_name
            )
            key, identity = key_of(ingredients), src_uri
            run = notebooks.NotebookRun(src_uri, result=None)  # type: ignore[arg-type]
            self.notebook_runs[src_uri] = run
            lookup = self.cache.load(key)
            if lookup.payload is not None:
                self.cache.remember(identity, ingredients)
                run.ran = False
                notebooks.done(run, nbformat.reads(lookup.payload["notebook"], as_version=4))
                continue
            run.reasons = self._reasons(lookup, identity, ingredients)

            def store(notebook, seconds, key=key, identity=identity, ingredients=ingredients):
                self.cache.store(key, {"notebook": nbformat.writes(notebook), "seconds": seconds})
                self.cache.remember(identity, ingredients)

            notebooks.start(path, kernel_name, run, store)

    def wait_for_notebooks(self) -> None:
        """Until every notebook's cells have run."""
        for run in self.notebook_runs.values():
            run.cells_done.wait()

    def executed_notebook(self, src_uri: str):
        from mkdocs.exceptions import PluginError

        run = self.notebook_runs[src_uri]
        try:
            return run.result.result()
        except notebooks.NotebookError as error:
            raise PluginError(f"notebook {src_uri} failed to execute: {error}") from error
        except Exception as error:
            raise PluginError(f"notebook {src_uri} failed to execute:\n{error}") from error

    def render_notebook_page(self, page, render, config, files, scratch: Path) -> None:
        """Render the executed notebook with mkdocs-jupyter (``render``), or reuse the page it
        rendered last time for the same executed notebook and the same plugin options:
        nbconvert compiles its templates on every call, half a second of every rebuild."""
        import nbformat
        from mkdocs.structure.toc import get_toc

        notebook = self.executed_notebook(page.file.src_uri)
        text = nbformat.writes(notebook)
        jupyter = config.plugins["mkdocs-jupyter"].config
        key = key_of(
            {
                "notebook": digest(text),
                "options": digest(canonical(dict(jupyter))),
                "tools": self.environment.tools,
                "renderer": tool_versions(
                    ("mkdocs-jupyter", "nbconvert", "mistune", "pygments"),
                    self.environment.installed,
                ),
            }
        )
        lookup = self.cache.load(key)
        if lookup.payload is not None:
            page.content = lookup.payload["content"]
            page.toc = get_toc(lookup.payload["toc"])
            if lookup.payload["title"] is not None:
                page.title = lookup.payload["title"]
            return
        executed = (scratch / page.file.src_uri).with_suffix(".ipynb")
        executed.parent.mkdir(parents=True, exist_ok=True)
        executed.write_text(text)
        source = page.file.abs_src_path
        page.file.abs_src_path = str(executed)  # read by mkdocs-jupyter's render only
        try:
            render(config, files)
        finally:
            page.file.abs_src_path = source
        title = page.title if isinstance(page.title, str) else None
        stored = {"content": page.content, "toc": [_toc_token(link) for link in page.toc]}
        self.cache.store(key, stored | {"title": title})

    def record_notebook(self, src_uri: str, content: str) -> None:
        run = self.notebook_runs[src_uri]
        notebook = run.result.result()
        outputs = [cell.get("outputs", []) for cell in notebook.cells if cell.cell_type == "code"]
        printed = _PRINTED_LABEL.search(content)
        ran_on = html.unescape(printed.group(0)) if printed else "kernel did not print its backend"
        self.runs.append(
            Run(
                page=src_uri,
                block_id=src_uri,
                ran=run.ran,
                reasons=run.reasons,
                seconds=run.seconds,
                ran_on=ran_on,
                kind="notebook",
                output_digest=digest(canonical(_without_counts(outputs))),
            )
        )

    def finish_notebooks(self) -> None:
        """Wait for every kernel: one left running would outlive the build."""
        for run in self.notebook_runs.values():
            if run.result is not None:
                with contextlib.suppress(Exception):  # reported by the page that renders it
                    run.result.result()

    # ------------------------------------------------------------ results

    def outputs(self) -> list[Output]:
        return [
            Output(
                run.page,
                run.block_id,
                run.output_digest,
                run.expected_to_change,
                run.source,
                run.shown,
                run.environment,
            )
            for run in self.runs
        ]


def _note_shown(run: Run, options: dict[str, Any], output: str) -> None:
    """What ``python -m examples verify`` compares: a block shown with a text output."""
    run.shown = shown_output(options, output)
    if run.shown is not None:
        run.source = options["code"]


def _toc_token(link) -> dict[str, Any]:
    return {
        "level": link.level,
        "id": link.id,
        "name": link.title,
        "children": [_toc_token(child) for child in link.children],
    }


def _without_counts(outputs: list) -> list:
    """Notebook outputs as the reader sees them: without execution counts (a cell's printed
    text is one stream already: ``notebooks.merged_streams``)."""
    return [
        notebooks.merged_streams(
            [{k: v for k, v in output.items() if k != "execution_count"} for output in cell]
        )
        for cell in outputs
    ]


def _own_ingredients(options: dict[str, Any]) -> dict[str, str]:
    """A block's own part of its key: its code and its options."""
    return {
        "source": digest(options["code"]),
        "options": digest(canonical(_plain_options(options))),
    }


def _plain_options(options: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in options.items() if name not in ("code", "md")}


def _cacheable(output: str) -> bool:
    # A heading in an output joins the page's table of contents only when markdown-exec
    # renders it: such a block always runs.
    return _HEADING.search(output) is None


def _measured() -> dict[str, str]:
    from examples import machine_label  # already imported by the timed block itself

    return {"at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "label": machine_label()}


def _measured_caption(measured: dict[str, str] | None, reused: bool) -> str:
    if not measured:
        return ""
    label = html.escape(measured["label"])
    if reused:
        text = (
            f"Measured on {html.escape(measured['at'])} on the machine that built it then: "
            f"{label}. Reused by this build: nothing it depends on has changed since."
        )
    else:
        text = f"Measured on this build: {label}"
    return f'<p class="measured-label"><em>{text}</em></p>\n'


def _wrapped(block_id: str, options: dict[str, Any], output: str, run: Run) -> str:
    # The wrapper pairs a displayed source with its output (tests/test_copy_fidelity.py reads
    # it); a block that shows its source and a text result gets a caption: where it ran.
    source, result = options.get("source", ""), options.get("result", "")
    caption = f'<p class="run-label">{html.escape(run.ran_on)}</p>' if source and result else ""
    return (
        f'<div class="exec-block" data-exec-id="{html.escape(block_id)}" '
        f'data-source="{html.escape(source)}" data-result="{html.escape(result)}">\n'
        f"{output}\n{caption}</div>"
    )


_IMPORTS_JAX = re.compile(r"^\s*(?:from|import)\s+(?:jax|examples)\b", re.MULTILINE)


def where_it_ran(code: str) -> str:
    """A block that imports jax or the course package ran on JAX's default backend; any other
    block ran in plain Python / NumPy on the build machine's CPU."""
    if _IMPORTS_JAX.search(code):
        from examples import backend_report  # imported late: `mkdocs serve` reloads examples

        return backend_report().label()
    import platform

    import numpy

    return f"computed on cpu · numpy {numpy.__version__} · Python {platform.python_version()}"


def _environment() -> dict[str, str] | None:
    """The environment ``python -m examples verify`` compares with a reader's, once a block has
    imported jax (importing it here, for a block that does not, would cost a second)."""
    if "jax" not in sys.modules:
        return None
    from examples.verify import environment

    return environment()


def drop_examples_modules() -> list[str]:
    """Forget ``examples`` and its submodules; the next import reads them from disk again.

    The blocks run inside the MkDocs process, where Python caches imported modules: without
    this, ``mkdocs serve`` would rebuild with the old code after an edit to ``examples/``.
    """
    names = [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]
    for name in names:
        del sys.modules[name]
    return names


def format_python(**options: Any) -> str:
    return _current_build().format_block("python", options)


def format_py(**options: Any) -> str:
    return _current_build().format_block("py", options)


_FORMATTERS = {"python": format_python, "py": format_py}
_build_holder: dict[str, Build | None] = {"build": None}


def _current_build() -> Build:
    build = _build_holder["build"]
    if build is None:
        raise RuntimeError("no build in progress: hooks/execution.py starts one in on_config")
    return build


def install_formatters() -> None:
    """Put ``format_block`` in markdown-exec's registry once per process; idempotent."""
    import markdown_exec

    for language, formatter in _FORMATTERS.items():
        current = markdown_exec.formatters[language]
        if current is not formatter:
            _originals[language] = current
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


def current_build() -> Build:
    return _current_build()
