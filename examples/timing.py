"""Wall-clock timing shared by the page's turnaround table and the benchmarks."""

from __future__ import annotations

import math
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path


def median_seconds(
    run: Callable[[], object],
    repeats: int = 5,
    min_batch_s: float = 2e-3,
    budget_s: float = math.inf,
) -> float:
    """Median seconds of one call to ``run``, after one untimed call.

    Calls shorter than ``min_batch_s`` are timed in groups, so that the clock's own cost and
    its resolution stay small next to what is measured. Calls so long that ``repeats`` of them
    would pass ``budget_s`` are repeated fewer times; a first call longer than ``budget_s`` is
    itself the measurement. ``run`` must wait for its own result (``block_until_ready()``).
    """
    start = time.perf_counter()
    run()
    first = time.perf_counter() - start
    if first >= budget_s:
        return first  # too long to repeat: the one call is the measurement
    if first * repeats > budget_s:
        repeats = max(1, int(budget_s / first))
    calls = max(1, math.ceil(min_batch_s / max(first, 1e-9)))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


def cpu_model() -> str:
    """The processor's name as the OS reports it, e.g. ``AMD EPYC`` (Linux: /proc/cpuinfo)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def format_seconds(seconds: float) -> str:
    """``0.0000123`` -> ``12.3 µs``: three significant digits in the unit that fits."""
    if seconds >= 1000:
        return f"{seconds:,.0f} s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def interleaved_medians(
    runs: dict[str, Callable[[], object]], repeats: int = 7, min_batch_s: float = 2e-3
) -> dict[str, float]:
    """Median seconds per call of each of ``runs``, timed in turns (A, B, C, A, B, C, ...).

    Taking turns spreads any slow spell of a shared machine over all contenders, so their
    ratios stay fair even when the absolute times drift. Each turn starts with one untimed
    call: a library's worker threads can keep spinning for a moment after its call (OpenBLAS
    does), which would slow whichever contender comes next.
    """
    calls = {}
    for name, run in runs.items():
        start = time.perf_counter()
        run()  # warm-up; also sizes the group of calls timed together
        calls[name] = max(1, math.ceil(min_batch_s / max(time.perf_counter() - start, 1e-9)))
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            run()  # settle: the previous contender's threads wind down during this call
            start = time.perf_counter()
            for _ in range(calls[name]):
                run()
            samples[name].append((time.perf_counter() - start) / calls[name])
    return {name: statistics.median(values) for name, values in samples.items()}
