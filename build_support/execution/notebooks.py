"""Notebooks run in the background from the start of the build, or come from the cache.

mkdocs-jupyter could execute a notebook itself, but only while it renders the notebook's page:
the kernel's start, its imports and the cells would then add their seconds to the build one
after another. Here each notebook runs with nbclient in a thread from the start of the build,
in a kernel process of its own, while the other pages render; mkdocs-jupyter (``execute:
false``) then renders the executed copy. A notebook whose key is in the cache is not run.

- A failing cell fails the build, naming the notebook and the cell (``allow_errors`` off).
- The kernel gets a block's three limits (``executor.Limits``), each failing the build the same
  way, naming the limit and the cell that passed it: a cell that runs longer than the
  ``cell_timeout_s`` setting (mkdocs.yml); outputs past ``MAX_OUTPUT_BYTES``, counted as the
  kernel sends them, in any cell, the last included; the kernel and whatever it started using
  more than the ``memory_limit_gib`` setting. Either of the last two ends the kernel's process
  tree at once, and the end of the run ends it in any case (``kernel_limits.py``): nothing a
  cell started (a thread, a fork, a subprocess in a session of its own) outlives it.

Under ``mkdocs serve`` (``Notebooks.background``) a rebuild does not wait for a notebook still
running: its page says so and shows its cells without outputs (``notebook_page.py``), every other
page is served as soon as it is built, and the run goes on past the rebuild (``BACKGROUND``,
one per page). Once it ends, it asks the server for a rebuild (``when_done``), which finds the run
in the cache and shows it. A later rebuild with the same notebook key waits for that same run
instead of starting another; an edit that changes the key stops it (its kernel killed) and runs
the new one. The kernels still running are killed when the server stops.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .. import settings
from .kernel_limits import KernelLimits, limited_client


class NotebookError(Exception):
    """A cell failed or did not finish: the message names the notebook and the cell."""


@dataclass
class NotebookRun:
    src_uri: str
    result: Future  # the executed notebook, or the error that stopped it
    # Set once the last cell has run (or a cell failed): the kernel is then only shutting
    # down, which takes little CPU, so timed blocks need not wait for it.
    cells_done: threading.Event = field(default_factory=threading.Event)
    ran: bool = True
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0
    key: str = ""  # its cache key: a serve rebuild with the same one takes this run over
    kernel: KernelLimits | None = None  # its kernel's process tree, once started
    cancelled: bool = False

    def cancel(self) -> None:
        """Stop the run: its notebook changed since it started (``mkdocs serve``)."""
        self.cancelled = True
        if self.kernel is not None:
            self.kernel.end()
        if self.result is not None:
            self.result.cancel()  # one not started yet (``start_deferred``) never will be


@dataclass
class _Background:
    """Under ``mkdocs serve``: the runs going on past the rebuild that started them, by page,
    and their threads, the server's for its lifetime."""

    runs: dict[str, NotebookRun] = field(default_factory=dict)
    threads: ThreadPoolExecutor | None = None

    def pool(self) -> ThreadPoolExecutor:
        if self.threads is None:
            self.threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="notebook")
            atexit.register(stop_running)
        return self.threads


BACKGROUND = _Background()


def _run_into(result: Future, execute: Callable) -> None:
    """``execute()``'s notebook or error into ``result``, made before the run was started;
    nothing where the run was stopped before it started (``NotebookRun.cancel``)."""
    if result.set_running_or_notify_cancel():
        try:
            result.set_result(execute())
        except BaseException as error:  # the page that reads it reports it
            result.set_exception(error)


def stop_running() -> None:
    """The server stops: every kernel still running is killed."""
    for run in list(BACKGROUND.runs.values()):
        run.cancel()
    BACKGROUND.runs.clear()


def read_jupytext(path: Path):
    """The jupytext notebook at ``path``, each cell's id taken from its position: jupytext
    draws random ids on every read, and a page or a download that changes from build to build
    cannot be checked against a fresh build (``make check-cache``)."""
    import jupytext  # imported here: a build whose notebooks are all cached never needs them

    notebook = jupytext.read(path)
    for index, cell in enumerate(notebook.cells, start=1):
        cell.id = f"cell-{index}"
    return notebook


def execute_notebook(
    path: Path,
    kernel_name: str,
    cells_done: threading.Event,
    name: str | None = None,
    timeout_s: float | None = None,
    limits: KernelLimits | None = None,
):
    """Run every cell of the jupytext notebook at ``path`` in a fresh kernel, in its folder.

    Returns ``(executed notebook, seconds)``; raises ``NotebookError`` naming the cell that
    failed or hung (cells are numbered from 1, code and text alike, as Jupyter shows them).
    """
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    name = name or path.name
    timeout_s = timeout_s or settings.current().cell_timeout_s
    started = time.perf_counter()
    notebook = read_jupytext(path)
    code_cells = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]

    def on_cell_executed(cell, cell_index, execute_reply):
        if cell_index == code_cells[-1]:
            cells_done.set()

    def said(index: int | None) -> str:
        lines = notebook.cells[index or 0].source.splitlines()
        first_line = next((line.strip() for line in lines if line.strip()), "")
        return f"{name}: cell {(index or 0) + 1} ({first_line[:60]})"

    limits = limits or KernelLimits(settings.current().memory_limit_gib * 2**30)
    sockets = tempfile.TemporaryDirectory(prefix="course-kernel-")
    failure: Exception | None = None
    try:
        limited_client(
            notebook,
            limits,
            sockets.name,
            kernel_name=kernel_name,
            timeout=timeout_s,
            allow_errors=False,
            resources={"metadata": {"path": str(path.parent)}},
            on_cell_executed=on_cell_executed,
        ).execute()
    except (CellTimeoutError, CellExecutionError, DeadKernelError) as error:
        failure = error
    finally:
        limits.end()  # nothing a cell started outlives the run
        sockets.cleanup()
        cells_done.set()
    if limits.passed:  # with no failure where the last cell's outputs passed it, read after it
        raise NotebookError(f"{said(limits.passed_in)} {limits.passed}: stopped") from failure
    if failure is not None:
        cell = said(limits.running)
        if isinstance(failure, CellTimeoutError):
            raise NotebookError(f"{cell} did not finish within {timeout_s:g} s") from failure
        if isinstance(failure, DeadKernelError):
            raise NotebookError(f"{cell} ended its kernel: {failure}") from failure
        raise NotebookError(f"{cell} failed:\n{failure}") from failure
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = merged_streams(cell.outputs)
    return notebook, time.perf_counter() - started


def merged_streams(outputs: list) -> list:
    """A cell's outputs with each run of printed text (same stream) as one output: the kernel
    splits it into chunks as the timing falls, and the page would show one box per chunk."""
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (
            last is not None
            and output.get("output_type") == last.get("output_type") == "stream"
            and output.get("name") == last.get("name")
        ):
            last["text"] += output.get("text", "")
        else:
            merged.append(output)
    return merged


@dataclass
class Notebooks:
    """A build's notebooks: each one's run (by its page's ``src_uri``), the threads they run in
    (started with the first notebook that must run), and the folder their executed copies are
    rendered from. ``finish`` ends all three: a kernel left running would outlive the build."""

    cell_timeout_s: float
    memory_bytes: float
    runs: dict[str, NotebookRun] = field(default_factory=dict)
    background: bool = False  # mkdocs serve: runs go on past the rebuild (``BACKGROUND.runs``)
    when_done: Callable[[], None] | None = None  # mkdocs serve: a run ended, rebuild
    _threads: ThreadPoolExecutor | None = None
    _scratch: Path | None = None
    _deferred: list = field(default_factory=list)  # mkdocs serve: started at the build's end

    def start(self, path: Path, kernel_name: str, run: NotebookRun, on_success) -> None:
        """Execute in the background; ``on_success(notebook, seconds)`` runs in that thread."""

        run.kernel = KernelLimits(self.memory_bytes)

        def execute():
            # ``run.kernel``: its process tree can be ended from outside the run.
            notebook, seconds = execute_notebook(
                path, kernel_name, run.cells_done, run.src_uri, self.cell_timeout_s, run.kernel
            )
            run.seconds = seconds
            if not run.cancelled:
                on_success(notebook, seconds)
            return notebook

        if self.background:
            # Started once the rebuild's pages are built (``start_deferred``): its kernel's
            # start would otherwise take the cores the edited blocks run on.
            BACKGROUND.runs[run.src_uri] = run
            run.result = Future()
            if self.when_done is not None:  # once its result is set: the rebuild reads it
                when_done = self.when_done
                run.result.add_done_callback(lambda _: run.cancelled or when_done())
            self._deferred.append((run, execute))
            return
        if self._threads is None:
            self._threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="notebook")
        run.result = self._threads.submit(execute)

    def start_deferred(self) -> None:
        """Under ``mkdocs serve``, once the rebuild's pages are built: its notebooks' runs."""
        for run, execute in self._deferred:
            BACKGROUND.pool().submit(_run_into, run.result, execute)
        self._deferred.clear()

    def take_over(self, run: NotebookRun) -> None:
        """A run an earlier serve rebuild started with the same key: this build's too."""
        self.runs[run.src_uri] = run
        if run.result.done():
            BACKGROUND.runs.pop(run.src_uri, None)  # its end is shown once

    def wait_for_cells(self) -> None:
        """Until every notebook's cells have run (its kernel may still be stopping); under
        ``mkdocs serve``, those running now (the rebuild's own start once its pages are built)."""
        deferred = {id(run) for run, _ in self._deferred}
        for run in self.runs.values():
            if id(run) not in deferred:
                run.cells_done.wait()

    def scratch(self) -> Path:
        """A folder of this build's own, for the executed copies mkdocs-jupyter renders."""
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="notebooks-"))
        return self._scratch

    def finish(self) -> None:
        """Wait for every kernel (serving: none still running), then remove the scratch
        folder; idempotent."""
        for run in self.runs.values():
            if run.result is not None and not (self.background and not run.result.done()):
                with contextlib.suppress(Exception):  # reported by the page that renders it
                    run.result.result()
        if self._threads is not None:
            self._threads.shutdown(wait=True)
            self._threads = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
