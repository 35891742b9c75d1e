"""What a build does with its notebooks (their execution, threads and runs: ``notebooks.py``):
each one looked up in the cache at the start of the build, or started in the background; each
page's executed notebook handed to its renderer, then recorded as a ``Run``.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..caching.cache import canonical, digest
from ..publishing.runs import Run
from . import notebooks

if TYPE_CHECKING:
    from .state import BuildState

_PRINTED_LABEL = re.compile(r"computed on [^<\n]+")
STILL_RUNNING = "still running (make serve)"


def start_notebooks(build: BuildState, pages: list[tuple[str, Path]], kernel_name: str) -> None:
    """Each notebook (``src_uri``, its path) reused from the cache, or run in the background;
    a run's notebook is stored once its cells have all run."""
    import nbformat

    for src_uri, path in pages:
        source = path.read_text(encoding="utf-8")
        ingredients = build.environment.ingredients(
            source, source=digest(source), kernel=kernel_name
        )
        run = notebooks.NotebookRun(src_uri, result=None)  # type: ignore[arg-type]
        build.notebooks.runs[src_uri] = run
        found = build.cache.look_up(ingredients, identity=src_uri)
        running = notebooks.BACKGROUND.runs.get(src_uri)  # mkdocs serve: an earlier rebuild's
        if running is not None and (found.entry is not None or running.key != found.key):
            running.cancel()  # done and stored, or its notebook or what it reaches changed
            notebooks.BACKGROUND.runs.pop(src_uri)
        elif running is not None:
            build.notebooks.take_over(running)
            continue
        if found.entry is not None:
            run.ran = False
            notebooks.done(run, nbformat.reads(found.entry["notebook"], as_version=4))
            continue
        run.reasons, run.key = found.reasons, found.key

        def keep(notebook, seconds, found=found):
            build.cache.keep(found, {"notebook": nbformat.writes(notebook), "seconds": seconds})

        build.notebooks.start(path, kernel_name, run, keep)


def still_running(build: BuildState, src_uri: str) -> bool:
    """Under ``mkdocs serve``: the notebook's run has not ended; its page says so."""
    run = build.notebooks.runs[src_uri]
    return build.notebooks.background and not run.result.done()


def executed_notebook(build: BuildState, src_uri: str):
    """The notebook of page ``src_uri`` with its outputs; a failed run fails the build."""
    from mkdocs.exceptions import PluginError

    run = build.notebooks.runs[src_uri]
    try:
        return run.result.result()
    except notebooks.NotebookError as error:
        raise PluginError(f"notebook {src_uri} failed to execute: {error}") from error
    except Exception as error:
        raise PluginError(f"notebook {src_uri} failed to execute:\n{error}") from error


def record_notebook(build: BuildState, src_uri: str, content: str) -> None:
    """The notebook's run, with where its kernel said it ran (its page's ``content``)."""
    run = build.notebooks.runs[src_uri]
    if still_running(build, src_uri):
        reasons = [*run.reasons, "still running: its page shows it once done"]
        build.runs.append(Run(src_uri, src_uri, True, reasons, 0.0, STILL_RUNNING, "notebook"))
        return
    notebook = run.result.result()
    outputs = [cell.get("outputs", []) for cell in notebook.cells if cell.cell_type == "code"]
    printed = _PRINTED_LABEL.search(content)
    ran_on = html.unescape(printed.group(0)) if printed else "kernel did not print its backend"
    build.runs.append(
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


def _without_counts(outputs: list) -> list:
    """Notebook outputs as the reader sees them: without execution counts (a cell's printed
    text is one stream already: ``notebooks.merged_streams``)."""
    return [
        notebooks.merged_streams(
            [{k: v for k, v in output.items() if k != "execution_count"} for output in cell]
        )
        for cell in outputs
    ]
