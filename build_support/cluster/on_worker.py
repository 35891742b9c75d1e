"""What runs on a Dask worker for the build (``client.py``, the build's side): a job, a session's
blocks in order, run in a fresh worker process under the build's limits, as a local run ahead
runs it (``execution/plan.py``).

Standard library only at the top: the build sends this module by value (cloudpickle), so a
Dask worker needs the locked environment, not the checkout. The code a job runs travels with
it, as the *bundle*: a zip of ``build_support/``, ``examples/``, ``pyproject.toml`` and the
project's ``docs/`` at their digest, unpacked once per digest into the Dask worker's
``--local-directory``, the job's working folder. The job then runs in the *job server* of its
bundle and variables (``JobServer``: ``python -m build_support.cluster.on_worker --serve``, in the
bundle's folder, so it imports the bundle's code, never a Dask worker's older copy), kept by the
Dask worker for the jobs after it and running them side by side: its ``LocalExecutor`` forks
each job's block worker from its warm template, as the build's machine does (the same limits,
process group and replies), where a process started for each job spawned a fresh interpreter
that imported JAX again (a 40-page cold build: 2 s a session more than on the build's machine).

A Dask worker whose environment differs from the build's (``environment``: Python, system,
every locked distribution's version; for a CPU job, no JAX backend plugin the build lacks) runs
nothing: the job answers ``refused``, naming each difference, and the build fails its blocks.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import io
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections import deque
from concurrent.futures import Future
from pathlib import Path
from typing import Any

OWN_DISTRIBUTION = "dl-course"  # the course package: it travels in the bundle
BACKEND_PLUGINS = ("jax-cuda", "jax-rocm", "jax-tpu", "libtpu")  # a GPU worker's extra
BUNDLES = "course-bundles"  # under the Dask worker's local directory: one folder a digest
RUN_AS = "build_support.cluster.on_worker"
SERVE = "--serve"
SERVERS = "_course_job_servers"  # the Dask worker's attribute: its job servers, by bundle
ENVIRONMENT = "_course_environment"  # the Dask worker's attribute: its ``environment()``
SHOWN_DIFFERENCES = 6
CONSOLE_BYTES = 64 * 1024  # what the blocks wrote to stderr, sent back to the build


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def environment() -> dict[str, Any]:
    """What a job's outputs depend on besides its code: Python, the system, and each installed
    distribution's version (the first on ``sys.path``, as Python imports it), the course's own
    left out (it travels in the bundle)."""
    found: dict[str, str] = {}
    for distribution in importlib.metadata.distributions():
        name = normalized(distribution.metadata["Name"] or "")
        if name and name not in found:
            found[name] = distribution.version
    found.pop(OWN_DISTRIBUTION, None)
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "system": f"{sys.platform} {platform.machine()}",
        "distributions": found,
    }


def differences(build: dict[str, Any], worker: dict[str, Any], gpu: bool) -> list[str]:
    """How ``worker``'s environment differs from the ``build``'s, one phrase each; a GPU job's
    worker may have JAX backend plugins the build lacks, a CPU job's none."""
    said = [
        f"{item} {worker[item]} there, {build[item]} here"
        for item in ("python", "system")
        if worker.get(item) != build[item]
    ]
    ours, theirs = build["distributions"], worker.get("distributions", {})
    for name in sorted(ours):
        if theirs.get(name) != ours[name] and not (gpu and name.startswith(BACKEND_PLUGINS)):
            said.append(f"{name} {theirs.get(name, 'missing')} there, {ours[name]} here")
    if not gpu:
        extra = sorted(n for n in theirs if n.startswith(BACKEND_PLUGINS) and n not in ours)
        said += [f"{name} {theirs[name]} there (a JAX backend), none here" for name in extra]
    if len(said) > SHOWN_DIFFERENCES:
        said[SHOWN_DIFFERENCES:] = [f"and {len(said) - SHOWN_DIFFERENCES} more"]
    return said


def worker_environment(dask_worker: Any) -> dict[str, Any]:
    """The Dask worker's ``environment()``, read at its first job: reading every
    distribution's metadata took 0.27-0.43 s, a job's (a 40-page cold build: 3x local)."""
    found = dask_worker.__dict__.get(ENVIRONMENT)
    if found is None:
        found = dask_worker.__dict__[ENVIRONMENT] = environment()
    return found


def unpacked(bundle: bytes, digest: str, root: Path) -> Path:
    """The bundle's folder under ``root``, unpacked once per digest (checked), atomically."""
    folder = root / BUNDLES / digest
    if folder.is_dir():
        return folder
    if hashlib.sha256(bundle).hexdigest() != digest:
        raise ValueError(f"the bundle's bytes do not have its digest {digest}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".unpacking-"))
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        archive.extractall(staged)
    try:
        staged.rename(folder)
    except OSError:  # another task of this worker unpacked it first
        shutil.rmtree(staged, ignore_errors=True)
    return folder


def run_job(bundle: bytes, digest: str, job: dict[str, Any], build: dict[str, Any]) -> dict:
    """The Dask task: where it runs; ``refused`` where its environment differs from the
    ``build``'s, else each block's reply or failure, from a job process in the bundle's folder
    with the build's key variables (``job["variables"]``) in place of the worker's own (but
    those ``job["kept"]``: a GPU job's ``JAX_PLATFORMS`` is the GPU worker's)."""
    from distributed import get_worker  # on the Dask worker, which has it

    dask_worker = get_worker()
    where = {"worker": dask_worker.address, "host": socket.gethostname(), "pid": os.getpid()}
    refused = differences(build, worker_environment(dask_worker), bool(job["gpu"]))
    if refused:
        return where | {"refused": refused}
    folder = unpacked(bundle, digest, Path(dask_worker.local_directory))
    prefixes, kept = tuple(job["variable_prefixes"]), set(job["kept"])
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(prefixes) or name in kept
    }
    env |= job["variables"]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
    result = server_for(dask_worker, folder, env).run(job)
    if "failed" in result:
        raise RuntimeError(f"the job's process on {where['worker']} failed: {result['failed']}")
    return where | result | {"bundle": str(folder)}


def server_for(dask_worker: Any, folder: Path, env: dict[str, str]) -> JobServer:
    """The Dask worker's job server for the bundle at ``folder`` and ``env``, started where it
    has none running; an idle one of another bundle or variables is ended then."""
    kept = dask_worker.__dict__.setdefault(SERVERS, {"lock": threading.Lock(), "servers": {}})
    key = json.dumps([str(folder), env], sort_keys=True)
    with kept["lock"]:
        server = kept["servers"].get(key)
        if server is None or not server.alive():
            for other in [k for k, each in kept["servers"].items() if each.idle()]:
                kept["servers"].pop(other).close()
            server = kept["servers"][key] = JobServer(folder, env, dask_worker.address)
        return server


class JobServer:
    """A job server, seen from its Dask worker: jobs written to it one JSON line each, its
    answers read back by id; ended when its stdin closes (the Dask worker ended it, or died)."""

    def __init__(self, folder: Path, env: dict[str, str], address: str) -> None:
        self.address, self.lock, self.count, self.ended = address, threading.Lock(), 0, False
        self.waiting: dict[int, Future[dict[str, Any]]] = {}
        self.tail: deque[str] = deque(maxlen=100)  # its last lines on stderr, said if it ends
        pipes = dict.fromkeys(("stdin", "stdout", "stderr"), subprocess.PIPE)
        command = [sys.executable, "-m", RUN_AS, SERVE]
        self.process = subprocess.Popen(command, cwd=folder, env=env, encoding="utf-8", **pipes)
        self.console = threading.Thread(target=self._console, daemon=True)
        self.console.start()
        threading.Thread(target=self._answers, daemon=True).start()

    def alive(self) -> bool:
        return not self.ended and self.process.poll() is None

    def idle(self) -> bool:
        with self.lock:
            return not self.waiting

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """The job's answer; ``RuntimeError`` where the server ends first or it takes longer
        than ``job["within_s"]``."""
        answer: Future[dict[str, Any]] = Future()
        with self.lock:
            if self.ended:
                raise RuntimeError(self._ended_said())
            self.count += 1
            self.waiting[self.count] = answer
            try:
                self.process.stdin.write(json.dumps({"id": self.count, "job": job}) + "\n")
                self.process.stdin.flush()
            except OSError:  # it ended: its reader says how
                pass
        try:
            return answer.result(timeout=job["within_s"])
        except TimeoutError:
            raise RuntimeError(
                f"the job did not end within {job['within_s']:.0f} s on {self.address}"
            ) from None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()

    def _console(self) -> None:
        for line in self.process.stderr:
            self.tail.append(line)

    def _answers(self) -> None:
        for line in self.process.stdout:
            answer = json.loads(line)
            with self.lock:
                waiting = self.waiting.pop(answer["id"], None)
            if waiting is not None:
                waiting.set_result(answer["result"])
        self.process.wait()
        self.console.join(timeout=5)
        with self.lock:
            self.ended = True
            waiting, self.waiting = list(self.waiting.values()), {}
        for each in waiting:
            each.set_exception(RuntimeError(self._ended_said()))

    def _ended_said(self) -> str:
        console = "".join(self.tail).strip()[-2000:]
        return (
            f"the job's process on {self.address} ended with status {self.process.poll()}: "
            f"{console}"
        )


class Consoles(io.TextIOBase):
    """A job server's ``sys.stderr``: what a job's thread writes (its blocks' stdout and stderr)
    kept for its answer, anything else passed on."""

    def __init__(self, real: Any) -> None:
        self.real, self.local = real, threading.local()

    def start(self) -> None:
        self.local.buffer = io.StringIO()

    def end(self) -> str:
        text, self.local.buffer = self.local.buffer.getvalue(), None
        return text[-CONSOLE_BYTES:]

    def write(self, text: str) -> int:
        (getattr(self.local, "buffer", None) or self.real).write(text)
        return len(text)

    def flush(self) -> None:
        self.real.flush()


def serve() -> None:
    """The job server (``python -m build_support.cluster.on_worker --serve``, in a bundle's
    folder): each job line read from stdin run on a thread of its own, in a block worker its
    ``LocalExecutor`` forks warm; its answer written as a JSON line to stdout. Ends with the
    Dask worker: at the end of stdin, or by a death signal."""
    from build_support import process_tree
    from build_support.caching import compile_cache
    from build_support.execution import executor

    process_tree.die_with_parent()
    # JAX's compiled shapes in the Dask worker's local directory (the bundle's folder is in
    # it), as the build keeps them in its store; pruned as the build prunes them, once here
    compiled = compile_cache.directory(Path.cwd().parent.parent)
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a stray print goes to stderr, never among the answers
    consoles = Consoles(sys.stderr)
    sys.stderr = consoles
    local, lock = executor.LocalExecutor(), threading.Lock()

    def one(message: dict[str, Any]) -> None:
        consoles.start()
        try:
            result = run_requests(message["job"], local, compiled)
        except Exception as error:
            result = {"failed": f"{type(error).__name__}: {error}"}
        result["console"] = consoles.end()
        with lock:
            answers.write(json.dumps({"id": message["id"], "result": result}) + "\n")
            answers.flush()

    for line in sys.stdin:
        threading.Thread(target=one, args=(json.loads(line),), daemon=True).start()
    local.close()


def run_requests(job: dict[str, Any], local: Any, compiled: str) -> dict[str, Any]:
    """In the job server: the job's blocks, in order, in one worker under the build's limits,
    taken from ``local`` (a ``LocalExecutor``: forked from its warm template, for the bundle's
    package), with JAX's compiled shapes in ``compiled`` (none for a ``FRESH=1`` build, which
    reuses nothing); each one's reply, or its failure as ``BlockError`` says it."""
    import time

    import build_support
    from build_support.execution import executor
    from build_support.section import PACKAGE

    code_from = Path(build_support.__file__).resolve().parent.parent
    limits = executor.Limits(*job["limits"])
    requests = job["requests"]
    package_dir = str(code_from / PACKAGE)
    cache = None if job["fresh"] else compiled
    worker = local.take(limits, package_dir, cache, requests[0]["code"], code_from.name)
    results: list[dict[str, Any]] = []
    try:
        for request in job["requests"]:
            started = time.perf_counter()
            try:
                reply = worker.run(
                    request["code"], request["block_id"], False, request["seconds"], request["how"]
                )
                results.append({"reply": reply | {"ran_ahead_s": time.perf_counter() - started}})
            except executor.BlockError as error:
                results.append({"error": [error.summary, error.where, list(error.trace)]})
    finally:
        worker.close()
    pids = {"worker_pid": worker.process.pid, "server_pid": os.getpid()}
    return {"results": results, "code_from": str(code_from)} | pids


if __name__ == "__main__" and sys.argv[1:] == [SERVE]:
    serve()
