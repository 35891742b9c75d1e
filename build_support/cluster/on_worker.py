"""What runs on a Dask worker for the build (``client.py``, the build's side): a job, a session's
blocks in order, run in a fresh worker process under the build's limits, as a local run ahead
runs it (``execution/plan.py``).

Standard library only at the top: the build sends this module by value (cloudpickle), so a
Dask worker needs the locked environment, not the checkout. The code a job runs travels with
it, as the *bundle*: a zip of ``build_support/``, ``examples/``, ``pyproject.toml`` and the
project's ``docs/`` at their digest, unpacked once per digest into the Dask worker's
``--local-directory``, the job's working folder. The job
then runs in a process of its own (``python -m build_support.cluster.on_worker``, in the
bundle's folder, so it imports the bundle's code, never a Dask worker's older copy), which
starts the block worker as the build would (``executor.start``: a fresh interpreter, its own
process group, the time, output and memory limits, the same replies).

A Dask worker whose environment differs from the build's (``environment``: Python, system,
every locked distribution's version; for a CPU job, no JAX backend plugin the build lacks) runs
nothing: the job answers ``refused``, naming each difference, and the build fails its blocks.
"""

from __future__ import annotations

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
import zipfile
from pathlib import Path
from typing import Any

OWN_DISTRIBUTION = "dl-course"  # the course package: it travels in the bundle
BACKEND_PLUGINS = ("jax-cuda", "jax-rocm", "jax-tpu", "libtpu")  # a GPU worker's extra
BUNDLES = "course-bundles"  # under the Dask worker's local directory: one folder a digest
RUN_AS = "build_support.cluster.on_worker"
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
    refused = differences(build, environment(), bool(job["gpu"]))
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
    completed = subprocess.run(
        [sys.executable, "-m", RUN_AS],
        cwd=folder,
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        timeout=job["within_s"],
        check=False,
    )
    console = completed.stderr[-CONSOLE_BYTES:]
    if completed.returncode != 0:
        raise RuntimeError(
            f"the job's process on {where['worker']} ended with status {completed.returncode}: "
            f"{console.strip()[-2000:]}"
        )
    return where | json.loads(completed.stdout) | {"bundle": str(folder), "console": console}


def run_requests(job: dict[str, Any]) -> dict[str, Any]:
    """In the job's process: the job's blocks, in order, in one fresh worker under the build's
    limits; each one's reply, or its failure as ``BlockError`` says it."""
    import time

    import build_support
    from build_support.execution import executor
    from build_support.section import PACKAGE

    code_from = Path(build_support.__file__).resolve().parent.parent
    limits = executor.Limits(*job["limits"])
    config = {"sys_path": sys.path, "cwd": os.getcwd(), "compile_cache": None}
    config |= {"package": PACKAGE, "package_dir": str(code_from / PACKAGE)}
    config |= {"max_output_bytes": limits.max_output_bytes}
    worker = executor.start(limits, config, None)
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
    return {"results": results, "worker_pid": worker.process.pid, "code_from": str(code_from)}


if __name__ == "__main__":
    print(json.dumps(run_requests(json.load(sys.stdin))))
