"""``score_sharded`` across several processes on this machine, recorded for the page.

Several local processes join one JAX system with ``jax.distributed.initialize()`` (the
coordinator on 127.0.0.1, CPU collectives over gloo), each with its own forced CPU devices, and
run the same program: ``score_sharded`` splits the rows over the devices of every process.

    python -m examples.multiprocess --processes 2 --devices-per-process 4 [--out FILE.json]

prints what each process computed and saves it, with the date and the command, to FILE.json
(default: ``examples/recordings/multiprocess-<UTC time>.json``, which the page shows as
recorded). ``run_processes`` starts the processes, bounded in time (the tests start theirs
under stricter supervision: ``testkit.processes``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

RECORDINGS_DIR = Path(__file__).resolve().parent / "recordings"
"""Recordings shipped with the package and shown on the page as recorded."""

RECORDING_PATTERN = "multiprocess-*.json"

LAYOUT_ROWS = 1000
"""Rows of the batch whose layout is recorded (features: LAYOUT_FEATURES)."""
LAYOUT_FEATURES = 16

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
    def read(cls, process_id: int, process: subprocess.Popen, output, killed: bool) -> Finished:
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


def _record_in_this_process() -> None:
    """The program each process runs: score the practice batch, lay out a larger one."""
    import jax
    import numpy as np

    from .data import BATCH, WEIGHTS
    from .practice import rounded
    from .scoring import score_batch
    from .sharding import gather_scores, layout_lines, score_sharded

    process_id, _ = join_from_environment()
    scores = gather_scores(score_sharded(BATCH, WEIGHTS))
    rng = np.random.default_rng(0)
    large = rng.normal(size=(LAYOUT_ROWS, LAYOUT_FEATURES)).astype(np.float32)
    large_scores = score_sharded(large, rng.normal(size=LAYOUT_FEATURES))
    result = {
        "process": process_id,
        "local_devices": [f"{d.platform}:{d.id}" for d in jax.local_devices()],
        "devices": jax.device_count(),
        "practice_scores": rounded(scores),
        "same_as_score_batch": bool(
            np.array_equal(scores, np.asarray(score_batch(BATCH, WEIGHTS)))
        ),
        "layout": layout_lines(large_scores),
        "jax": jax.__version__,
    }
    print("RESULT " + json.dumps(result), flush=True)
    jax.distributed.shutdown()


def results_of(finished: list[Finished]) -> list[dict]:
    """The ``RESULT {json}`` line each process printed, in process order."""
    results = []
    for process in finished:
        lines = [line for line in process.output.splitlines() if line.startswith("RESULT ")]
        results.append(json.loads(lines[-1].removeprefix("RESULT ")) if lines else None)
    return results


@dataclass(frozen=True)
class MultiprocessRecording:
    recorded_at: datetime.datetime  # UTC
    processes: int
    devices_per_process: int
    command: str
    host: str
    jax: str
    results: list[dict]  # one per process, as printed by it

    def caption(self) -> str:
        """When, where, how many processes and devices, and the command (three lines)."""
        return (
            f"Recorded {self.recorded_at:%Y-%m-%d %H:%M} UTC, not live, on one machine "
            f"({self.host}, jax {self.jax}):\n"
            f"{self.processes} processes with {self.devices_per_process} CPU devices each "
            f"({self.processes * self.devices_per_process} in all), started by\n"
            f"{self.command}"
        )

    def lines(self) -> list[str]:
        """What each process read back, then where the larger batch's scores were."""
        lines = [
            f"process {result['process']} ({', '.join(result['local_devices'])}): "
            f"gather_scores = {result['practice_scores']}"
            f"{', as score_batch' if result['same_as_score_batch'] else ', NOT as score_batch'}"
            for result in self.results
        ]
        lines.append(f"score_sharded of {LAYOUT_ROWS:,} rows x {LAYOUT_FEATURES} features:")
        return lines + self.results[0]["layout"]


def load_multiprocess_recording(path: Path) -> MultiprocessRecording:
    data = json.loads(path.read_text())
    data["recorded_at"] = datetime.datetime.fromisoformat(data["recorded_at"])
    return MultiprocessRecording(**data)


def latest_multiprocess_recording(folder: Path = RECORDINGS_DIR) -> MultiprocessRecording:
    """The newest ``multiprocess-*.json`` in ``folder`` (FileNotFoundError when there is none)."""
    recordings = [load_multiprocess_recording(path) for path in folder.glob(RECORDING_PATTERN)]
    if not recordings:
        raise FileNotFoundError(
            f"no {RECORDING_PATTERN} in {folder}: run python -m examples.multiprocess"
        )
    return max(recordings, key=lambda recording: recording.recorded_at)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.multiprocess", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--devices-per-process", type=int, default=4)
    parser.add_argument("--out", type=Path, help="where to save the recording")
    parser.add_argument("--timeout", type=float, default=300, help="seconds, for the whole run")
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.in_process:  # one of the started processes
        _record_in_this_process()
        return 0

    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    command = (
        f"python -m examples.multiprocess --processes {args.processes} "
        f"--devices-per-process {args.devices_per_process}"
    )
    finished = run_processes(
        [sys.executable, "-m", "examples.multiprocess", "--in-process"],
        processes=args.processes,
        devices_per_process=args.devices_per_process,
        timeout_s=args.timeout,
    )
    results = results_of(finished)
    if any(process.returncode != 0 for process in finished) or None in results:
        print("\n".join(process.report() for process in finished), file=sys.stderr)
        return 1
    recording = MultiprocessRecording(
        recorded_at=now,
        processes=args.processes,
        devices_per_process=args.devices_per_process,
        command=command,
        host=f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU cores",
        jax=results[0]["jax"],
        results=results,
    )
    out = args.out or RECORDINGS_DIR / f"multiprocess-{now:%Y%m%dT%H%M%SZ}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {**recording.__dict__, "recorded_at": now.isoformat()}
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(recording.caption())
    print("\n".join(recording.lines()))
    print(f"saved to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
