"""The run ahead on a Dask cluster (``extra.build.executor``, ``make build
EXECUTOR=tcp://host:8786``): each job the plan would run ahead on this machine
(``execution/plan.py``: a session's blocks in order) is submitted to the cluster instead, and
its replies come back in the form a local run ahead gives them, so the page takes them the same
way (``RanAheadWorker``).
Unset, nothing here runs and Dask is never imported.

What a job sends: its blocks (code, name, time limit, how to run), the build's limits, the key's
variables (``JAX_*``, ``XLA_*``, the numeric ones: the worker runs with the build's, as its key
says), the build's environment (``on_worker.environment``), and the bundle (``bundled``: the
build's code and the project's ``docs/``, at their digest; scattered once a build). What comes
back: each block's reply or failure, the Dask worker's address, host and pid, the block
worker's pid and its job server's (``on_worker.JobServer``), and the folder its code ran from
(said in the build's log). The files a block
read there are named as the build's own, whose digests the entry keeps: the bundle mirrors
the project's layout.

Where a job goes: a page whose front matter says ``execution: {gpu: true}`` (``plan.needs_gpu``)
has its jobs submitted with ``resources={"GPU": 1}``, to workers started with ``--resources
GPU=1``; every other job to a worker without that resource. Only workers whose environment
matches the build's are used (checked once a worker, here; and again by the task itself); a
worker that differs is named in the log with what differs, and never runs a job.

Faults, each the job's blocks' failure in their page's turn (never a run on this machine, never
an entry in the cache): the scheduler unreachable or silent, or no worker that may run the job,
within ``executor_wait_s``; the scheduler lost; a worker refused; the job's process failing. A
worker that leaves the cluster while it runs a job (killed, say) costs a second run, on
whichever worker may run it then; a second loss fails the blocks.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import sys
import threading
import time
import uuid
import warnings
import zipfile
from collections.abc import Callable
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..caching.ingredients import IGNORED_VARIABLES, NUMERIC_VARIABLES
from ..execution.executor import BlockError
from ..execution.worker import START_TIMEOUT_S
from . import on_worker

if TYPE_CHECKING:
    from ..execution.executor import Limits
    from ..execution.plan import Job
    from .shards import Selection

log = logging.getLogger("mkdocs.hooks.execution")
GPU = {"GPU": 1}
GPU_SAID = "its page's front matter asks for a GPU (execution: {gpu: true})"
FORWARDED = ("JAX_", "XLA_", *NUMERIC_VARIABLES)  # the key's variables the build sets for a job
GPU_KEPT = ("JAX_PLATFORMS",)  # a GPU job runs on the worker's backend, never the build's CPU
CONNECT_SLACK_S = 2.0  # beyond executor_wait_s, before a scheduler that never answers is given up
JOB_SLACK_S = 120.0  # beyond its blocks' limits and a worker's start, a job's own bound
_POLL_S = 0.25
_WATCH_S = 1.0  # how often a running job's workers are looked for in the cluster
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # the bundle's bytes depend on the files alone


def _within(make: Callable[[], Any], seconds: float) -> Any:
    """``make()``'s value, or ``TimeoutError`` once ``seconds`` have passed: a scheduler that
    takes the connection and never answers holds distributed's ``Client`` past its own timeout
    (its handshake is not bounded), so it waits on a thread of its own (a daemon, left to its
    hang)."""
    done: Future[Any] = Future()

    def run() -> None:
        try:
            done.set_result(make())
        except BaseException as error:
            done.set_exception(error)

    threading.Thread(target=run, daemon=True, name="dask-connect").start()
    try:
        return done.result(timeout=seconds)
    except TimeoutError:
        raise TimeoutError(f"no answer in {seconds:g} s") from None


class Unavailable(Exception):
    """The cluster could not run a job: why, in one line."""


def bundled(project_root: Path) -> dict[str, Path]:
    """What a job needs, by its name in the bundle, which is its working folder: the build's
    own code, the course package Python would import here (a copy's, in the tests' builds), the
    pyproject.toml that names it, and the project's ``docs/`` (a block may read a file there,
    as it would from the project's root here)."""
    from ..caching.environment import examples_package_dir
    from ..section import PACKAGE, ROOT

    found = {"build_support": ROOT / "build_support", "pyproject.toml": ROOT / "pyproject.toml"}
    package = examples_package_dir()
    if package is not None:
        found[PACKAGE] = package
    if (project_root / "docs").is_dir():
        found["docs"] = project_root / "docs"
    return found


def bundle(parts: dict[str, Path]) -> tuple[bytes, str]:
    """A zip of ``parts`` (``bundled``), and its SHA-256."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, top in sorted(parts.items()):
            paths = sorted(top.rglob("*")) if top.is_dir() else [top]
            for path in paths:
                if path.is_file() and "__pycache__" not in path.parts:
                    inside = Path(name, path.relative_to(top)) if top.is_dir() else Path(name)
                    info = zipfile.ZipInfo(inside.as_posix(), _ZIP_TIME)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    archive.writestr(info, path.read_bytes())
    data = buffer.getvalue()
    return data, hashlib.sha256(data).hexdigest()


def here(path: str, bundle_dir: str, parts: dict[str, Path]) -> str:
    """A path a block read in the bundle's folder, as the build's own file it came from."""
    if not path.startswith(bundle_dir + "/"):
        return path
    name, _, rest = path.removeprefix(bundle_dir + "/").partition("/")
    top = parts.get(name)
    return str(top / rest) if top is not None and rest else str(top or path)


def forwarded(gpu: bool, environ: dict[str, str] | None = None) -> dict[str, str]:
    """The build's values of the key's variables, which a job runs with (a GPU job keeps the
    worker's ``JAX_PLATFORMS``)."""
    environ = dict(os.environ) if environ is None else environ
    return {
        name: value
        for name, value in environ.items()
        if name.startswith(FORWARDED)
        and name not in IGNORED_VARIABLES
        and not (gpu and name in GPU_KEPT)
    }


def cluster_of(project_root: Path, limits: Callable[[], Limits]) -> Cluster | Selection | None:
    """The build's cluster where ``extra.build.executor`` names one; where it is a render-only
    or a shard's build, a ``shards.Selection`` before it (or before this machine); None (the
    default): the run ahead stays on this machine."""
    from .. import settings

    found = settings.current(project_root)
    cluster = None
    if found.executor:
        cluster = Cluster(found.executor, found.executor_wait_s, project_root, limits)
    if found.render_only or found.shard:
        from .shards import Selection

        return Selection.of(found, cluster, project_root)
    return cluster


class Cluster:
    """One build's connection to a Dask scheduler, made at its first job; each job is waited
    for on a thread of its own (the cluster runs them, this process only waits)."""

    def __init__(
        self, address: str, wait_s: float, project_root: Path, limits: Callable[[], Limits]
    ) -> None:
        self.address, self.wait_s, self.project_root = address, wait_s, project_root
        self.limits = limits
        self.pool = ThreadPoolExecutor(64, thread_name_prefix="dask-job")
        self.lock = threading.Lock()
        self.client: Any = None
        self.failed = ""  # why the cluster could not be reached: every job's failure
        self.data = b""  # the bundle (``bundle``), scattered once (a Dask future), its digest
        self.bundle: Any = None
        self.digest = ""
        self.parts: dict[str, Path] = {}  # what the bundle holds, from where (``bundled``)
        self.environment: dict[str, Any] = {}
        self.checked: dict[str, list[str]] = {}  # worker address -> how it differs (or [])
        self.known: tuple[float, dict[str, dict[str, Any]]] = (-_POLL_S, {})  # ``_workers``
        self.known_lock = threading.Lock()
        self.closed = False

    def submit(self, job: Job) -> Future[None]:
        """Run ``job`` on the cluster; its future is done once its results are in."""
        return self.pool.submit(self._run, job)

    def takes(self, job: Job, session: str) -> bool:
        """Every job run ahead goes to the cluster."""
        return True

    def refusal(self, page: str, session: str) -> str | None:
        """A session not run ahead (a timing) runs in its page's turn, as without a cluster."""
        return None

    def close(self) -> None:
        """The build's end: nothing more is submitted, and the connection closes."""
        with self.lock:
            self.closed = True
            client, self.client = self.client, None
        self.pool.shutdown(wait=False, cancel_futures=True)
        if client is not None:
            try:
                client.close(timeout=5)
            except Exception as error:  # a scheduler gone by now: nothing to close
                log.debug("Closing the Dask client: %s", error)

    # ------------------------------------------------------------------ one job

    def _run(self, job: Job) -> None:
        from .. import settings

        client = self._connected()
        limits = self.limits()
        within = sum(r.seconds for r in job.requests) + START_TIMEOUT_S + JOB_SLACK_S
        payload = {
            "page": job.page,
            "gpu": job.gpu,
            "requests": [
                {"code": r.code, "block_id": r.block_id, "seconds": r.seconds, "how": r.how}
                for r in job.requests
            ],
            "limits": [limits.max_output_bytes, limits.memory_bytes],
            "variables": forwarded(job.gpu),
            "variable_prefixes": list(FORWARDED),
            "kept": list(GPU_KEPT) if job.gpu else [],
            "within_s": within,
            "fresh": settings.current(self.project_root).fresh,  # no compiled shape reused
        }
        try:
            result = self._ran(client, job, payload, within)
            if result is None:  # its worker left while it ran: once more, on whichever may
                result = self._ran(client, job, payload, within, again=True)  # run it then
        except Unavailable:
            raise
        except Exception as error:
            if client.status == "running":
                raise
            raise Unavailable(self._lost(error)) from None
        if result.get("refused"):
            with self.lock:
                self.checked[result["worker"]] = result["refused"]
            raise Unavailable(self._refusal(result["worker"], result["refused"]))
        if result.get("console"):
            sys.stderr.write(result["console"])
        bundle_dir = result["bundle"].rstrip("/")
        for item in result["results"]:
            if "error" in item:
                summary, where, trace = item["error"]
                job.results.append(BlockError(summary, where, tuple(trace)))
                continue
            reply = item["reply"]
            for files in ("read", "written"):  # the bundle's files are the build's own
                if files in reply:
                    reply[files] = [here(path, bundle_dir, self.parts) for path in reply[files]]
            job.results.append(reply)
        job.ran_where = (
            f"Dask worker {result['worker']} (host {result['host']}, pid {result['pid']}; "
            f"block worker pid {result['worker_pid']}, job server pid {result['server_pid']}; "
            f"code from {result['code_from']})"
        )
        blocks = ", ".join(request.block_id for request in job.requests)
        log.info("Ran on the Dask cluster: %s %s, on %s", job.page, blocks, job.ran_where)

    def _ran(
        self, client: Any, job: Job, payload: dict, within: float, again: bool = False
    ) -> dict[str, Any] | None:
        """The job's result from one worker that may run it; None where every such worker left
        the cluster while it ran (``again``: ``Unavailable``, naming them)."""
        workers = self._workers_for(client, job)
        with self.lock:  # once a worker is there to hold it (later ones fetch it from peers),
            if self.bundle is None or self.bundle.status != "finished":  # again if all left
                self.bundle = client.scatter(self.data, broadcast=True, hash=False)
        task = client.submit(
            on_worker.run_job,
            self.bundle,
            self.digest,
            payload,
            self.environment,
            workers=workers,
            allow_other_workers=False,
            resources=GPU if job.gpu else None,
            pure=False,
            key=f"course-job-{uuid.uuid4().hex}",
        )
        deadline = time.monotonic() + within + self.wait_s
        # Waited for by its callback, not by ``result(timeout=...)``: distributed's sync() wait,
        # cancelled rather than timed out (under load, 1 job in 300 here), raised
        # UnboundLocalError ("cannot access local variable 'result'") for the job's failure.
        ended = threading.Event()
        task.add_done_callback(lambda _: ended.set())
        while True:
            lost = False
            if ended.wait(_WATCH_S):
                try:
                    return task.result()
                except CancelledError:  # by the scheduler: the bundle it needs went with them
                    lost = True
            now = time.monotonic()
            if client.status != "running":  # the scheduler itself is gone: no worker is asked
                task.cancel()
                raise Unavailable(self._lost())
            if lost or not set(workers) & set(self._workers(client)):  # the scheduler saw them go
                task.cancel()
                left = f"the Dask worker {' and '.join(workers)} that ran it left the cluster"
                if again:
                    raise Unavailable(f"{left}, again: it ran twice, and ended neither time")
                log.info("%s %s: %s; it runs again", job.page, job.requests[0].block_id, left)
                return None
            if now >= deadline:
                task.cancel()
                raise Unavailable(
                    f"its job did not come back from the Dask cluster at {self.address} "
                    f"within {within + self.wait_s:g} s"
                )

    # ------------------------------------------------------------------ the cluster

    def _connected(self) -> Any:
        """The client, connected at the first job (with the bundle scattered); ``Unavailable``
        naming the address where the scheduler cannot be reached within ``wait_s``."""
        with self.lock:
            if self.closed:
                raise Unavailable("the build is ending: no job is submitted")
            if self.failed:
                raise Unavailable(self.failed)
            if self.client is not None:
                return self.client
            try:
                import cloudpickle
                from distributed import Client

                # By value: a Dask worker needs the locked environment, not the checkout.
                cloudpickle.register_pickle_by_value(on_worker)
                from distributed.versions import VersionMismatchWarning

                def connect() -> Any:
                    with warnings.catch_warnings():  # the build's own check names the difference
                        warnings.simplefilter("ignore", VersionMismatchWarning)
                        return Client(self.address, timeout=f"{self.wait_s}s", set_as_default=False)

                client = _within(connect, self.wait_s + CONNECT_SLACK_S)
            except (OSError, TimeoutError) as error:
                self.failed = (
                    f"the Dask scheduler at {self.address} could not be reached within "
                    f"{self.wait_s:g} s ({type(error).__name__}: {error}; executor_wait_s in "
                    "mkdocs.yml's extra.build bounds the wait)"
                )
                raise Unavailable(self.failed) from None
            self.parts = bundled(self.project_root)
            self.data, self.digest = bundle(self.parts)
            self.environment = on_worker.environment()
            self.client = client
            log.info(
                "Sessions run ahead on the Dask cluster at %s (code bundle %s)",
                self.address,
                self.digest[:12],
            )
            return client

    def _workers_for(self, client: Any, job: Job) -> list[str]:
        """The workers that may run ``job``: with ``GPU`` for a GPU page's, without for any
        other, and an environment that matches the build's; waited for up to ``wait_s``."""
        deadline = time.monotonic() + self.wait_s
        while True:
            if client.status != "running":  # the scheduler is gone (a worker's loss seen first)
                raise Unavailable(self._lost())
            eligible = []
            for address, info in self._workers(client, fresh=True).items():
                has_gpu = bool((info.get("resources") or {}).get("GPU"))
                if has_gpu == job.gpu and not self._differences(client, address, has_gpu):
                    eligible.append(address)
            if eligible:
                return eligible
            if time.monotonic() >= deadline:
                break
            time.sleep(_POLL_S)
        if client.status != "running":
            raise Unavailable(self._lost())
        kind = "with GPU=1 (" + GPU_SAID + ")" if job.gpu else "without a GPU resource"
        refused = [self._refusal(a, said) for a, said in sorted(self.checked.items()) if said]
        raise Unavailable(
            f"no Dask worker {kind} that may run it joined the cluster at {self.address} within "
            f"{self.wait_s:g} s (executor_wait_s)" + (f"; {'; '.join(refused)}" if refused else "")
        )

    def _workers(self, client: Any, fresh: bool = False) -> dict[str, dict[str, Any]]:
        """The cluster's workers; but ``fresh`` (a job about to be sent), as asked of the
        scheduler within ``_POLL_S``: each job's thread asks every ``_WATCH_S`` while it waits
        (``scheduler_info`` is a call to the scheduler each time: 64 threads' calls took the
        cores of a 2-core loopback cluster)."""
        with self.known_lock:
            asked_at, known = self.known
            if not fresh and time.monotonic() - asked_at < _POLL_S:
                return known
            try:
                info = client.scheduler_info(n_workers=-1)
            except TypeError:  # an older distributed: every worker, always
                info = client.scheduler_info()
            self.known = (time.monotonic(), info.get("workers", {}))
            return self.known[1]

    def _differences(self, client: Any, address: str, gpu: bool) -> list[str]:
        """How the worker's environment differs from the build's, checked once a worker (a GPU
        worker may hold a JAX backend plugin the build lacks: only GPU jobs go to it)."""
        with self.lock:
            if address in self.checked:
                return self.checked[address]
        theirs = client.run(on_worker.environment, workers=[address], on_error="return")
        found = theirs.get(address)
        if not isinstance(found, dict):
            return [f"its environment could not be read: {found!r}"]  # asked again next time
        said = on_worker.differences(self.environment, found, gpu)
        with self.lock:
            self.checked[address] = said
        if said:
            log.info("%s: it runs no job", self._refusal(address, said))
        return said

    def _lost(self, error: BaseException | None = None) -> str:
        """The scheduler lost while the build ran: said once, every later job's failure too."""
        cause = f" ({type(error).__name__}: {error})" if error is not None else ""
        with self.lock:
            self.failed = self.failed or (
                f"the Dask scheduler at {self.address} was lost while the build ran{cause}"
            )
            return self.failed

    def _refusal(self, address: str, said: list[str]) -> str:
        return (
            f"the Dask worker {address} was refused: its environment differs from the "
            f"build's ({', '.join(said)})"
        )
