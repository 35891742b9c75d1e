"""Experiment turnaround, measured on the machine that runs it.

One scoring pass over batches of growing size, three ways: the Python loop
(``score_one_by_one``), numpy's batched product and ``score_batch``. The loop is timed while
one pass stays within a budget and extrapolated beyond it (it is linear in the rows).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import jax
import numpy as np

from .arguments import as_count, as_counts, as_seconds, check_measured
from .backend import machine_label
from .scoring import score_batch, score_one_by_one
from .timing import (
    format_ratio,
    format_seconds,
    median_seconds,
)

TURNAROUND_SIZES: dict[int, tuple[int, ...]] = {
    3: (4, 400, 40_000, 4_000_000),
    16: (4, 400, 4_000, 1_000_000),
}
"""Feature count -> batch sizes (rows) measured on the page: the practice's 3 and a wider row."""

LOOP_BUDGET_S = 0.5
"""The loop is timed only at sizes where one pass is expected to take at most this long."""

_TILE_ROWS = 4_096  # random rows, tiled up to the largest size: timing does not depend on values


@dataclass(frozen=True)
class TurnaroundRow:
    rows: int
    features: int
    loop_s: float
    loop_measured: bool  # False: extrapolated from the largest size timed
    numpy_s: float
    batch_s: float  # score_batch, device-resident input, after a warm-up
    first_call_s: float  # score_batch's first call at this shape: compile + run

    @property
    def loop_speedup(self) -> float:
        return self.loop_s / self.batch_s

    @property
    def numpy_speedup(self) -> float:
        return self.numpy_s / self.batch_s


@dataclass(frozen=True)
class Turnaround:
    rows: tuple[TurnaroundRow, ...]
    label: str
    cost_s: float  # wall-clock seconds the whole measurement took


def _measure_features(features: int, sizes: tuple[int, ...], rng, loop_budget_s: float):
    device = jax.devices()[0]
    block = rng.random((_TILE_ROWS, features), dtype=np.float32)
    data = np.resize(block, (max(sizes), features))
    weights = rng.random(features, dtype=np.float32) - np.float32(0.5)
    weights_on_device = jax.device_put(weights, device)
    loop_per_row = None  # seconds per row at the largest size the loop was timed at
    for rows in sorted(sizes):
        batch = data[:rows]
        # On the device once: passing numpy into a jitted function would copy it every call.
        batch_on_device = jax.device_put(batch, device)

        def run_batch(batch_on_device=batch_on_device):
            return score_batch(batch_on_device, weights_on_device).block_until_ready()

        start = time.perf_counter()
        scores = run_batch()  # a new shape compiles: warm up before timing
        first_call_s = time.perf_counter() - start
        # A wrong answer would make the timing meaningless: check it against numpy.
        np.testing.assert_allclose(np.asarray(scores), batch @ weights, atol=1e-5 * features)

        if loop_per_row is None or loop_per_row * rows <= loop_budget_s:
            loop_s = median_seconds(
                lambda batch=batch: score_one_by_one(batch, weights), budget_s=loop_budget_s / 5
            )
            loop_per_row, measured = loop_s / rows, True
        else:
            loop_s, measured = loop_per_row * rows, False
        yield TurnaroundRow(
            rows=rows,
            features=features,
            loop_s=loop_s,
            loop_measured=measured,
            numpy_s=median_seconds(lambda batch=batch: batch @ weights, budget_s=0.1),
            batch_s=median_seconds(run_batch, budget_s=0.1),
            first_call_s=first_call_s,
        )


def measure_turnaround(
    sizes: dict[int, tuple[int, ...]] = TURNAROUND_SIZES,
    loop_budget_s: float = LOOP_BUDGET_S,
    seed: int = 0,
) -> Turnaround:
    """Time one pass of each scoring path at every (features, rows) in ``sizes``."""
    if not isinstance(sizes, dict) or not sizes:
        raise TypeError(
            "sizes must be a non-empty dict of feature count -> batch sizes (rows), "
            f"e.g. {{3: (4, 400)}}, got {type(sizes).__name__} {sizes!r}"
        )
    sizes = {
        as_count("a feature count in sizes", features, minimum=1): as_counts(
            f"sizes[{features!r}]", rows
        )
        for features, rows in sizes.items()
    }
    loop_budget_s, seed = as_seconds("loop_budget_s", loop_budget_s), as_count("seed", seed)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    rows = tuple(
        row
        for features, feature_sizes in sizes.items()
        for row in _measure_features(features, feature_sizes, rng, loop_budget_s)
    )
    return Turnaround(rows=rows, label=machine_label(), cost_s=time.perf_counter() - start)


def turnaround_markdown(turnaround: Turnaround) -> str:
    """The table as Markdown; extrapolated loop times are marked in the cell.

    A speed-up is the other path's time divided by ``score_batch``'s: below 1x it was slower.
    """
    check_measured("turnaround", turnaround, Turnaround, "measure_turnaround()")
    lines = [
        "| rows | features | Python loop | numpy `@` | `score_batch` "
        "| speed-up over the loop | speed-up over numpy |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in turnaround.rows:
        loop = format_seconds(row.loop_s)
        if not row.loop_measured:
            loop = f"≈ {loop} *(extrapolated)*"
        lines.append(
            f"| {row.rows:,} | {row.features} | {loop} | {format_seconds(row.numpy_s)} "
            f"| {format_seconds(row.batch_s)} | {format_ratio(row.loop_speedup)} "
            f"| {format_ratio(row.numpy_speedup)} |"
        )
    return "\n".join(lines)
