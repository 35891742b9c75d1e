"""Timings recorded on another machine (a GPU), saved as JSON and shown as recorded.

Two kinds: the turnaround table (``gpu-*.json``) and the settings sweep (``settings-*.json``).

The site is built where there may be no GPU, so a GPU's numbers cannot be live: they are
measured once by ``benchmarks/gpu_check.sh`` on a machine that has one, saved with the date
and the hardware in ``examples/recordings/``, committed, and shown on the page as "recorded on
<device>, <date>". The recordings are package data: they ship inside the wheel, so an installed
package (``python -m examples turnaround``) reads them too.

    python -m examples.recorded FILE.json           measure the turnaround table here now and
                                                    save it to FILE.json
    python -m examples.recorded --sweep FILE.json   the same for the settings sweep
"""

from __future__ import annotations

import dataclasses
import datetime
import fnmatch
import json
import sys
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from os import PathLike
from pathlib import Path

import jax

from .arguments import check_measured
from .sweep import LayoutCheck, SettingsSweep, SweepRow, measure_settings_sweep, sweep_markdown
from .timing import TIMES_SIGN, format_seconds
from .turnaround import Turnaround, TurnaroundRow, measure_turnaround, turnaround_markdown

RECORDED_DIR: Traversable = files(__package__) / "recordings"
"""Where the GPU check saves its files: package data, committed and shipped in the wheel."""


def recorded_caption(device: str, recorded_at: datetime.datetime, label: str) -> str:
    """What the page prints above a recording: where and when, and that it is not live."""
    return (
        f"Recorded on {device}, {recorded_at:%Y-%m-%d} (not live: measured once and saved; {label})"
    )


@dataclass(frozen=True)
class RecordedTurnaround:
    turnaround: Turnaround
    device: str  # what ran score_batch, e.g. "NVIDIA H200"
    recorded_at: datetime.datetime  # UTC

    def caption(self) -> str:
        return recorded_caption(self.device, self.recorded_at, self.turnaround.label)


def save_recorded(path: Path, turnaround: Turnaround, device: str) -> RecordedTurnaround:
    recorded = RecordedTurnaround(turnaround, device, datetime.datetime.now(datetime.UTC))
    data = {
        "device": recorded.device,
        "recorded_at": recorded.recorded_at.isoformat(timespec="seconds"),
        "label": turnaround.label,
        "cost_s": turnaround.cost_s,
        "rows": [dataclasses.asdict(row) for row in turnaround.rows],
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return recorded


def _as_path(name: str, value: object) -> Traversable:
    """A folder or file given as a str, a path, or package data (``importlib.resources``)."""
    if isinstance(value, (str, PathLike)):
        return Path(value)
    if not isinstance(value, Traversable):
        raise TypeError(f"{name} must be a path (str or pathlib.Path), got {type(value).__name__}")
    return value


def _read_recording(path: object, kind: str, build):
    """``build(data)`` from the JSON file at ``path``; a file that is not such a recording is
    refused with a ValueError naming it."""
    path = _as_path("path", path)
    try:
        return build(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as error:  # JSONDecodeError is a ValueError
        raise ValueError(
            f"path {path} is not a recorded {kind} (the JSON that python -m examples.recorded "
            f"writes): {type(error).__name__}: {error}"
        ) from None


def _turnaround_from(data: dict) -> RecordedTurnaround:
    turnaround = Turnaround(
        rows=tuple(TurnaroundRow(**row) for row in data["rows"]),
        label=data["label"],
        cost_s=data["cost_s"],
    )
    return RecordedTurnaround(
        turnaround, data["device"], datetime.datetime.fromisoformat(data["recorded_at"])
    )


def load_recorded(path: Traversable) -> RecordedTurnaround:
    """The recorded turnaround table saved at ``path`` (``save_recorded``)."""
    return _read_recording(path, "turnaround table", _turnaround_from)


def _newest(folder: object, pattern: object, load):
    folder = _as_path("folder", folder)
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a file name pattern (str), got {type(pattern).__name__}")
    recordings = [load(path) for path in folder.iterdir() if fnmatch.fnmatch(path.name, pattern)]
    return max(recordings, key=lambda recorded: recorded.recorded_at, default=None)


def latest_recorded(folder: Traversable = RECORDED_DIR, pattern: str = "gpu-*.json"):
    """The newest recorded turnaround table in ``folder``, or None when there is none."""
    return _newest(folder, pattern, load_recorded)


@dataclass(frozen=True)
class RecordedSweep:
    """The settings sweep (``examples.sweep``) as recorded on another machine."""

    sweep: SettingsSweep
    device: str
    recorded_at: datetime.datetime  # UTC

    def caption(self) -> str:
        return recorded_caption(self.device, self.recorded_at, self.sweep.label)


def save_recorded_sweep(path: Path, sweep: SettingsSweep, device: str) -> RecordedSweep:
    recorded = RecordedSweep(sweep, device, datetime.datetime.now(datetime.UTC))
    data = {
        "device": device,
        "recorded_at": recorded.recorded_at.isoformat(timespec="seconds"),
        **dataclasses.asdict(sweep),
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return recorded


def _sweep_from(data: dict) -> RecordedSweep:
    sweep = SettingsSweep(
        rows=tuple(SweepRow(**row) for row in data["rows"]),
        layout=LayoutCheck(**data["layout"]),
        program=tuple(data["program"]),
        settings_first_program=tuple(data["settings_first_program"]),
        label=data["label"],
        cost_s=data["cost_s"],
    )
    return RecordedSweep(
        sweep, data["device"], datetime.datetime.fromisoformat(data["recorded_at"])
    )


def load_recorded_sweep(path: Traversable) -> RecordedSweep:
    """The recorded settings sweep saved at ``path`` (``save_recorded_sweep``)."""
    return _read_recording(path, "settings sweep", _sweep_from)


def latest_recorded_sweep(folder: Traversable = RECORDED_DIR, pattern: str = "settings-*.json"):
    """The newest recorded settings sweep in ``folder``, or None when there is none."""
    return _newest(folder, pattern, load_recorded_sweep)


def compare_with_recorded(
    live: Turnaround, recorded: RecordedTurnaround, here: str = "the build machine"
) -> list[str]:
    """Sentences that set the live table beside a recorded one, size by size where both ran.

    For each feature count measured in both: the smallest size (where the cost of a call
    decides) and the largest (where the hardware's throughput decides).
    """
    check_measured("live", live, Turnaround, "measure_turnaround()")
    if not isinstance(recorded, RecordedTurnaround):
        raise TypeError(
            "recorded must be a RecordedTurnaround, as latest_recorded() or load_recorded() "
            f"returns, got {type(recorded).__name__}"
        )
    recorded_rows = {(row.features, row.rows): row for row in recorded.turnaround.rows}
    sentences = []
    for features in sorted({row.features for row in live.rows}):
        shared = [
            (row, recorded_rows[features, row.rows])
            for row in live.rows
            if row.features == features and (features, row.rows) in recorded_rows
        ]
        if not shared:
            continue
        for mine, there in (shared[0], shared[-1]) if len(shared) > 1 else shared:
            ratio = mine.batch_s / there.batch_s
            faster = (
                f"{ratio:,.0f}{TIMES_SIGN} faster"
                if ratio >= 1
                else f"{1 / ratio:,.1f}{TIMES_SIGN} slower"
            )
            sentences.append(
                f"At {mine.rows:,} rows of {features} features, `score_batch` took "
                f"{format_seconds(there.batch_s)} on the {recorded.device} and "
                f"{format_seconds(mine.batch_s)} on {here}: {faster} there."
            )
    return sentences


def _record_sweep(path: str) -> None:
    sweep = measure_settings_sweep()
    recorded = save_recorded_sweep(Path(path), sweep, jax.devices()[0].device_kind)
    print(recorded.caption())
    print(sweep_markdown(sweep))
    print(f"measured in {sweep.cost_s:.2f} s; saved to {path}")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--sweep":
        _record_sweep(argv[1])
        return 0
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    turnaround = measure_turnaround()
    device = jax.devices()[0].device_kind
    recorded = save_recorded(Path(argv[0]), turnaround, device)
    print(recorded.caption())
    print(turnaround_markdown(turnaround))
    print(f"measured in {turnaround.cost_s:.2f} s; saved to {argv[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
