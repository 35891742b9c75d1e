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

from .arguments import as_count, as_counts, check_measured
from .backend import machine_label
from .scoring import score_batch
from .settings import (
    score_settings,
    score_settings_first_unchecked,
    score_settings_unchecked,
    settings_program,
)
from .timing import format_rate, format_ratio, format_seconds, interleaved_medians

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
            f"| {format_rate(row.settings_per_s)} | {format_ratio(row.speedup)} |"
        )
    return "\n".join(lines)
