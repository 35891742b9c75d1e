"""One build's state, in one object (``BuildState``), at the bottom of ``execution/``: it imports
none of the modules that drive it (``runner``, ``blocks``, ``session_runs``, ``notebook_runs``,
``notebook_page``), which take it as their first argument.

Its parts own their behaviour: each ``sessions.Session`` its globals (the namespace its blocks
run in), ``notebooks.Notebooks`` its runs, threads and scratch folder. A new ``BuildState`` is
made for every build, so a ``mkdocs serve`` rebuild starts with empty sessions and no notebook
left over from the previous build.

What belongs to the process, not to one build, is ``PROCESS``, the only module-level state of
``execution/`` besides ``reads``' audit hook: MkDocs says the command once per process
(``on_startup``: one ``mkdocs serve`` runs many builds), and MkDocs calls hooks, and
markdown-exec its formatters, as plain functions of the process; they reach the build running
now through it (``current()``). The serve flag is held there, once, and the worker processes
(``worker_start.Workers``), whose template serves the next rebuild too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .. import settings
from ..caching.cache import ExecutionCache, Lookup, key_of
from ..caching.environment import Environment
from ..publishing.record import Drift, Output
from ..publishing.runs import Run, outputs
from ..section import PACKAGE
from . import compile_cache, reads
from .ahead import RunAhead
from .limits import DEFAULT_TIMEOUT_S, MAX_OUTPUT_BYTES, MEMORY_SETTING
from .notebooks import Notebooks
from .sessions import Session
from .worker_start import Workers
from .workers import BlockError, Limits, Worker


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

    def take_worker(self, timed: bool = False, first_code: str = "") -> Worker:
        """A worker process for a new session whose first block is ``first_code``, under this
        build's limits (``workers.py``); a timed session's compiles JAX's compilation cache
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
        ``ahead.plan``) serves the page's own, so each output is looked up once a build."""
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
    )


@dataclass
class Process:
    """What this process runs: MkDocs' command (said once, in ``on_startup``) and the build
    running now (a ``mkdocs serve`` rebuild replaces it)."""

    serving: bool = False
    build: BuildState | None = None
    workers: Workers = field(default_factory=Workers)  # kept across serve rebuilds
    rebuild: Callable[[], None] = lambda: None  # mkdocs serve: ask the server for a rebuild

    def started(self, command: str) -> None:
        self.serving = command == "serve"


PROCESS = Process()


def start(project_root: Path, config: Any = None) -> BuildState:
    """A new build, the process's current one from now on."""
    PROCESS.build = new_build(project_root, config)
    return PROCESS.build


def current() -> BuildState:
    if PROCESS.build is None:
        raise RuntimeError("no build in progress: hooks/execution.py starts one in on_config")
    return PROCESS.build
