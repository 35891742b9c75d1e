"""Blocks run ahead of their pages, side by side: a course's blocks on every core.

markdown-exec hands the build one block at a time, in page order, and waits for its output, so
blocks alone would run one after another. So before any page renders (``on_files``), ``plan``
reads every page's executed fences from its Markdown (snippets expanded, options read by
superfences' and markdown-exec's own parsers, as the page will pass them), looks each output up
in the cache, and queues what must run: a block alone, or a session's blocks in order, each a
*job*. ``RunAhead`` runs the jobs on one thread per core, each in a worker of its own taken
from ``worker_start.Workers``, exactly as the page would run it (the same request: code, id,
time limit; the same limits; a new worker per session), and keeps each block's reply or
failure.

When the page asks for the block (``claim``), its output comes from the job's run if the job
ran exactly what the page asks for (the block's own digest: its code and every option);
otherwise, or if the job has not started yet, it runs as before, in the page's turn. A failure
is the block's, raised in its page's turn, naming page and block as ever. Nothing here decides
what is shown: the page renders the reply as it would render its own run's.

Timings never run side by side: a timed session is never run ahead, and while a timed block
runs (``quiet``) no job starts and none is running. ``stop`` (the build's end, or its failure)
drops what is queued; the workers still running are killed with every other at the build's end.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..caching.ingredients import expand_snippets
from . import limits, progress
from .fence_options import block_id, is_timed, own_digest, own_ingredients
from .sessions import fences, session_lookup
from .workers import BlockError, Worker

if TYPE_CHECKING:
    from ..caching.cache import Lookup

MAX_SIDE_BY_SIDE = 8  # more workers at once than this only crowd the memory
SIDE_BY_SIDE_ENV = "COURSE_SIDE_BY_SIDE"
_FENCE = re.compile(  # an executed-looking fence: its header line, then its code
    r"^(?P<indent>[ \t]*)(?P<ticks>`{3,}|~{3,})[ \t]*(?P<language>[\w-]+)(?P<header>[^\n]*)\n"
    r"(?P<code>.*?)^(?P=indent)(?P=ticks)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


def side_by_side() -> int:
    """How many jobs run at once: one per core this process may use, or ``SIDE_BY_SIDE_ENV``
    (1: every block in its page's turn, as before blocks ran ahead)."""
    wanted = os.environ.get(SIDE_BY_SIDE_ENV, "")
    if wanted:
        if not wanted.isdigit() or int(wanted) < 1:
            raise ValueError(f"{SIDE_BY_SIDE_ENV}={wanted!r}: expected a whole number from 1")
        return int(wanted)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, MAX_SIDE_BY_SIDE))


def fence_options(markdown: str, languages: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """markdown-exec's options (with ``code``) for each fence of ``languages`` it executes,
    read by superfences' option pattern and markdown-exec's validator, as the page reads them."""
    from markdown_exec import validator
    from pymdownx.superfences import RE_OPTIONS

    for match in _FENCE.finditer(markdown):
        if match["language"] not in languages:
            continue
        values = {}
        for option in RE_OPTIONS.finditer(match["header"]):
            values[option["key"]] = option["key"] if option["value"] is None else option["value"]
        options: dict[str, Any] = {}
        if not validator(match["language"], values, options, {}, None):
            continue  # not executed
        indent = len(match["indent"])
        code = "\n".join(line[indent:] for line in match["code"].splitlines())
        yield options | {"code": code}  # a last empty line kept, as superfences keeps it


@dataclass(frozen=True)
class Request:
    """One block as its page will hand it to a worker."""

    code: str
    block_id: str
    own: str  # fence_options.own_digest: its code and every option
    seconds: float  # its time limit


@dataclass
class Result:
    reply: dict[str, Any] | None
    error: BlockError | None
    seconds: float


@dataclass
class Job:
    """A block alone, or a session's blocks in order: what one worker runs."""

    page: str
    requests: list[Request]
    results: list[Result] = field(default_factory=list)
    state: str = "queued"  # queued, running, done, claimed (taken back by its page)
    broken: str = ""  # the build's own fault while running it: the page runs it itself
    done: threading.Event = field(default_factory=threading.Event)


def request_of(options: dict[str, Any]) -> Request | None:
    """The block's request, or None when its ``timeout`` is wrong (its page says so)."""
    seconds = limits.timeout_s((options.get("extra") or {}).get(limits.TIMEOUT_OPTION))
    if isinstance(seconds, str):
        return None
    return Request(options["code"], block_id(options), own_digest(options), seconds)


class Replies:
    """A job's replies, handed out as its worker's, block by block (``python_exec.run``)."""

    def __init__(self, job: Job) -> None:
        self.job, self.position = job, 0

    def matches(self, options: dict[str, Any]) -> bool:
        """The next block the page asks for is the one the job ran next."""
        requests = self.job.requests
        return self.position < len(requests) and requests[self.position].own == own_digest(options)

    def __call__(self, code: str = "") -> Replies:  # as LazyWorker: the block's "worker"
        return self

    def run(self, code: str, block: str, timed: bool, seconds: float) -> dict[str, Any]:
        request, result = self.job.requests[self.position], self.job.results[self.position]
        if (code, block, seconds) != (request.code, request.block_id, request.seconds) or timed:
            raise RuntimeError(f"block {block!r} asked for other than it ran ahead")
        self.position += 1
        if result.error is not None:
            raise result.error
        return dict(result.reply or {}, ran_ahead_s=result.seconds)

    def close(self) -> None:
        """Its worker ended with the job."""


class RunAhead:
    """The jobs of one build, and the threads that run them."""

    def __init__(
        self, take_worker: Callable[[bool, str], Worker], threads: int | None = None
    ) -> None:
        self.take_worker = take_worker
        self.threads = side_by_side() if threads is None else threads
        self.queue: deque[Job] = deque()
        self.alone: dict[tuple[str, str], deque[Job]] = {}  # (page, own digest)
        self.sessions: dict[tuple[str, str], Job] = {}  # (page, session name)
        self.lookups: dict[tuple[str, str], Lookup] = {}  # (identity, key): planned look-ups
        self.running = 0
        self.paused = 0
        self.stopped = False
        self.ran_ahead = 0  # blocks whose outputs came from a job
        self.changed = threading.Condition()
        self.workers: list[threading.Thread] = []

    def add(self, job: Job, session: str | None) -> None:
        with self.changed:  # the threads may be running the jobs of pages planned before
            if session is None:
                self.alone.setdefault((job.page, job.requests[0].own), deque()).append(job)
            else:
                self.sessions[(job.page, session)] = job
            self.queue.append(job)
            self.changed.notify_all()

    def start(self) -> None:
        """Start the threads, once, if anything is queued (the plan calls it after each page)."""
        if self.threads < 2:  # one at a time: the page's turn is as quick
            self.queue.clear()
            self.alone.clear()
            self.sessions.clear()
            return
        for number in range(self.threads - len(self.workers) if self.queue else 0):
            thread = threading.Thread(target=self._serve, name=f"run-ahead-{number}", daemon=True)
            thread.start()
            self.workers.append(thread)

    def claim_alone(self, page: str, options: dict[str, Any]) -> Replies | None:
        jobs = self.alone.get((page, own_digest(options)))
        return self._claim(jobs.popleft()) if jobs else None

    def claim_session(self, page: str, name: str) -> Replies | None:
        job = self.sessions.pop((page, name), None)
        return self._claim(job) if job is not None else None

    def _claim(self, job: Job) -> Replies | None:
        """The job's replies once it is done; None if it had not started (the page runs it)."""
        with self.changed:
            if job.state == "queued":
                job.state = "claimed"
                self.queue.remove(job)
                return None
        # Where the build is, if it is ended while it waits: the block its page waits for.
        progress.note(f"page {job.page}, block {job.requests[0].block_id!r}")
        job.done.wait()
        if job.broken or len(job.results) < len(job.requests):
            return None
        self.ran_ahead += len(job.requests)
        return Replies(job)

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Nothing runs ahead while a timed block runs: the machine is the timing's."""
        with self.changed:
            self.paused += 1
            self.changed.wait_for(lambda: self.running == 0)
        try:
            yield
        finally:
            with self.changed:
                self.paused -= 1
                self.changed.notify_all()

    def unclaimed(self) -> list[Job]:
        """Jobs that ran, but whose page asked for other than they ran: time spent for nothing
        (the plan read a fence otherwise than the page did), said in the build's log."""
        jobs = [*self.sessions.values(), *(job for each in self.alone.values() for job in each)]
        return [job for job in jobs if job.state == "done"]

    def stop(self) -> None:
        """Drop what is queued (the build ends); jobs running end with their workers."""
        with self.changed:
            self.stopped = True
            for job in self.queue:
                job.state = "claimed"
                job.done.set()
            self.queue.clear()
            self.changed.notify_all()

    def _serve(self) -> None:
        while True:
            with self.changed:
                self.changed.wait_for(lambda: self.stopped or (self.queue and not self.paused))
                if self.stopped:
                    return
                job = self.queue.popleft()
                job.state, self.running = "running", self.running + 1
            try:
                self._run(job)
            except Exception as error:  # the build's own fault: the page runs the job again
                job.broken = f"{type(error).__name__}: {error}"
            finally:
                with self.changed:
                    job.state, self.running = "done", self.running - 1
                    self.changed.notify_all()
                job.done.set()

    def _run(self, job: Job) -> None:
        worker = None
        try:
            for request in job.requests:
                if self.stopped:
                    return
                started = time.perf_counter()
                try:
                    worker = worker or self.take_worker(False, request.code)
                    reply = worker.run(request.code, request.block_id, False, request.seconds)
                    result = Result(reply, None, time.perf_counter() - started)
                except BlockError as error:
                    result = Result(None, error, time.perf_counter() - started)
                job.results.append(result)
        finally:
            if worker is not None:
                worker.close()


def plan(build: Any, pages: list[tuple[str, Path]], languages: tuple[str, ...]) -> None:
    """Queue, and start, every block and session of ``pages`` the cache cannot serve, page by
    page (a page's jobs run while the next pages are read).
    ``build``: the ``state.BuildState`` (which holds the ``RunAhead``: not imported here)."""
    for page, path in pages:
        markdown = path.read_text(encoding="utf-8-sig")
        if "exec=" not in markdown:
            continue
        if build.config is not None and "--8<--" in markdown:
            markdown = expand_snippets(markdown, build.config)
        in_sessions: dict[str, list[dict[str, Any]]] = {}
        for options in fence_options(markdown, languages):
            if options.get("session"):
                in_sessions.setdefault(options["session"], []).append(options)
            elif not is_timed(options):
                _plan_alone(build, page, options)
        fenced: dict[str, list[tuple[str, str]]] = {}
        for name, header, code in fences(markdown):  # as the page reads its sessions
            fenced.setdefault(name, []).append((header, code))
        for name, blocks in in_sessions.items():
            if not any(is_timed(options) for options in blocks):
                _plan_session(build, page, name, blocks, fenced.get(name, []))
        build.ahead.start()  # its jobs run while the next pages are read


def _plan_alone(build: Any, page: str, options: dict[str, Any]) -> None:
    request = request_of(options)
    if request is None:
        return
    ingredients = build.environment.ingredients(
        options["code"], rendered=True, **own_ingredients(options)
    )
    found = build.look_up(ingredients, f"{page} {request.block_id}", build.stale_reads, plan=True)
    if found.entry is None:
        build.ahead.add(Job(page, [request]), None)


def _plan_session(
    build: Any,
    page: str,
    name: str,
    blocks: list[dict[str, Any]],
    fenced: list[tuple[str, str]],
) -> None:
    requests = [request_of(options) for options in blocks]
    codes = [code for _, code in fenced]
    if None in requests or codes != [options["code"].rstrip("\n") for options in blocks]:
        return  # read otherwise than the page reads it: the page runs it in its turn
    found = session_lookup(build, page, name, [header for header, _ in fenced], codes, plan=True)
    if found.entry is None:
        build.ahead.add(Job(page, list(requests)), name)  # type: ignore[arg-type]
