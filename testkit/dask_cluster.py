"""A Dask cluster on 127.0.0.1 for the tests of the cluster executor (issue 51,
build_support/cluster/): a ``dask scheduler`` and ``dask worker`` processes, each a process
group of its own, each worker with its own ``--local-directory`` and run from a folder that is
not the checkout; a worker started with ``--resources GPU=1`` stands in for a GPU worker. Needs
``distributed`` (the build's locked environment has it).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

DASK = str(Path(sys.executable).parent / "dask")


def ran_on_cluster(stderr: str) -> dict[str, tuple[str, int]]:
    """Each job the build says ran on the cluster: page and blocks -> worker address, pid."""
    pattern = r"Ran on the Dask cluster: (\S+ [^\n]*?), on Dask worker (\S+) \(host \S+, pid (\d+)"
    return {m[0]: (m[1], int(m[2])) for m in re.findall(pattern, stderr)}


class Cluster:
    """A scheduler and its workers on 127.0.0.1, each a process group of its own."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.processes = folder, []
        self.workers: dict[str, subprocess.Popen] = {}
        file = folder / "scheduler.json"
        command = [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
        self._start([*command, "--scheduler-file", str(file)], "scheduler")
        deadline = time.monotonic() + 60
        while not file.is_file() or not file.read_text(encoding="utf-8").strip():
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError("the scheduler did not start")
            time.sleep(0.1)
        time.sleep(0.1)  # written whole
        self.address = json.loads(file.read_text(encoding="utf-8"))["address"]

    def _start(self, command: list[str], name: str, env: dict | None = None) -> subprocess.Popen:
        with (self.folder / f"{name}.log").open("w", encoding="utf-8") as log:
            process = subprocess.Popen(
                command,
                cwd=self.folder,  # not the checkout
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **(env or {})},
            )
        self.processes.append(process)
        return process

    def add_worker(
        self, name: str, gpu: bool = False, env: dict | None = None, nthreads: int = 2
    ) -> None:
        """A worker ``name`` running ``nthreads`` jobs at once (a job: a session, in a block
        worker of its own), the GPU resource where ``gpu``, its own ``--local-directory``."""
        local = self.folder / f"{name}-local"
        local.mkdir()
        command = [DASK, "worker", self.address, "--name", name, "--nthreads", str(nthreads)]
        command += ["--no-nanny", "--no-dashboard", "--local-directory", str(local)]
        command += ["--resources", "GPU=1"] if gpu else []
        self.workers[name] = self._start(command, name, env)
        with self.client() as client:
            client.wait_for_workers(len(self.workers), timeout=60)

    def address_of(self, name: str) -> str:
        with self.client() as client:
            workers = client.scheduler_info(n_workers=-1)["workers"]
        (address,) = [address for address, info in workers.items() if info["name"] == name]
        return address

    @contextlib.contextmanager
    def client(self) -> Iterator:
        from distributed import Client
        from distributed.versions import VersionMismatchWarning

        with warnings.catch_warnings():  # a worker with another numpy, on purpose
            warnings.simplefilter("ignore", VersionMismatchWarning)
            client = Client(self.address, timeout="30s", set_as_default=False)
        try:
            yield client
        finally:
            client.close()

    def stop(self) -> None:
        for process in reversed(self.processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@contextlib.contextmanager
def started(folder: Path) -> Iterator[Cluster]:
    """A cluster (a scheduler, no worker yet) in ``folder``, stopped at the end."""
    folder.mkdir(parents=True, exist_ok=True)
    cluster = Cluster(folder)
    try:
        yield cluster
    finally:
        cluster.stop()
