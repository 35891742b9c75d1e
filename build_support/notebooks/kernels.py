"""Notebooks run in the background from the start of the build, or come from the cache.

mkdocs-jupyter executes a notebook only while it renders its page, adding the kernel's start and
its cells to the build one after another. Here each runs with nbclient in a thread from the
start of the build, in a kernel of its own, while the other pages render; mkdocs-jupyter
(``execute: false``) renders the executed copy.

A failing cell fails the build, naming the notebook and the cell; so does passing one of a
block's three limits (``executor.Limits``: the ``cell_timeout_s`` setting, outputs counted as
they arrive, the memory of the kernel and all it started). The kernel starts as a child
subreaper (``process_tree.py``); its tree is ended past a limit and when the run ends, before
the kernel stops, never after: once it is gone, what a cell detached would be out of reach.

Under ``mkdocs serve`` (``Notebooks.background``) a rebuild does not wait for a notebook still
running: its page says so (``page.py``) and the run goes on past the rebuild
(``NotebookThreads.runs``), then asks for a rebuild (``when_done``), which finds it in the
cache. A later rebuild with the same key takes that run over; one whose key changed stops it
and runs anew. The kernels still running are killed when the server stops.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from .. import process_tree
from ..execution.executor import (
    MAX_OUTPUT_BYTES,
    MEMORY_SETTING,
    OUTPUT_SETTING,
    POLL_S,
    memory_cap_said,
)

SOCKET_PATH_MAX = 107 - len("-65535")  # a kernel's socket is its ip, a hyphen and a port


class NotebookError(Exception):
    """A cell failed or did not finish: the message names the notebook and the cell."""


class KernelLimits:
    """The output and memory limits on one notebook's kernel, watched while its cells run, and
    its process tree, ended when the run ends (``end``)."""

    def __init__(self, memory_bytes: float) -> None:
        self.memory_bytes = memory_bytes
        self.output_bytes = 0
        self.passed = ""  # the limit the kernel passed, in the words of the build's error
        self.running: int | None = None  # the index of the cell running now
        self.passed_in: int | None = None  # the index of the cell that passed it
        self.process = None  # the kernel's psutil.Process: a pid reused since is not ended
        self.stop = threading.Event()

    def started(self, pid: int) -> None:
        """The kernel is up: watch its memory from now on."""
        self.process = psutil.Process(pid)
        if self.stop.is_set():  # ended while it started (a serve run its notebook's edit stopped)
            self.end()
            return
        threading.Thread(target=self._watch, daemon=True, name="kernel-memory").start()

    def _watch(self) -> None:
        while not self.stop.wait(POLL_S):
            used = process_tree.resident_bytes(self.process.pid)
            if used > self.memory_bytes:
                cap = memory_cap_said(self.memory_bytes, MEMORY_SETTING)
                self.exceeded(f"used {used / 2**30:.1f} GiB, past {cap}", self.running)

    def output(self, message: dict, cell_index: int) -> None:
        """Count one output the kernel sent for cell ``cell_index``; past the limit, stop the
        kernel. The cell is the output's own: the kernel may have finished it, and started the
        next, before its outputs are all read."""
        self.output_bytes += len(json.dumps(message.get("content", {})))
        if self.output_bytes > MAX_OUTPUT_BYTES:
            limit = f"printed more than {MAX_OUTPUT_BYTES:,} bytes of output ({OUTPUT_SETTING})"
            self.exceeded(limit, cell_index)

    def exceeded(self, limit: str, cell_index: int | None) -> None:
        if not self.passed:
            self.passed, self.passed_in = limit, cell_index
        self.end()

    def end(self) -> None:
        self.stop.set()
        if self.process is not None and self.process.is_running():
            # Its group too: the kernel leads a session of its own.
            process_tree.end_tree(self.process.pid)


@dataclass
class NotebookRun:
    src_uri: str
    result: Future = field(default_factory=Future)  # the executed notebook, or its error
    # Set once the last cell has run (or a cell failed): the kernel is then only shutting
    # down, which takes little CPU, so timed blocks need not wait for it.
    cells_done: threading.Event = field(default_factory=threading.Event)
    ran: bool = True
    says_where: bool = False  # the build adds where the kernel ran (``WHERE_IT_RAN``)
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
        self.result.cancel()  # one not started yet (``start_deferred``) never will be


@dataclass
class NotebookThreads:
    """The threads notebooks run in (``state.PROCESS.notebook_threads``); under ``mkdocs
    serve``, the runs going on past the rebuild that started them, by page."""

    runs: dict[str, NotebookRun] = field(default_factory=dict)
    threads: ThreadPoolExecutor | None = None

    def pool(self) -> ThreadPoolExecutor:
        if self.threads is None:
            self.threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="notebook")
            process_tree.before_threads_join(self.stop_running)
        return self.threads

    def stop_running(self) -> None:
        """The server stops: every kernel still running is killed."""
        for run in list(self.runs.values()):
            run.cancel()
        self.runs.clear()


def _run_into(result: Future, execute: Callable) -> None:
    """``execute()``'s notebook or error into ``result``, made before the run was started;
    nothing where the run was stopped before it started (``NotebookRun.cancel``)."""
    if result.set_running_or_notify_cancel():
        try:
            result.set_result(execute())
        except BaseException as error:  # the page that reads it reports it
            result.set_exception(error)


def read_jupytext(path: Path):
    """The notebook at ``path`` (a jupytext ``.py``, a MyST ``.md`` or an ``.ipynb``, read by
    jupytext), each cell's id taken from its position: jupytext draws random ids on every read,
    and a page or a download that changes from build to build cannot be checked against a fresh
    build (``make check-cache``)."""
    import jupytext  # imported here: a build whose notebooks are all cached never needs them

    # A .md is read here only where its front matter makes it a MyST notebook
    # (``formats.py``): read as one, whatever else its header holds.
    notebook = jupytext.read(path, fmt="md:myst" if path.suffix == ".md" else None)
    for index, cell in enumerate(notebook.cells, start=1):
        cell.id = f"cell-{index}"
    return notebook


read_notebook = read_jupytext

VARYING_TAG = "varying-output"
"""A code cell's tag (as Jupyter Book's tags): its outputs differ from run to run (an address,
``%timeit``), so ``make check-cache`` masks them (``caching/compare.py``)."""

# A cell that times its code: its outputs are timings, varying with no mark (IPython's magics)
TIMING_CELL = re.compile(r"^\s*%%?(?:timeit|time)\b", re.MULTILINE)
# An object's address in its default repr (``<function f at 0x7f3c...>``): it differs every run
ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{4,16}\b")


def varies(cell) -> bool:
    """The code cell's outputs differ from run to run: tagged ``varying-output``, or timing."""
    tags = cell.get("metadata", {}).get("tags") or []
    return VARYING_TAG in tags or bool(TIMING_CELL.search(cell.get("source", "")))


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Where ipykernel says a cell's code is: a file in a folder named after the kernel's process
# (``/tmp/ipykernel_4242/1234.py``), which differs from run to run.
_KERNEL_FILE = re.compile(r"(?:[^\s\x1b:'\"]*/)?ipykernel_\d+/(\d+)\.py")


# Where an author's notebook ran, in the words of a block's label (``worker.ran_on``): run in its
# kernel after its cells, where the notebook prints no label of its own (the course's do).
WHERE_IT_RAN = """\
import sys as _course_sys
try:
    if "jax" in _course_sys.modules:
        from examples import backend_report as _course_report

        print(_course_report().label())
    else:
        import platform as _course_platform

        import numpy as _course_numpy

        print(
            f"computed on cpu · numpy {_course_numpy.__version__} · "
            f"Python {_course_platform.python_version()}"
        )
except Exception:
    pass
"""


def code_cell_lines(path: Path) -> list[int]:
    """Where each code cell of a MyST notebook starts in its file (its ```` ```{code-cell} ````
    line, from 1), in order; none for another format. An error names the line, as a compiler
    does (``notebooks/x.md:12: cell 4 (...)``)."""
    if path.suffix != ".md":
        return []
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    return [
        token.map[0] + 1
        for token in tokens
        if token.type == "fence" and token.info.strip().startswith("{code-cell}") and token.map
    ]


def cell_timeout_s(notebook, default: float) -> float:
    """The notebook's own cell time limit (myst-nb's ``execution_timeout`` in its metadata, as
    a fence's ``timeout=``), else ``default``."""
    mystnb = notebook.get("metadata", {}).get("mystnb", {}) or {}
    value = mystnb.get("execution_timeout")
    return float(value) if isinstance(value, (int, float)) and value > 0 else default


def steady_errors(notebook) -> None:
    """Each error output's traceback, and each printed stream (a warning names the line that
    raised it), without the kernel's temporary paths (a fresh run's differ), which name the
    cell's code file as ``<cell>``."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.get("output_type") == "stream":
                output["text"] = _KERNEL_FILE.sub("<cell>", str(output.get("text", "")))
            elif output.get("output_type") == "error":
                output["evalue"] = _KERNEL_FILE.sub("<cell>", str(output.get("evalue", "")))
                output["traceback"] = [
                    _KERNEL_FILE.sub("<cell>", line) for line in output.get("traceback", [])
                ]


def execute_notebook(path: Path, kernel_name: str, run: NotebookRun, timeout_s: float):
    """Run every cell of the jupytext notebook at ``path`` in a fresh kernel, in its folder,
    under ``run.kernel``, setting ``run.cells_done`` once they ran.
    The kernel is reached over Unix sockets in a folder only this user can enter, not over TCP
    ports any local user can connect to.

    Returns ``(executed notebook, seconds)``; raises ``NotebookError`` naming the cell that
    failed or hung (cells are numbered from 1, code and text alike, as Jupyter shows them).
    """
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    from traitlets.config import Config

    limits = run.kernel
    assert limits is not None, "the run's kernel limits come first (Notebooks.start)"
    started = time.perf_counter()
    notebook = read_jupytext(path)
    code_cells = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    if run.says_where:  # run after the author's cells, in their kernel; never shown as a cell
        import nbformat

        notebook.cells.append(nbformat.v4.new_code_cell(WHERE_IT_RAN, id="where-it-ran"))

    class LimitedClient(NotebookClient):
        def output(self, outs, msg, display_id, cell_index):
            limits.output(msg, cell_index)
            if limits.passed:  # the run fails: what comes after is not kept
                return None
            return super().output(outs, msg, display_id, cell_index)

    class KeptKernel(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            command = super().format_kernel_cmd(extra_arguments)
            return [sys.executable, "-I", process_tree.__file__, *command]

        async def shutdown_kernel(self, now=False, restart=False):
            # Its tree first (see the module's notes), at once: a kernel asked to shut down
            # while a cell runs (a cell past its time) logs a traceback for the reply it can no
            # longer send, before the build could say what happened.
            limits.end()
            await super().shutdown_kernel(now=True, restart=restart)

    def on_notebook_start(notebook):
        limits.started(client.km.provisioner.process.pid)

    def on_cell_start(cell, cell_index):
        limits.running = cell_index

    def on_cell_executed(cell, cell_index, execute_reply):
        if not code_cells or cell_index == code_cells[-1]:
            run.cells_done.set()

    fence_lines = code_cell_lines(path)

    def cell_named(index: int | None) -> str:
        lines = notebook.cells[index or 0].source.splitlines()
        first_line = next((line.strip() for line in lines if line.strip()), "")
        ordinal = code_cells.index(index) if index in code_cells else len(fence_lines)
        at = f":{fence_lines[ordinal]}" if ordinal < len(fence_lines) else ""
        return f"{run.src_uri}{at}: cell {(index or 0) + 1} ({first_line[:60]})"

    timeout_s = cell_timeout_s(notebook, timeout_s)

    sockets = tempfile.TemporaryDirectory(prefix="course-kernel-")
    ip = os.path.join(sockets.name, "kernel")  # absolute: the kernel runs in the notebook's folder
    # A socket's path has 107 bytes at most (sun_path): past that (a long TMPDIR), TCP.
    transport = {"transport": "ipc", "ip": ip} if len(os.fsencode(ip)) <= SOCKET_PATH_MAX else {}
    failure: Exception | None = None
    try:
        client = LimitedClient(
            notebook,
            config=Config({"KernelManager": transport}),
            kernel_manager_class=KeptKernel,
            kernel_name=kernel_name,
            timeout=timeout_s,
            allow_errors=False,
            resources={"metadata": {"path": str(path.parent)}},
            on_notebook_start=on_notebook_start,
            on_cell_start=on_cell_start,
            on_cell_executed=on_cell_executed,
        )
        client.execute()
    except (CellTimeoutError, CellExecutionError, DeadKernelError) as error:
        failure = error
    finally:
        limits.end()  # nothing a cell started outlives the run
        sockets.cleanup()
        run.cells_done.set()
    if limits.passed:  # with no failure where the last cell's outputs passed it, read after it
        raise NotebookError(f"{cell_named(limits.passed_in)} {limits.passed}: stopped") from failure
    if failure is not None:
        cell = cell_named(limits.running)
        if isinstance(failure, CellTimeoutError):
            raise NotebookError(f"{cell} did not finish within {timeout_s:g} s") from failure
        if isinstance(failure, DeadKernelError):
            raise NotebookError(f"{cell} ended its kernel: {failure}") from failure
        said = _KERNEL_FILE.sub("<cell>", _ANSI.sub("", str(failure)))
        raise NotebookError(f"{cell} failed:\n{said}") from failure
    if run.says_where:
        said = "".join(out.get("text", "") for out in notebook.cells.pop().get("outputs", []))
        notebook.metadata.setdefault("course", {})["ran_on"] = said.strip()
    steady_errors(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = merged_streams(cell.outputs)
    return notebook, time.perf_counter() - started


def merged_streams(outputs: list) -> list:
    """A cell's outputs with each run of printed text (same stream) as one output: the kernel
    splits it into chunks as the timing falls, and the page would show one box per chunk."""
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else {}
        same_stream = output.get("output_type") == last.get("output_type") == "stream"
        if same_stream and output.get("name") == last.get("name"):
            last["text"] += output.get("text", "")
        else:
            merged.append(output)
    return merged


@dataclass
class Notebooks:
    """A build's notebooks: each one's run (by its page's ``src_uri``) and the folder their
    executed copies are rendered from. ``finish`` waits for the runs (a kernel left running
    would outlive the build) and removes the folder."""

    cell_timeout_s: float
    memory_bytes: float
    threads: NotebookThreads  # the process's
    runs: dict[str, NotebookRun] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)  # each notebook's format (formats.py)
    jupyter_book: set[str] = field(default_factory=set)  # pages Jupyter Book's way (formats.py)
    paths: dict[str, Path] = field(default_factory=dict)  # each notebook's source
    labels: dict[str, tuple[str, str]] | None = None  # MyST targets (page._labels)
    background: bool = False  # mkdocs serve: runs go on past the rebuild (``threads.runs``)
    when_done: Callable[[], None] | None = None  # mkdocs serve: a run ended, rebuild
    _scratch: Path | None = None
    _deferred: list = field(default_factory=list)  # mkdocs serve: started at the build's end

    def start(self, path: Path, kernel_name: str, run: NotebookRun, on_success) -> None:
        """Execute in the background; ``on_success(notebook, seconds)`` runs in that thread."""

        run.kernel = KernelLimits(self.memory_bytes)

        def execute():
            # ``run.kernel``: its process tree can be ended from outside the run.
            notebook, run.seconds = execute_notebook(path, kernel_name, run, self.cell_timeout_s)
            if not run.cancelled:
                on_success(notebook, run.seconds)
            return notebook

        if self.background:
            # Started once the rebuild's pages are built (``start_deferred``): its kernel's
            # start would otherwise take the cores the edited blocks run on.
            self.threads.runs[run.src_uri] = run
            if self.when_done is not None:  # once its result is set: the rebuild reads it
                when_done = self.when_done
                run.result.add_done_callback(lambda _: run.cancelled or when_done())
            self._deferred.append((run, execute))
            return
        run.result = self.threads.pool().submit(execute)

    def start_deferred(self) -> None:
        """Under ``mkdocs serve``, once the rebuild's pages are built: its notebooks' runs."""
        for run, execute in self._deferred:
            self.threads.pool().submit(_run_into, run.result, execute)
        self._deferred.clear()

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
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
