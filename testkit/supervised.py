"""Several processes of one JAX system, started under the tests' supervision: each in its own
process group, all stopped soon after one fails, none outliving the test (nor pytest killed by
a CI timeout). The build's ``die_with_parent`` for the last; the readers' own runner is
``examples.processes.run_processes``, which needs none of this."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from build_support import process_tree
from examples.processes import (
    JOIN_TIMEOUT_S,
    LOCAL_HOST,
    Finished,
    free_port,
    process_env,
)

PARENT_ENV = "TESTKIT_PARENT_PID"
"""The id of the process that started a supervised one (read by ``die_with_parent``)."""


def run_supervised(
    command: list[str],
    *,
    processes: int,
    devices_per_process: int,
    timeout_s: float,
    join_timeout_s: int = JOIN_TIMEOUT_S,
    started: list[int] | None = None,
    after_failure_s: float = 10.0,
    cwd: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> list[Finished]:
    """``examples.processes.run_processes``, for the tests: ``started`` lists the ids actually
    started (default all: the others never join); ``extra_env`` is added to each one's.

    Nothing outlives the call: every process runs in its own process group, and each group is
    killed at ``timeout_s``, or ``after_failure_s`` after any process exits with an error (the
    others would wait for it). Returns every started process's exit status and output.
    """
    coordinator = f"{LOCAL_HOST}:{free_port()}"
    ids = list(range(processes)) if started is None else started
    running: dict[int, subprocess.Popen] = {}
    with contextlib.ExitStack() as files:
        outputs = {i: files.enter_context(tempfile.TemporaryFile()) for i in ids}
        try:
            for i in ids:
                env = process_env(
                    i,
                    processes=processes,
                    devices_per_process=devices_per_process,
                    coordinator=coordinator,
                    join_timeout_s=join_timeout_s,
                )
                env |= {PARENT_ENV: str(os.getpid()), **(extra_env or {})}
                running[i] = subprocess.Popen(
                    command,
                    env=env,
                    cwd=cwd,
                    stdout=outputs[i],
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group, killed whole below
                )
            _wait(list(running.values()), timeout_s, after_failure_s)
        finally:
            still_running = {i for i, process in running.items() if process.poll() is None}
            for process in running.values():
                with contextlib.suppress(ProcessLookupError):  # the group is already gone
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        return [Finished.read(i, running[i], outputs[i], i in still_running) for i in ids]


def _wait(running: list[subprocess.Popen], timeout_s: float, after_failure_s: float) -> None:
    """Until every process has ended, ``timeout_s`` has passed, or ``after_failure_s`` has
    since one failed (the others may be waiting for it)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        codes = [process.poll() for process in running]
        if all(code is not None for code in codes):
            return
        if any(codes):
            deadline = min(deadline, time.monotonic() + after_failure_s)
        time.sleep(0.1)


def die_with_parent() -> None:
    """In a process started by ``run_supervised``: be killed when the process that started it
    dies (pytest stopped by a CI timeout, say), so that none is left behind. Linux only."""
    process_tree.die_with_parent(signal.SIGKILL, parent=int(os.environ[PARENT_ENV]))
