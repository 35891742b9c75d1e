"""Wall-clock timing, and how a time or a ratio of times is printed.

Shared by the page's turnaround table and settings sweep, the readers' CLI and the benchmarks.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable


def _seconds_per_call(run: Callable[[], object], calls: int) -> float:
    """Seconds per call of ``calls`` calls to ``run`` in a row, timed together."""
    start = time.perf_counter()
    for _ in range(calls):
        run()
    return (time.perf_counter() - start) / calls


def _calls_per_sample(one_call_s: float, min_batch_s: float) -> int:
    """How many calls to time together so that one sample lasts at least ``min_batch_s``."""
    return max(1, math.ceil(min_batch_s / max(one_call_s, 1e-9)))


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
    first = _seconds_per_call(run, 1)
    if first >= budget_s:
        return first  # too long to repeat: the one call is the measurement
    if first * repeats > budget_s:
        repeats = max(1, int(budget_s / first))
    calls = _calls_per_sample(first, min_batch_s)
    return statistics.median([_seconds_per_call(run, calls) for _ in range(repeats)])


TIMES_SIGN = "\N{MULTIPLICATION SIGN}"
"""The multiplication sign printed after a ratio (``12`` and this sign: twelve times)."""


def format_ratio(value: float) -> str:
    """A ratio of times and the multiplication sign: whole and with thousands separators from 10
    up (``1,234``), two significant digits below (``0.42``, ``3.1``)."""
    return f"{value:,.0f}{TIMES_SIGN}" if value >= 10 else f"{value:.2g}{TIMES_SIGN}"


def format_rate(per_s: float) -> str:
    """A rate in three significant digits, with thousands separators: 26,384,111 -> 26,400,000."""
    return f"{float(f'{per_s:.3g}'):,.0f}" if per_s >= 100 else f"{per_s:.3g}"


SAME_WITHIN = 1.05
"""Two times less than 5% apart are "about as fast": a shared machine's noise is larger."""


def about_as_fast(ratio: float) -> bool:
    """Whether a ratio of two times is within ``SAME_WITHIN``, either way (with a margin for
    floating point: 1.05e-3 / 1e-3 is 1.0500000000000003, but 1.05 as printed)."""
    band = SAME_WITHIN * (1 + 1e-9)
    return 1 / band <= ratio <= band


def faster_or_slower(ratio: float) -> str:
    """``ratio`` is the other way's time over this one's: above 1, this way was faster; within
    ``SAME_WITHIN``, "about as fast as"."""
    if about_as_fast(ratio):
        return "about as fast as"
    if ratio > 1:
        return f"{format_ratio(ratio)} faster than"
    return f"{format_ratio(1 / ratio)} slower than"


def shown_ratio(this_s: float, other_s: float) -> float:
    """``other_s / this_s`` as the two times are printed (``format_seconds``): a sentence that
    prints both and says which was faster decides it from the very numbers it prints."""
    return shown_seconds(other_s) / shown_seconds(this_s)


_UNITS = (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0))


def _three_significant(value: float) -> str:
    """``value`` (> 0) with exactly three significant digits, in plain decimal notation."""
    rounded = float(f"{value:.3g}")
    decimals = max(0, 2 - math.floor(math.log10(rounded)))
    return f"{rounded:.{decimals}f}"


def shown_seconds(seconds: float) -> float:
    """The time ``format_seconds`` prints, read back, in seconds."""
    number, unit = format_seconds(seconds).split()
    return float(number.replace(",", "")) * dict(_UNITS)[unit]


def format_seconds(seconds: float) -> str:
    """``0.0000123`` -> ``12.3 µs``: three significant digits in the unit that fits.

    The unit is chosen after rounding, so ``0.99996`` is ``1.00 s``, not ``1e+03 ms``. From
    1,000 s up the value is whole seconds with thousands separators; below 1 ns it stays in ns.
    """
    if not seconds >= 0 or math.isinf(seconds):
        raise ValueError(f"seconds must be a finite number >= 0, got {seconds!r}")
    if seconds == 0:
        return "0 s"
    if float(f"{seconds:.3g}") >= 1000:
        return f"{seconds:,.0f} s"
    unit, scale = _UNITS[0]
    for name, size in _UNITS:
        # the largest unit in which the value, rounded to three digits, is at least 1
        if float(f"{seconds / size:.3g}") >= 1:
            unit, scale = name, size
    return f"{_three_significant(seconds / scale)} {unit}"


def interleaved_medians(
    runs: dict[str, Callable[[], object]], repeats: int = 7, min_batch_s: float = 2e-3
) -> dict[str, float]:
    """Median seconds per call of each of ``runs``, timed in turns (A, B, C, A, B, C, ...).

    Taking turns spreads any slow spell of a shared machine over all contenders, so their
    ratios stay fair even when the absolute times drift. Each turn starts with one untimed
    call: a library's worker threads can keep spinning for a moment after its call (OpenBLAS
    does), which would slow whichever contender comes next.
    """
    # The warm-up call also sizes the group of calls timed together.
    calls = {
        name: _calls_per_sample(_seconds_per_call(run, 1), min_batch_s)
        for name, run in runs.items()
    }
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            run()  # settle: the previous contender's threads wind down during this call
            samples[name].append(_seconds_per_call(run, calls[name]))
    return {name: statistics.median(values) for name, values in samples.items()}
