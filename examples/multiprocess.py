"""``score_sharded`` across several processes on this machine, recorded for the page.

Several local processes join one JAX system with ``jax.distributed.initialize()`` (the
coordinator on 127.0.0.1, CPU collectives over gloo), each with its own forced CPU devices, and
run the same program: ``score_sharded`` splits the rows over the devices of every process.

    python -m examples.multiprocess --processes 2 --devices-per-process 4 [--out FILE.json]

prints what each process computed and saves it, with the date and the command, to FILE.json
(default: ``examples/recordings/multiprocess-<UTC time>.json``, which the page shows as
recorded). The processes are started and joined by ``processes.py``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from .processes import join_from_environment, results_of, run_processes

RECORDINGS_DIR = Path(__file__).resolve().parent / "recordings"
"""Recordings shipped with the package and shown on the page as recorded."""

RECORDING_PATTERN = "multiprocess-*.json"

LAYOUT_ROWS = 1000
"""Rows of the batch whose layout is recorded (features: LAYOUT_FEATURES)."""
LAYOUT_FEATURES = 16


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
    data = json.loads(path.read_text(encoding="utf-8"))
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
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(recording.caption())
    print("\n".join(recording.lines()))
    print(f"saved to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
