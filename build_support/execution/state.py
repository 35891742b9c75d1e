"""One build's state (``BuildState``: its sessions, notebooks, run-ahead and runs), and the
process's (``PROCESS``). A new ``BuildState`` is made for every build, so a ``mkdocs serve``
rebuild starts with no session or notebook left over; the modules that drive it (``sessions``,
``notebooks/page.py``) take it as their first argument.

MkDocs calls hooks, and markdown-exec its formatters, as plain functions of the process: they
reach the build running now through ``PROCESS`` (``current()``), which also holds the serve flag
(MkDocs says the command once per process) and the executor, whose warm template serves the next
rebuild too. The rest of the process's state is listed in ``KEPT_ELSEWHERE``.
"""

from __future__ import annotations

import json
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import settings
from ..caching import compile_cache
from ..caching.cache import ExecutionCache, Lookup, key_of
from ..caching.environment import Environment
from ..cluster import client as cluster_client
from ..cluster import shards
from ..notebooks.kernels import Notebooks, NotebookThreads
from ..publishing.record import Drift, Output
from ..publishing.runs import Run, outputs
from ..section import PACKAGE
from . import fences
from .executor import DEFAULT_TIMEOUT_S, MAX_OUTPUT_BYTES, BlockError, Limits, LocalExecutor
from .guard import Failing
from .plan import RunAhead

if TYPE_CHECKING:
    from .executor import SessionWorker


@dataclass
class Slot:
    """Where one block's output and run label go in the page, filled once the session is done."""

    output_token: str
    ran_on_token: str
    run: Run  # the block's run, completed when filled
    html: str = ""
    ran_on: str = ""
    first_conversion: int = 0  # markdown-exec's conversion count before it (``renumbered``)


@dataclass
class Session:
    """A markdown-exec session's blocks on one page, read from its Markdown (``fences``), and
    how this build treats it: the slots of its outputs, and the worker its blocks share (one per
    page and session, whose globals they share; never markdown-exec's, never the build's)."""

    fences: list[fences.Fence] = field(default_factory=list)
    name: str = ""  # markdown-exec's session name
    entry: dict[str, Any] | None = None  # reused from the cache when set
    reasons: list[str] = field(default_factory=list)
    found: Lookup | None = None  # its look-up in the cache, at its first block
    blocks: list[dict[str, Any]] = field(default_factory=list)  # what this build ran
    options_seen: list[dict[str, Any]] = field(default_factory=list)  # its blocks formatted
    slots: list[Slot] = field(default_factory=list)
    reads: dict[str, str] = field(default_factory=dict)  # files its run read
    failed: bool = False
    measured: dict[str, str] | None = None
    worker: SessionWorker | None = None  # taken when a block of it first runs
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def timed(self) -> bool:
        return any(fences.is_timed(fence.options) for fence in self.fences)

    def close(self) -> None:
        """End its worker (and whatever its blocks started): the session is done."""
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def new_slot(self, run: Run) -> Slot:
        prefix = f"exec-session-{self.token}-{len(self.slots)}"
        slot = Slot(f"{prefix}-output", f"{prefix}-ran-on", run)
        self.slots.append(slot)
        return slot


@dataclass
class BuildState:
    """One build: where it runs, its cache and key ingredients, the page being rendered, what
    ran, its sessions and notebooks, and the drift since the last published version."""

    project_root: Path
    cache: ExecutionCache
    environment: Environment
    notebooks: Notebooks
    config: Any = None  # MkDocs' config: its Markdown settings expand a session's snippets
    page: str = "?"
    runs: list[Run] = field(default_factory=list)
    sessions: dict[tuple[str, str], Session] = field(default_factory=dict)  # (page, name)
    unnamed: dict[str, list[fences.Fence]] = field(default_factory=dict)  # its blocks not yet
    # formatted, by page (``sessions._name``)
    drift: Drift | None = None  # set with the Build report (make publish only)
    failing: Failing = field(init=False)  # its failed blocks
    ahead: RunAhead = field(init=False)  # blocks run ahead of their pages, side by side
    workers_ended: bool = False  # set by ``end``: no worker is taken after it
    _workers_start: tuple[Limits, str | None, str, str] | None = None
    _workers_start_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        # On the Dask cluster extra.build.executor names, if any (``cluster/client.py``).
        cluster = cluster_client.cluster_of(self.project_root, lambda: self._for_workers[0])
        self.ahead = RunAhead(self.take_worker, cluster=cluster)
        self.failing = Failing(PROCESS.serving)

    def take_worker(self, timed: bool = False, first_code: str = "") -> SessionWorker:
        """A worker for a new session whose first block is ``first_code``; a timed session's
        compiles never load JAX's compilation cache (``caching/compile_cache.py``)."""
        if self.workers_ended:  # a template started again now would cost 0.9 s, unseen
            raise RuntimeError(
                "a worker was asked for after this build's workers ended (on_post_build): "
                "ask for it earlier, while the pages render or in on_env"
            )
        limits, package_dir, cache, version = self._for_workers
        cache = None if timed else cache
        return PROCESS.executor.take(limits, package_dir, cache, first_code, version)

    @property
    def _for_workers(self) -> tuple[Limits, str | None, str, str]:
        """What every worker of this build starts with, read once (run-ahead threads ask at
        once): its limits, the package's folder, JAX's compilation cache (pruned here, once a
        build), and the package's digest (its package template's)."""
        from ..caching.environment import examples_package_dir
        from ..caching.store import store_root

        with self._workers_start_lock:
            if self._workers_start is None:
                found = settings.current(self.project_root)
                limits = Limits(MAX_OUTPUT_BYTES, int(found.memory_limit_gib * 2**30))
                package_dir = examples_package_dir()
                if found.fresh:
                    cache = PROCESS.fresh_compile_folder()
                else:
                    cache = compile_cache.directory(store_root(self.project_root))
                version = key_of(self.environment.package)
                self._workers_start = (limits, package_dir and str(package_dir), cache, version)
            return self._workers_start

    def look_up(
        self,
        ingredients: dict[str, str],
        identity: str,
        objections: Callable[[dict[str, Any]], list[str]],
        plan: bool = False,
    ) -> Lookup:
        """An output's look-up in the cache; one made ahead of its page (``plan``, by
        ``sessions.plan_ahead``) serves the page's own, so each output is looked up once a build."""
        memo = (identity, key_of(ingredients))
        found = self.ahead.lookups.pop(memo, None)
        if found is None:
            found = self.cache.look_up(ingredients, identity, objections)
            if plan:
                self.ahead.lookups[memo] = found
        return found

    def cached_value(self, name: str, code: str) -> Any:
        """What ``code`` prints as JSON (a value the prose quotes), run in a worker as a block
        alone would be, and cached as one; ``ValueError`` names ``name`` where it fails or prints
        no JSON; None where this build computes none (``shards.value_left``). Ask before
        ``on_post_build``, where the build's workers end."""
        found = self.cache.look_up(self.environment.ingredients(code, value=name))
        if found.entry is not None:
            return found.entry["value"]
        if shards.value_left(self, name):
            return None
        worker = self.take_worker(False, code)
        try:
            printed = worker.run(code, name, False, DEFAULT_TIMEOUT_S)["output"]
            value = json.loads(printed)
        except BlockError as error:
            raise ValueError(f"the value {name!r} could not be computed: {error.summary}") from None
        except ValueError:
            raise ValueError(f"the value {name!r}: its code printed no JSON: {printed!r}") from None
        finally:
            worker.close()
        self.cache.keep(found, {"value": value})
        return value

    def outputs(self) -> list[Output]:
        return outputs(self.runs)


# ---------------------------------------------------------------- the process's state


@dataclass
class ProcessState:
    """The build process's own state, kept across the builds of one ``mkdocs serve``."""

    serving: bool = False  # MkDocs' command is serve: said once a process, in on_startup
    build: BuildState | None = None  # the build running now: replaced by each build's on_config
    # Its sessions' workers end with each build, its warm template with the process.
    executor: LocalExecutor = field(default_factory=LocalExecutor)
    rebuild: Callable[[], None] = lambda: None  # serve: ask for a rebuild (set in on_startup)
    # Notebooks' threads and, under serve, the runs outliving their rebuild: stopped at exit.
    notebook_threads: NotebookThreads = field(default_factory=NotebookThreads)
    # A FRESH=1 build's JAX compilation folder: made once (workers are taken from several
    # threads), removed when the process ends.
    _fresh_compile: list[str] = field(default_factory=list)
    _fresh_compile_made: threading.Lock = field(default_factory=threading.Lock)

    def fresh_compile_folder(self) -> str:
        with self._fresh_compile_made:
            if not self._fresh_compile:
                self._fresh_compile.append(compile_cache.fresh_directory())
        return self._fresh_compile[0]


PROCESS = ProcessState()

KEPT_ELSEWHERE = {
    "build_support.settings._running": (
        "the settings of the build running, for what no build reaches (hooks, the command "
        "line); set by each build's settings hook, below execution/"
    ),
    "build_support.execution.reads._local": "in a worker: the audit hook's per-thread switch",
    "build_support.execution.reads._hook_installed": "in a worker: the lock adding that hook once",
    "build_support.execution.reads._installed": "in a worker: an audit hook, never removed",
    "build_support.caching.cache._handler": "logging's handlers are per process, never reset",
    "build_support.caching.shared_store._made": (
        "the build's shared store, so its faults are said once and a store found down is asked "
        "nothing more; made again when a build's settings are new (each `mkdocs serve` rebuild)"
    ),
    "build_support.caching.shared_store._made_lock": "the lock making that store once a build",
    "build_support.notebooks.myst._PARSERS": (
        "markdown-it's MyST parser, made once a process; it keeps no page's state"
    ),
    "build_support.publishing.wheel_build.builder_version": "hatchling's, read once a process",
    "build_support.serve_templates.COMPILED": (
        "the theme's templates compiled under `mkdocs serve`, kept across rebuilds; never reset"
    ),
    "build_support.serve_staging.SERVE": (
        "what `mkdocs serve` keeps across the hooks it loads afresh: the folder it serves, the "
        "checkout's build lock a rebuild holds, the folder watched for a call for a rebuild"
    ),
    "build_support.caching.reach._PARSED": (
        "serve: the package's modules as parsed, by their text (the oldest dropped past a bound)"
    ),
    "build_support.imports_on_use._loading": "modules imported on first use, once, by any thread",
}
"""The rest of the process's state, each piece with why and when it is reset (outside execution/,
in a worker, or kept by ``mkdocs serve`` across the hooks it loads afresh for each rebuild).
``tests/test_build_seams.py`` checks that no other is kept."""


def start(project_root: Path, config: Any = None) -> BuildState:
    """A new build, the process's current one from now on; ``config``: MkDocs' config (its
    Markdown settings are in every block's key)."""
    found = settings.current(project_root)
    PROCESS.build = BuildState(
        project_root=project_root,
        cache=ExecutionCache.for_project(project_root),
        environment=Environment.read(project_root, config),
        notebooks=Notebooks(
            found.cell_timeout_s,
            found.memory_limit_gib * 2**30,
            PROCESS.notebook_threads,
            background=PROCESS.serving,
            when_done=PROCESS.rebuild if PROCESS.serving else None,
        ),
        config=config,
    )
    return PROCESS.build


def end() -> None:
    """The build's end, finished or failed: nothing runs ahead, its notebooks' runs are waited
    for (serve: started, to go on past the rebuild), every session's worker ends (serve keeps
    the template and the spare for the next rebuild), and no worker is taken after it."""
    build = PROCESS.build
    if build is not None:  # None: failed before the build started
        build.ahead.stop()
        build.notebooks.start_deferred()
        build.notebooks.finish()
        build.workers_ended = True
    if PROCESS.serving:
        PROCESS.executor.close_sessions()
    else:
        PROCESS.executor.close()


def drop_examples_modules() -> list[str]:
    """Forget ``examples`` and its submodules, so that ``mkdocs serve`` rebuilds with the code
    of an edit: hooks import the package in the build's own process (``hooks/live_numbers.py``,
    ``hooks/try_it.py``, ``hooks/wheel.py``), where Python caches imported modules."""
    names = [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]
    for name in names:
        del sys.modules[name]
    return names


def current() -> BuildState:
    if PROCESS.build is None:
        raise RuntimeError("no build in progress: hooks/execution.py starts one in on_config")
    return PROCESS.build
