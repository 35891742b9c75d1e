"""Execute the notebooks in the background from the start of the build, instead of in line.

mkdocs-jupyter can execute a notebook itself (``execute: true``), but only while it renders
the notebook's page: the kernel's start, its imports and the cells then add their seconds to
the build one after another (3.5 s of a 12 s build, measured). Here each notebook runs with
nbclient in a thread from the start of the build, while the other pages render; the kernel is
a process of its own, so it works on another core. mkdocs-jupyter, set to ``execute: false``,
then renders the executed copy.

- A failing cell fails the build, naming the notebook and the cell (``allow_errors`` off).
- A block that times code is marked ``quiet="yes"``: it runs only after every notebook's
  cells have run, so that its measurement has the machine to itself.
- The executed copy is a temporary ``.ipynb`` read by the notebook page's render alone: the
  page's source file, and the copy of it that mkdocs-jupyter publishes, stay the ``.py``.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import jupytext
import markdown_exec
import nbformat
from mkdocs.exceptions import PluginError
from nbclient import NotebookClient

CELL_TIMEOUT_S = 600


@dataclass(frozen=True)
class _Run:
    result: Future  # (the executed notebook, seconds) or the error that stopped it
    # Set when the last cell has run (or the run failed): from then on the kernel is only
    # shutting down, which takes little CPU, so timed blocks need not wait for it.
    cells_done: threading.Event


_runs: dict[str, _Run] = {}  # by the notebook's src_uri
_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="notebook")
_scratch: Path | None = None


def execute_notebook(
    path: Path, kernel_name: str, cells_done: threading.Event
) -> tuple[nbformat.NotebookNode, float]:
    """Run every cell of the notebook at ``path`` in a fresh kernel, in the notebook's folder."""
    started = time.perf_counter()
    notebook = jupytext.read(path)
    code_cells = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]

    def on_cell_executed(cell, cell_index, execute_reply):
        if cell_index == code_cells[-1]:
            cells_done.set()

    try:
        NotebookClient(
            notebook,
            kernel_name=kernel_name,
            timeout=CELL_TIMEOUT_S,
            allow_errors=False,
            resources={"metadata": {"path": str(path.parent)}},
            on_cell_executed=on_cell_executed,
        ).execute()
    finally:
        cells_done.set()
    return notebook, time.perf_counter() - started


def wait_for_notebooks() -> None:
    """Until every notebook's cells have run."""
    for run in _runs.values():
        run.cells_done.wait()


def _quiet(formatter):
    def run_when_quiet(**options):
        if options.get("extra", {}).get("quiet") == "yes":
            wait_for_notebooks()
        return formatter(**options)

    run_when_quiet.__wrapped__ = formatter
    return run_when_quiet


def on_config(config):
    # Runs after hooks/execution_report.py, which puts the original formatter back first.
    for language in ("python", "py"):
        markdown_exec.formatters[language] = _quiet(markdown_exec.formatters[language])
    return config


def on_files(files, config):
    global _scratch
    jupyter = config.plugins["mkdocs-jupyter"]
    if jupyter.config["execute"]:
        raise PluginError(
            "set mkdocs-jupyter's execute to false: hooks/background_notebooks.py runs notebooks"
        )
    _runs.clear()
    _scratch = Path(tempfile.mkdtemp(prefix="notebooks-"))
    for file in files.documentation_pages():
        if jupyter.should_include(file):
            cells_done = threading.Event()
            result = _executor.submit(
                execute_notebook,
                Path(file.abs_src_path),
                jupyter.config["kernel_name"],
                cells_done,
            )
            _runs[file.src_uri] = _Run(result, cells_done)
    return files


def on_pre_page(page, config, files):
    # After mkdocs-jupyter's on_pre_page (hooks run after plugins), which set page.render.
    run = _runs.get(page.file.src_uri)
    if run is None:
        return page
    render = page.render

    def render_executed(config, files):
        try:
            notebook, seconds = run.result.result()
        except Exception as error:
            raise PluginError(
                f"notebook {page.file.src_uri} failed to execute:\n{error}"
            ) from error
        page.notebook_execution_s = seconds  # read by hooks/execution_report.py
        executed = (_scratch / page.file.src_uri).with_suffix(".ipynb")
        executed.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, executed)
        source = page.file.abs_src_path
        page.file.abs_src_path = str(executed)  # read by mkdocs-jupyter's render only
        try:
            render(config, files)
        finally:
            page.file.abs_src_path = source

    page.render = render_executed
    return page


def _clean_up():
    wait([run.result for run in _runs.values()])  # a kernel left running would outlive the build
    if _scratch is not None:
        shutil.rmtree(_scratch, ignore_errors=True)


def on_post_build(config):
    _clean_up()


def on_build_error(error):
    _clean_up()
