"""Several local processes of one JAX system: started with their settings, joined by
``jax.distributed.initialize()`` (the coordinator on 127.0.0.1, CPU collectives over gloo), each
with its own forced CPU devices; bounded in time. ``python -m examples.multiprocess`` records a
run with them (``multiprocess.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

LOCAL_HOST = "127.0.0.1"
"""Where the processes meet: the coordinator listens on this machine only."""
JOIN_TIMEOUT_S = 60
"""How long a process waits for the others to join before it fails (it never waits forever)."""

# The settings each started process reads to join (see join_from_environment).
_COORDINATOR = "EXAMPLES_COORDINATOR"
_PROCESSES = "EXAMPLES_PROCESSES"
_PROCESS_ID = "EXAMPLES_PROCESS_ID"
_JOIN_TIMEOUT = "EXAMPLES_JOIN_TIMEOUT_S"


@dataclass(frozen=True)
class Finished:
    """One started process: its id, exit status (None: killed, still running at the end)."""

    process_id: int
    pid: int
    returncode: int | None
    output: str  # stdout and stderr together

    @classmethod
    def read(
        cls, process_id: int, process: subprocess.Popen, output: IO[bytes], killed: bool
    ) -> Finished:
        """A process that has ended, its output read back from the file ``output``."""
        output.seek(0)
        returncode = None if killed else process.returncode
        return cls(process_id, process.pid, returncode, output.read().decode(errors="replace"))

    def report(self) -> str:
        status = "killed (still running)" if self.returncode is None else self.returncode
        return f"--- process {self.process_id}: exit status {status}\n{self.output}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind((LOCAL_HOST, 0))
        return probe.getsockname()[1]


def process_env(
    process_id: int,
    *,
    processes: int,
    devices_per_process: int,
    coordinator: str,
    join_timeout_s: int = JOIN_TIMEOUT_S,
) -> dict[str, str]:
    """The environment of process ``process_id``: ``devices_per_process`` forced CPU devices,
    this package importable, and what ``join_from_environment`` reads to join the others."""
    package_root = str(Path(__file__).resolve().parent.parent)
    return {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices_per_process}",
        "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
        _COORDINATOR: coordinator,
        _PROCESSES: str(processes),
        _PROCESS_ID: str(process_id),
        _JOIN_TIMEOUT: str(join_timeout_s),
    }


def run_processes(
    command: list[str], *, processes: int, devices_per_process: int, timeout_s: float
) -> list[Finished]:
    """Run ``command`` as ``processes`` local processes of one JAX system; wait for them all.

    Each process gets ``devices_per_process`` forced CPU devices; process 0 is the coordinator,
    on a free port of 127.0.0.1. A process still running at ``timeout_s``, or when this one is
    interrupted, is killed. Returns every process's exit status and output.
    """
    coordinator = f"{LOCAL_HOST}:{free_port()}"
    running: list[subprocess.Popen] = []
    killed: set[int] = set()
    with contextlib.ExitStack() as files:
        outputs = [files.enter_context(tempfile.TemporaryFile()) for _ in range(processes)]
        deadline = time.monotonic() + timeout_s
        try:
            for i in range(processes):
                env = process_env(
                    i,
                    processes=processes,
                    devices_per_process=devices_per_process,
                    coordinator=coordinator,
                )
                running.append(
                    subprocess.Popen(command, env=env, stdout=outputs[i], stderr=subprocess.STDOUT)
                )
            for process in running:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass  # the ones still running are killed below
        finally:
            for i, process in enumerate(running):
                if process.poll() is None:
                    killed.add(i)
                    process.kill()
                    process.wait()
        return [
            Finished.read(i, process, outputs[i], i in killed) for i, process in enumerate(running)
        ]


def join_from_environment() -> tuple[int, int]:
    """In a process started by ``run_processes``: join the others; return (id, processes).

    Raises (rather than waits forever) when the coordinator or another process does not
    answer within the join timeout.
    """
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    process_id, processes = int(os.environ[_PROCESS_ID]), int(os.environ[_PROCESSES])
    jax.distributed.initialize(
        coordinator_address=os.environ[_COORDINATOR],
        num_processes=processes,
        process_id=process_id,
        initialization_timeout=int(os.environ[_JOIN_TIMEOUT]),
    )
    return process_id, processes


def results_of(finished: list[Finished]) -> list[dict]:
    """The ``RESULT {json}`` line each process printed, in process order."""
    results = []
    for process in finished:
        lines = [line for line in process.output.splitlines() if line.startswith("RESULT ")]
        results.append(json.loads(lines[-1].removeprefix("RESULT ")) if lines else None)
    return results
