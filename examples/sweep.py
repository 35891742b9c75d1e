"""Many weight settings tried one by one and all at once, timed on the machine that runs it.

The turnaround table times one experiment; this sweep times K experiments, each a weight
setting scored against the same batch: a Python loop of ``score_batch`` calls (one call, and
its fixed cost, per setting) against one ``score_settings`` call. The table, its findings and
its chart are computed from what is measured here; nothing in them is written by hand.
(``python -m examples.recorded --sweep FILE.json`` saves a sweep to show as recorded.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import numpy as np

from .backend import machine_label
from .scoring import score_batch
from .settings import (
    score_settings,
    score_settings_first_unchecked,
    score_settings_unchecked,
    settings_program,
)
from .timing import (
    faster_or_slower,
    format_ratio,
    format_seconds,
    interleaved_medians,
    shown_ratio,
)
from .validation import as_count, as_counts, check_measured

SWEEP_FEATURES = 16
SWEEP_ROWS: tuple[int, ...] = (4, 4_000)
"""Two batch sizes: the practice's 4 rows, where a call's fixed cost decides, and 4,000."""
SWEEP_SETTINGS: tuple[int, ...] = (1, 10, 100, 1_000)
"""How many weight settings (experiments) are tried against the same batch."""

_BUDGET_S = 0.15  # about the most the turns of one table row take; long loops get fewer turns


@dataclass(frozen=True)
class SweepRow:
    rows: int
    features: int
    settings: int
    one_by_one_s: float  # a Python loop of score_batch calls, one per setting
    at_once_s: float  # one score_settings call

    @property
    def speedup(self) -> float:
        return self.one_by_one_s / self.at_once_s

    @property
    def settings_per_s(self) -> float:
        return self.settings / self.at_once_s


@dataclass(frozen=True)
class LayoutCheck:
    """At the sweep's largest size: numpy's product and the settings axis first, beside it."""

    rows: int
    settings: int
    numpy_s: float  # numpy's batch @ settings.T on the same arrays
    at_once_s: float  # score_settings: settings axis last
    settings_first_s: float  # the same vmap with out_axes=0


@dataclass(frozen=True)
class SettingsSweep:
    rows: tuple[SweepRow, ...]
    layout: LayoutCheck
    program: tuple[str, ...]  # what the at-once call at the largest size hands to XLA
    settings_first_program: tuple[str, ...]  # the same with the settings axis first
    label: str
    cost_s: float


def _wait(result):
    return jax.block_until_ready(result)


def _measure_rows(rows: int, counts, features: int, rng) -> tuple[list[SweepRow], LayoutCheck]:
    device = jax.devices()[0]
    batch = rng.random((rows, features), dtype=np.float32)
    batch_on_device = jax.device_put(batch, device)  # once, as every experiment shares it
    all_settings = rng.standard_normal((max(counts), features), dtype=np.float32)
    measured = []
    for count in counts:
        settings_on_device = jax.device_put(all_settings[:count], device)
        # Each experiment's weights wait on the device too, so that the loop pays only what
        # trying one more setting costs: one call of score_batch.
        each_on_device = jax.device_put(list(all_settings[:count]), device)

        def one_by_one(each_on_device=each_on_device):
            return _wait([score_batch(batch_on_device, weights) for weights in each_on_device])

        def at_once(settings_on_device=settings_on_device):
            return _wait(score_settings(batch_on_device, settings_on_device))

        # The first calls compile; they also check that both ways give the same scores.
        start = time.perf_counter()
        loop_scores = one_by_one()
        loop_s = time.perf_counter() - start  # an estimate (it includes compiling)
        np.testing.assert_allclose(
            np.stack([np.asarray(s) for s in loop_scores], axis=1),
            np.asarray(at_once()),
            rtol=1e-5,
            atol=1e-5 * features,
        )
        # In turns (loop, at once, loop, ...): a slow spell of a shared machine then slows
        # both alike. Each turn costs about two loops; long loops get fewer turns.
        turns = max(3, min(7, int(_BUDGET_S / (2 * loop_s))))
        times = interleaved_medians({"loop": one_by_one, "once": at_once}, repeats=turns)
        measured.append(
            SweepRow(
                rows=rows,
                features=features,
                settings=count,
                one_by_one_s=times["loop"],
                at_once_s=times["once"],
            )
        )
    return measured, _check_layout(batch, batch_on_device, all_settings, settings_on_device)


def _check_layout(batch, batch_on_device, all_settings, settings_on_device) -> LayoutCheck:
    """numpy's product, the settings axis last and first, on the largest setting count's arrays."""
    # Timed in turns, so that a slow spell of a shared machine slows all three alike.
    times = interleaved_medians(
        {
            "numpy": lambda: batch @ all_settings.T,
            "last": lambda: _wait(score_settings_unchecked(batch_on_device, settings_on_device)),
            "first": lambda: _wait(
                score_settings_first_unchecked(batch_on_device, settings_on_device)
            ),
        },
        repeats=5,
    )
    return LayoutCheck(
        rows=batch.shape[0],
        settings=settings_on_device.shape[0],
        numpy_s=times["numpy"],
        at_once_s=times["last"],
        settings_first_s=times["first"],
    )


def measure_settings_sweep(
    rows: tuple[int, ...] = SWEEP_ROWS,
    settings: tuple[int, ...] = SWEEP_SETTINGS,
    features: int = SWEEP_FEATURES,
    seed: int = 0,
) -> SettingsSweep:
    """Time K settings one by one and at once, for every K in ``settings`` at every size."""
    rows, settings = as_counts("rows", rows), as_counts("settings", settings)
    features, seed = as_count("features", features, minimum=1), as_count("seed", seed)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    measured = []
    for size in sorted(rows):
        size_rows, layout = _measure_rows(size, sorted(settings), features, rng)
        measured.extend(size_rows)  # the layout check kept is the largest size's
    return SettingsSweep(
        rows=tuple(measured),
        layout=layout,
        program=tuple(settings_program(max(rows), features, max(settings))),
        settings_first_program=tuple(
            settings_program(max(rows), features, max(settings), settings_axis=0)
        ),
        label=machine_label(),
        cost_s=time.perf_counter() - start,
    )


def _rate(per_s: float) -> str:
    """Three significant digits, with thousands separators: 26,384,111 -> 26,400,000."""
    return f"{float(f'{per_s:.3g}'):,.0f}" if per_s >= 100 else f"{per_s:.3g}"


def sweep_markdown(sweep: SettingsSweep) -> str:
    """The sweep as a Markdown table: one line per (rows, settings)."""
    check_measured("sweep", sweep, SettingsSweep, "measure_settings_sweep()")
    lines = [
        "| rows | features | settings | one by one | at once | settings per second | speed-up |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in sweep.rows:
        lines.append(
            f"| {row.rows:,} | {row.features} | {row.settings:,} "
            f"| {format_seconds(row.one_by_one_s)} | {format_seconds(row.at_once_s)} "
            f"| {_rate(row.settings_per_s)} | {format_ratio(row.speedup)} |"
        )
    return "\n".join(lines)


def _share(fraction: float) -> str:
    """A share as a percentage: whole from 10% up, two significant digits below (never 0%)."""
    percent = 100 * fraction
    return f"{percent:.0f}%" if percent >= 10 else f"{float(f'{percent:.2g}'):g}%"


def _operations(program: tuple[str, ...]) -> str:
    count = f"{len(program)} operation{'s' if len(program) != 1 else ''}"
    return f"{count}, " + ", ".join(f"`{line}`" for line in program)


def _settings(count: int) -> str:
    return f"{count:,} setting{'s' if count != 1 else ''}"


def _one_setting(row: SweepRow) -> str:
    """At one setting nothing is shared: a difference is the two programs' own, or noise."""
    ratio = shown_ratio(row.at_once_s, row.one_by_one_s)
    times = (
        f"at once ({format_seconds(row.at_once_s)}) was {faster_or_slower(ratio)} one "
        f"`score_batch` call ({format_seconds(row.one_by_one_s)})"
    )
    if faster_or_slower(ratio) == "about as fast as":
        return f"with 1 setting there is no call to share, and {times}."
    return (
        f"with 1 setting there is no call to share, yet {times}: not from a shared call, but "
        "from the two compiled programs themselves, or a busy machine."
    )


def sweep_findings(sweep: SettingsSweep) -> list[str]:
    """What the sweep shows on this machine, read from the measurements. Each comparison is
    made on the times as printed in its sentence (``timing.shown_ratio``)."""
    check_measured("sweep", sweep, SettingsSweep, "measure_settings_sweep()")
    findings = []
    for size in sorted({row.rows for row in sweep.rows}):
        rows = [row for row in sweep.rows if row.rows == size]
        most, one = rows[-1], rows[0]
        if most.settings == 1:  # nothing else measured at this size
            findings.append(f"At {size:,} rows, {_one_setting(most)}")
            continue
        finding = (
            f"At {size:,} rows, trying {_settings(most.settings)} one by one took "
            f"{format_seconds(most.one_by_one_s)}, "
            f"{format_seconds(most.one_by_one_s / most.settings)} a setting; all at once took "
            f"{format_seconds(most.at_once_s)}, "
            f"{faster_or_slower(shown_ratio(most.at_once_s, most.one_by_one_s))} the loop: "
            f"{_rate(most.settings_per_s)} settings a second."
        )
        if one.settings == 1:
            one_setting = _one_setting(one)
            finding += f" {one_setting[0].upper()}{one_setting[1:]}"
        findings.append(finding)
    layout = sweep.layout
    findings.append(
        f"What JAX hands to XLA for the at-once call at {layout.rows:,} rows and "
        f"{layout.settings:,} settings: {_operations(sweep.program)}"
        + (
            ": the two `vmap`s, over rows and over settings, became one matrix product."
            if [line.split()[0] for line in sweep.program] == ["dot_general"]
            else "."
        )
        + " With the settings axis first (`out_axes=0`): "
        + f"{_operations(sweep.settings_first_program)}."
    )
    # The two shares of numpy's rate, as printed: their ratio is the verdict.
    last, first = (_share(layout.numpy_s / t) for t in (layout.at_once_s, layout.settings_first_s))
    first_vs_last = float(last[:-1]) / float(first[:-1])
    findings.append(
        f"There, `score_settings` ran at {last} of the rate of numpy's `batch @ settings.T` "
        f"on the same arrays, and the settings-first variant at {first}: on this machine, "
        f"putting the settings axis last was {faster_or_slower(first_vs_last)} putting it first."
    )
    return findings
