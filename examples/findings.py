"""What the timings show, in sentences: the turnaround table's and the settings sweep's findings.

Each sentence that says which way was faster decides it on the times it prints, as printed
(``timing.shown_ratio``), and quotes the times of a size it names; times less than 5% apart
are "about as fast" (``timing.about_as_fast``). Nothing in them is written by hand.
"""

from __future__ import annotations

import statistics

from .arguments import check_measured
from .sweep import SettingsSweep, SweepRow
from .timing import about_as_fast, faster_or_slower, format_rate, format_seconds, shown_ratio
from .turnaround import Turnaround, TurnaroundRow


def _loop_time(row: TurnaroundRow) -> str:
    shown = format_seconds(row.loop_s)
    return shown if row.loop_measured else f"≈ {shown} (extrapolated)"


def _sizes(rows: list[TurnaroundRow]) -> str:
    return ", ".join(f"{row.rows:,} rows of {row.features} features" for row in rows)


def turnaround_findings(turnaround: Turnaround) -> list[str]:
    """When batching paid on this machine and when it did not, read from the measurements.

    Each sentence decides "faster" on the times it prints, as printed (``timing.shown_ratio``),
    and quotes the times of a size it names; times less than 5% apart are "about as fast".
    """
    check_measured("turnaround", turnaround, Turnaround, "measure_turnaround()")
    first = turnaround.rows[0]
    findings = []
    loop_vs_batch = {row: shown_ratio(row.loop_s, row.batch_s) for row in turnaround.rows}
    loop_wins = [
        row for row, ratio in loop_vs_batch.items() if ratio > 1 and not about_as_fast(ratio)
    ]
    ties = [row for row, ratio in loop_vs_batch.items() if about_as_fast(ratio)]
    if loop_wins:
        won = loop_wins[0]
        findings.append(
            f"The Python loop beat `score_batch` at {_sizes(loop_wins)}: at {won.rows:,} rows "
            f"the loop took {_loop_time(won)} and `score_batch` {format_seconds(won.batch_s)}, "
            "most of it the fixed cost of one call into compiled code."
        )
    elif ties:
        tie = ties[0]
        findings.append(
            f"The Python loop was about as fast as `score_batch` at {_sizes(ties)} "
            f"({_loop_time(tie)} against {format_seconds(tie.batch_s)} at {tie.rows:,} rows), "
            "and slower at every other size."
        )
    else:
        findings.append(
            f"`score_batch` beat the Python loop at every size, even {first.rows:,} rows "
            f"({format_seconds(first.batch_s)} against {_loop_time(first)})."
        )
    numpy_wins = [
        row
        for row in turnaround.rows
        if (ratio := shown_ratio(row.numpy_s, row.batch_s)) > 1 and not about_as_fast(ratio)
    ]
    if numpy_wins:
        won = numpy_wins[0]
        findings.append(
            f"numpy's `@` was faster than `score_batch` at {len(numpy_wins)} of "
            f"{len(turnaround.rows)} sizes. At {won.rows:,} rows of {won.features} features: "
            f"{format_seconds(won.numpy_s)} for numpy against {format_seconds(won.batch_s)} "
            "for `score_batch`."
        )
    findings.append(_compile_finding(turnaround.rows, first))
    return findings


def _compile_finding(rows: tuple[TurnaroundRow, ...], first: TurnaroundRow) -> str:
    compile_s = statistics.median(row.first_call_s - row.batch_s for row in rows)
    if compile_s <= 0:  # a busy machine can make a later call slower than the first
        return (
            "No cost of compiling `score_batch` for a new batch shape could be measured: its "
            "first call at a shape was, in the median, no slower than the next ones."
        )
    return (
        f"Every new batch shape compiled `score_batch` again: a median of "
        f"{format_seconds(compile_s)} a shape, as long as the loop takes for about "
        f"{compile_s / (first.loop_s / first.rows):,.0f} rows of {first.features} features."
    )


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
            f"{format_rate(most.settings_per_s)} settings a second."
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
