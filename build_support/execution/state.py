"""One build's state, in one object (``BuildState``), at the bottom of ``execution/``: it imports
none of the modules that drive it (``runner``, ``sessions``, ``notebook_page``), which take it
as their first argument. A new ``BuildState`` is made for every build, so a ``mkdocs serve``
rebuild starts with no session and no notebook left over from the previous build. Its parts:
each page's markdown-exec sessions (``Session``: their fences, the slots of their outputs, the
worker whose globals their blocks share), ``notebooks.Notebooks`` (their runs, threads and
scratch folder), the run-ahead (``plan.RunAhead``) and the runs recorded for the Build report.

What belongs to the process, not to one build, is ``PROCESS``: MkDocs says the command once per
process (``on_startup``: one ``mkdocs serve`` runs many builds), and MkDocs calls hooks, and
markdown-exec its formatters, as plain functions of the process; they reach the build running
now through it (``current()``). The serve flag is held there, once, and the executor
(``executor.LocalExecutor``), whose template serves the next rebuild too. The rest of the
process's state, kept where it is used, is listed beside it (``KEPT_ELSEWHERE``), each piece
with why and when it is reset.
"""

from __future__ import annotations

import html
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import settings
from ..caching.cache import ExecutionCache, Lookup, key_of
from ..caching.environment import Environment
from ..publishing.record import Drift, Output
from ..publishing.runs import Run, outputs
from ..section import PACKAGE
from . import compile_cache, fences, reads
from .executor import (
    DEFAULT_TIMEOUT_S,
    MAX_OUTPUT_BYTES,
    MEMORY_SETTING,
    BlockError,
    Limits,
    LocalExecutor,
)
from .notebooks import Notebooks
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


@dataclass
class Session:
    """A markdown-exec session's blocks on one page, read from its Markdown (``fences``), and
    how this build treats it: the slots of its outputs, and the worker its blocks share (one per
    page and session, whose globals they share; never markdown-exec's, never the build's)."""

    fences: list[fences.Fence] = field(default_factory=list)
    name: str = ""  # markdown-exec's session name
    position: int = 0  # blocks of it formatted so far
    entry: dict[str, Any] | None = None  # reused from the cache when set
    reasons: list[str] = field(default_factory=list)
    found: Lookup | None = None  # its look-up in the cache, at its first block
    blocks: list[dict[str, Any]] = field(default_factory=list)  # what this build ran
    options_seen: list[dict[str, Any]] = field(default_factory=list)
    slots: list[Slot] = field(default_factory=list)
    reads: dict[str, str] = field(default_factory=dict)  # files its run read
    failed: bool = False
    measured: dict[str, str] | None = None
    worker: SessionWorker | None = None  # taken when a block of it first runs
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def timed(self) -> bool:
        return any(fences.is_timed(fence.options) for fence in self.fences)

    def run_afresh(self) -> None:
        """Run again from its first block: in a new worker, with no block run yet."""
        self.close()
        self.blocks, self.measured = [], None

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

    def stored(self, position: int) -> dict[str, Any] | None:
        """Block ``position`` of the stored run being reused, if there is one."""
        blocks = self.entry["blocks"] if self.entry is not None else []
        return blocks[position] if position < len(blocks) else None

    def complete(self) -> bool:
        """Every block the page's Markdown showed has run in this build, none failed."""
        return not self.failed and len(self.blocks) == len(self.fences) == len(self.slots)

    def fill(self, content: str) -> str:
        """The page's HTML with this session's outputs and run labels in their slots."""
        for slot in self.slots:
            content = content.replace(slot.output_token, slot.html)
            content = content.replace(slot.ran_on_token, html.escape(slot.ran_on))
            slot.run.ran_on = slot.ran_on
        return content


@dataclass
class BuildState:
    """One build: where it runs, its cache and key ingredients, the page being rendered, what
    ran, its sessions and notebooks, and the drift since the last published version."""

    project_root: Path
    cache: ExecutionCache
    environment: Environment
    notebooks: Notebooks
    config: Any = None  # MkDocs' config: its Markdown settings expand a session's snippets
    languages: tuple[str, ...] = fences.LANGUAGES  # the fences it runs (plan and page alike)
    page: str = "?"
    runs: list[Run] = field(default_factory=list)
    sessions: dict[tuple[str, str], Session] = field(default_factory=dict)  # (page, name)
    drift: Drift | None = None  # set with the Build report (make publish only)
    ahead: RunAhead = field(init=False)  # blocks run ahead of their pages, side by side
    workers_ended: bool = False  # hooks/execution.py's on_post_build ends this build's workers

    def __post_init__(self) -> None:
        self.ahead = RunAhead(self.take_worker)

    @property
    def serving(self) -> bool:
        """Under ``mkdocs serve`` a failing block shows in its page; anywhere else it fails the
        build. Held once, by the process (``PROCESS``)."""
        return PROCESS.serving

    def take_worker(self, timed: bool = False, first_code: str = "") -> SessionWorker:
        """A worker process for a new session whose first block is ``first_code``, under this
        build's limits (``executor.py``); a timed session's compiles JAX's compilation cache
        (``compile_cache.py``) never loads."""
        if self.workers_ended:  # a template started again now would cost 0.9 s, unseen
            raise RuntimeError(
                "a worker was asked for after this build's workers ended (on_post_build): "
                "ask for it earlier, while the pages render or in on_env"
            )
        limits, package_dir, cache = self._for_workers
        cache = None if timed else cache
        version = self._package_version
        return PROCESS.workers.take(limits, PACKAGE, package_dir, cache, first_code, version)

    @cached_property
    def _for_workers(self) -> tuple[Limits, str | None, str]:
        """What every worker of this build starts with (read once a build): its limits, the
        package's folder and JAX's compilation cache (``compile_cache.py``)."""
        from ..caching.environment import examples_package_dir
        from ..caching.store import store_root

        found = settings.current(self.project_root)
        limits = Limits(MAX_OUTPUT_BYTES, int(found.memory_limit_gib * 2**30), MEMORY_SETTING)
        package_dir = examples_package_dir()
        cache = compile_cache.directory(store_root(self.project_root), found.fresh)
        return limits, package_dir and str(package_dir), cache

    @cached_property
    def _package_version(self) -> str:
        """The package this build's keys describe, as one digest (its package template's)."""
        return key_of(self.environment.package)

    def look_up(
        self,
        ingredients: dict[str, str],
        identity: str,
        objections: Callable[[dict[str, Any]], list[str]],
        plan: bool = False,
    ) -> Lookup:
        """An output's look-up in the cache; one made ahead of its page (``plan``, by
        ``plan.plan``) serves the page's own, so each output is looked up once a build."""
        memo = (identity, key_of(ingredients))
        found = self.ahead.lookups.pop(memo, None)
        if found is None:
            found = self.cache.look_up(ingredients, identity, objections)
            if plan:
                self.ahead.lookups[memo] = found
        return found

    def stale_reads(self, payload: dict[str, Any]) -> list[str]:
        """The files a stored run read that have changed since (``reads.py``)."""
        return reads.changed(payload.get("reads"), self.project_root)

    def cached_value(self, name: str, code: str) -> Any:
        """A JSON value the ``examples`` package gives (numbers quoted in the prose): what
        ``code`` prints, as JSON, run as a block of its own would be, in a worker (never in the
        build, which then imports neither the package nor JAX for it); cached as a block of
        ``code`` (the key follows what it reaches). ``ValueError`` names ``name`` where the code
        fails or prints no JSON. Ask before ``on_post_build``, where the build's workers end
        (hooks/execution.py): a worker taken after that starts its template again."""
        found = self.cache.look_up(self.environment.ingredients(code, value=name))
        if found.entry is not None:
            return found.entry["value"]
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


def new_build(project_root: Path, config: Any = None) -> BuildState:
    """A build of ``project_root``; ``config``: MkDocs' config (its Markdown settings are in
    every block's key). ``start`` makes it the process's current build."""
    return BuildState(
        project_root=project_root,
        cache=ExecutionCache.for_project(project_root),
        environment=Environment.read(project_root, config),
        notebooks=Notebooks(
            settings.current(project_root).cell_timeout_s,
            settings.current(project_root).memory_limit_gib * 2**30,
            background=PROCESS.serving,
            when_done=PROCESS.rebuild if PROCESS.serving else None,
        ),
        config=config,
        languages=_languages(config),
    )


def _languages(config: Any) -> tuple[str, ...]:
    """The languages of ``fences.LANGUAGES`` that markdown-exec executes under ``config``."""
    plugin = config.plugins.get("markdown-exec") if config is not None else None
    if plugin is None:
        return fences.LANGUAGES
    return tuple(name for name in fences.LANGUAGES if name in plugin.config.languages)


# ---------------------------------------------------------------- the process's state


@dataclass
class Process:
    """The build process's own state, kept across the builds of one ``mkdocs serve``."""

    serving: bool = False  # MkDocs' command is serve: said once a process, in on_startup
    build: BuildState | None = None  # the build running now: replaced by each build's on_config
    workers: LocalExecutor = field(default_factory=LocalExecutor)  # its sessions' workers end
    # with each build, its warm template with the process
    rebuild: Callable[[], None] = lambda: None  # serve: ask for a rebuild (set in on_startup)

    def started(self, command: str) -> None:
        self.serving = command == "serve"


PROCESS = Process()
"""MkDocs calls hooks, and markdown-exec its formatters, as plain functions of the process: they
reach the build running now through it."""

KEPT_ELSEWHERE = {
    "build_support.settings._running": (
        "the settings of the build this process runs, for what no build object reaches (the "
        "store's folder of every named cache: hooks, the command line); set by each build's "
        "settings hook. Below execution/, so it cannot be the state's"
    ),
    "build_support.execution.reads._local": (
        "the audit hook's per-thread switch, in the worker process (set while a block runs)"
    ),
    "build_support.execution.reads._hook_installed": (
        "an audit hook is added once per worker process: the lock that adds it"
    ),
    "build_support.execution.reads._installed": (
        "an audit hook cannot be removed: one per worker process, never reset"
    ),
    "build_support.caching.cache._handler": "logging's handlers are per process, never reset",
    "build_support.publishing.wheel_build.builder_version": (
        "the versions of the hatchling this process imported, read once a process"
    ),
    "build_support.execution.compile_cache._fresh": (
        "a FRESH=1 process's own compilation cache folder, made once, removed when it ends"
    ),
    "build_support.execution.compile_cache._FRESH_MADE": (
        "the lock that makes that folder once when threads ask for it at the same time"
    ),
    "build_support.serve_templates.COMPILED": (
        "the theme's templates compiled under `mkdocs serve`, kept across its rebuilds (each "
        "makes a new Jinja environment); never reset"
    ),
    "build_support.serve_staging.SERVED": (
        "the folder `mkdocs serve` serves, said once (on_serve), while it loads the hooks afresh "
        "for every rebuild"
    ),
    "build_support.serve_staging.LOCK": (
        "the checkout's build lock, held by `mkdocs serve` from a build's on_config to its end, "
        "across the hooks loaded afresh for every rebuild"
    ),
    "build_support.serve_staging.REBUILDS": (
        "the folder `mkdocs serve` watches for a notebook's call for a rebuild, said once "
        "(on_serve), written from the notebook's thread"
    ),
    "build_support.execution.notebooks.BACKGROUND": (
        "under `mkdocs serve`, the notebook runs that go on past the rebuild that started them, "
        "and their threads: the next rebuild takes them over; stopped when the server stops"
    ),
    "build_support.caching.reach._PARSED": (
        "under `mkdocs serve`, the package's modules as parsed, by their text: a rebuild after "
        "a module edit parses that one again (the oldest dropped past a bound)"
    ),
    "build_support.imports_on_use._loading": (
        "the modules imported on first use are imported once, whatever thread uses them first"
    ),
}
"""The rest of the process's state, module-level where it is kept, each with why and when it is
reset: below ``execution/`` (which this module imports), in the worker process, or in a module
``mkdocs serve`` keeps across the hooks it loads afresh for each rebuild. A hook's own state
lives one build (MkDocs loads the hooks afresh), so none is listed here.
``tests/test_build_seams.py`` checks that ``build_support/`` keeps no other."""


def start(project_root: Path, config: Any = None) -> BuildState:
    """A new build, the process's current one from now on."""
    PROCESS.build = new_build(project_root, config)
    return PROCESS.build


def current() -> BuildState:
    if PROCESS.build is None:
        raise RuntimeError("no build in progress: hooks/execution.py starts one in on_config")
    return PROCESS.build
