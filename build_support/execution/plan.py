"""A build's run ahead: before any page renders, the sessions the cache cannot serve
(``sessions.plan_ahead``) run ahead of their pages on a thread pool, on every core, since
markdown-exec hands the build one block at a time, in page order, and waits for its output.

A *job* is a session's blocks in order, run in a worker of its own exactly as the page would run
them. When the page asks for its session (``claim``), a job not yet started is cancelled and the
page runs it in its turn; a job started is waited for, and its replies are the page's while it
ran what the page asks for (each block's own digest: its code and every option); a failure is
the block's, raised in its page's turn. A timed session never runs ahead, and while a timed block
runs (``paused``) no job starts and none is running. ``stop`` cancels what has not started.

With a cluster (``extra.build.executor``: ``cluster/``) every job is submitted to it instead,
never cancelled: its page waits for its replies, and a job the cluster could not run fails its
blocks in their page's turn (``Refused``), never run here instead. A page whose front matter says
``execution: {gpu: true}`` (``needs_gpu``) has its jobs sent to GPU workers; its sessions never
run on this machine unless it lists an NVIDIA GPU and no cluster is named.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .. import progress
from ..caching.cache import Lookup
from . import fences
from .executor import BlockError

if TYPE_CHECKING:
    from .executor import SessionWorker

GPU_OPTION = "execution"  # front matter: execution: {gpu: true}
GPU_FORM = "execution: {gpu: true} (or false)"
MAX_SIDE_BY_SIDE = 8  # more workers at once than this only crowd the memory
SIDE_BY_SIDE_ENV = "COURSE_SIDE_BY_SIDE"


def side_by_side() -> int:
    """How many jobs run at once: one per core this process may use, or ``SIDE_BY_SIDE_ENV``
    (1: every block runs in its page's turn)."""
    wanted = os.environ.get(SIDE_BY_SIDE_ENV, "")
    if wanted:
        if not wanted.isdigit() or int(wanted) < 1:
            raise ValueError(f"{SIDE_BY_SIDE_ENV}={wanted!r}: expected a whole number from 1")
        return int(wanted)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, MAX_SIDE_BY_SIDE))


@dataclass(frozen=True)
class Request:
    """One block as its page will hand it to a worker."""

    code: str
    block_id: str
    own: str  # fences.own_digest: its code and every option
    seconds: float  # its time limit
    how: dict[str, Any]  # fences.to_run's: Python or a shell, its folder and width


@dataclass
class Job:
    """A session's blocks in order: what one worker runs, and each one's reply or failure."""

    page: str
    requests: list[Request]
    results: list[dict[str, Any] | BlockError] = field(default_factory=list)
    future: Future[None] = field(default_factory=Future)  # the pool's, once submitted
    gpu: bool = False  # its page needs a GPU (``needs_gpu``)
    remote: bool = False  # submitted to the cluster
    ran_where: str = ""  # the cluster's worker that ran it, said in the log


class Cluster(Protocol):
    """Where jobs run when not on this machine (``cluster/client.py``: ``Cluster``)."""

    def submit(self, job: Job) -> Future[None]: ...

    def takes(self, job: Job, session: str) -> bool: ...  # False: it runs here, as without one

    def refusal(self, page: str, session: str) -> str | None: ...  # a session not sent: why not

    def close(self) -> None: ...


def needs_gpu(page: str, markdown: str) -> bool:
    """Whether the page's front matter asks for a GPU (``execution: {gpu: true}``); a value of
    another form fails the build, naming the page, the field and the form."""
    from mkdocs.exceptions import PluginError
    from mkdocs.utils.meta import get_data

    if not markdown.startswith("---"):
        return False
    found = get_data(markdown)[1].get(GPU_OPTION)
    if found is None:
        return False
    wrong = not isinstance(found, dict) or set(found) - {"gpu"}
    if wrong or not isinstance(found.get("gpu"), bool):
        raise PluginError(f"{page}: front matter {GPU_OPTION}: expected {GPU_FORM}, got {found!r}")
    return found["gpu"]


def local_gpus() -> bool:
    """This machine lists an NVIDIA GPU (``nvidia-smi -L``)."""
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):  # none installed, or stuck
        return False
    return any(line.startswith("GPU ") for line in listed.stdout.splitlines())


def request_of(options: dict[str, Any]) -> Request | None:
    """The block's request; None where its page runs it in its turn: a timing, or a wrong
    ``timeout`` or other option (its page says so)."""
    seconds = fences.timeout(options)
    if fences.is_timed(options) or isinstance(seconds, str) or fences.unknown_options(options):
        return None
    code, how = fences.to_run(options)
    return Request(code, fences.block_id(options), fences.own_digest(options), seconds, how)


class RanAheadWorker:
    """A job's replies, handed to its page as its session's worker's, block by block."""

    def __init__(self, job: Job) -> None:
        self.job, self.position = job, 0

    def ran_next(self, options: dict[str, Any]) -> bool:
        """The next block the page asks for is the one the job ran next."""
        requests, own = self.job.requests, fences.own_digest(options)
        return self.position < len(requests) and requests[self.position].own == own

    def run(
        self, code: str, block_id: str, timed: bool, seconds: float, how: dict | None = None
    ) -> dict[str, Any]:
        request, result = self.job.requests[self.position], self.job.results[self.position]
        ran = (request.code, request.block_id, request.seconds, request.how)
        if (code, block_id, seconds, how) != ran:  # never timed: the plan runs no timing
            raise RuntimeError(f"block {block_id!r} asked for other than it ran ahead")
        self.position += 1
        if isinstance(result, BlockError):
            raise result
        return result

    def close(self) -> None:
        """Its worker ended with the job."""


class Refused:
    """A session that may not run here: each of its blocks fails, saying why (the cluster
    could not run its job, or its page needs a GPU this build cannot give it)."""

    def __init__(self, why: str) -> None:
        self.why = why

    def run(
        self, code: str, block_id: str, timed: bool, seconds: float, how: dict | None = None
    ) -> dict[str, Any]:
        raise BlockError(self.why)

    def close(self) -> None:
        """It started nothing."""


class RunAhead:
    """The jobs of one build, run on a thread pool."""

    def __init__(
        self,
        take_worker: Callable[[bool, str], SessionWorker],
        threads: int | None = None,
        cluster: Cluster | None = None,
    ) -> None:
        self.take_worker = take_worker
        self.cluster = cluster  # None: every job runs on this machine
        self.gpu_pages: set[str] = set()  # pages whose front matter asks for a GPU
        self._local_gpu: bool | None = None  # ``local_gpu``
        self.threads = side_by_side() if threads is None else threads
        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="run-ahead")
        self.jobs: dict[tuple[str, str], deque[Job]] = {}  # (page, session name)
        self.lookups: dict[tuple[str, str], Lookup] = {}  # (identity, key): planned look-ups
        self.running = 0  # jobs past the gate that a timing closes
        self.timings = 0  # timed blocks running: no job starts
        self.stopped = False
        self.ran_ahead = 0  # blocks whose outputs came from a job
        self.changed = threading.Condition()

    def add(self, job: Job, session: str) -> None:
        """Run ``job`` ahead of its page (with one thread, the page's turn is as quick: none);
        on the cluster, where one is named."""
        if self.stopped:
            return
        cluster = self.cluster if self.cluster and self.cluster.takes(job, session) else None
        if cluster is None and (self.threads < 2 or (job.gpu and not self.local_gpu())):
            return
        job.remote = cluster is not None
        self.jobs.setdefault((job.page, session), deque()).append(job)
        job.future = cluster.submit(job) if cluster else self.run_here(job)

    def run_here(self, job: Job) -> Future[None]:
        """Run ``job`` in this machine's pool (``cluster/shards.py`` runs its slice so)."""
        return self.pool.submit(self._run, job)

    def claim(self, page: str, session: str) -> RanAheadWorker | Refused | None:
        """The replies of the session's job once it is done, if it ran one (a block alone's twin
        on the page runs it again: one job each); None where it had not started; ``Refused``
        where it may not run here (a GPU page's) or the cluster could not run it."""
        jobs = self.jobs.get((page, session))
        if not jobs:
            why = self.cluster.refusal(page, session) if self.cluster is not None else None
            return Refused(why) if why else self._not_ahead(page)
        job = jobs.popleft()
        if not job.remote and job.future.cancel():
            return None  # the page runs it
        # Where the build is, if it is ended while it waits: the block its page waits for.
        progress.at_block(job.page, job.requests[0].block_id)
        if job.remote and job.future.cancelled():
            return Refused("not run: the build was ending before its job was sent")
        failed = job.future.exception()
        if job.remote and failed is not None:
            return Refused(f"not run: {failed}")
        if failed is not None or len(job.results) < len(job.requests):
            return None  # the build's own fault, or stopped: the page runs it
        self.ran_ahead += len(job.requests)
        return RanAheadWorker(job)

    def local_gpu(self) -> bool:
        """This machine lists a GPU (asked once a build, and only for a GPU page)."""
        if self._local_gpu is None:
            self._local_gpu = local_gpus()
        return self._local_gpu

    def _not_ahead(self, page: str) -> Refused | None:
        """A session that did not run ahead runs in its page's turn, here (None); a GPU page's
        only where no cluster is named and this machine lists a GPU."""
        if page not in self.gpu_pages:
            return None
        if self.cluster is not None:
            return Refused(
                "its page's front matter asks for a GPU (execution: {gpu: true}) and this "
                "session was not run ahead on the cluster (a timing, or a wrong option): it "
                "runs nowhere else"
            )
        if self.local_gpu():
            return None
        return Refused(
            "its page's front matter asks for a GPU (execution: {gpu: true}): no executor is "
            "named (make build EXECUTOR=tcp://host:8786, a Dask cluster with a worker started "
            "with --resources GPU=1) and this machine lists no NVIDIA GPU (nvidia-smi -L)"
        )

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Nothing runs ahead while a timed block runs: the machine is the timing's."""
        with self.changed:
            self.timings += 1
            self.changed.wait_for(lambda: self.running == 0)
        try:
            yield
        finally:
            with self.changed:
                self.timings -= 1
                self.changed.notify_all()

    def unclaimed(self) -> list[Job]:
        """Jobs that ran, but whose page asked for other than they ran: time spent for nothing,
        said in the build's log."""
        jobs = [job for each in self.jobs.values() for job in each]
        return [job for job in jobs if job.future.done() and not job.future.cancelled()]

    def stop(self) -> None:
        """Cancel the jobs not started (the build ends); jobs running end with their workers."""
        self.stopped = True
        with self.changed:
            self.changed.notify_all()
        self.pool.shutdown(wait=False, cancel_futures=True)
        if self.cluster is not None:
            self.cluster.close()

    def _run(self, job: Job) -> None:
        with self.changed:
            self.changed.wait_for(lambda: self.stopped or not self.timings)
            self.running += 1
        worker = None
        try:
            for request in job.requests:
                if self.stopped:
                    return
                started = time.perf_counter()
                try:
                    worker = worker or self.take_worker(False, request.code)
                    reply = worker.run(
                        request.code, request.block_id, False, request.seconds, request.how
                    )
                    job.results.append(reply | {"ran_ahead_s": time.perf_counter() - started})
                except BlockError as error:
                    job.results.append(error)
        finally:
            if worker is not None:
                worker.close()
            with self.changed:
                self.running -= 1
                self.changed.notify_all()
