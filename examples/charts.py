"""The section's charts, drawn from live results as inline, theme-aware SVG.

1. ``line_scores_chart``: each line's risk score computed one by one and as a batch, side by side.
2. ``multiply_count_chart``: the scalar multiply count against batch size, one rising line per
   feature count, over the practice's probe sizes and beyond.
3. ``turnaround_chart``: the time of one scoring pass against batch size, three ways.
4. ``settings_sweep_chart``: the time to try K weight settings one by one and all at once.

How every chart looks and reaches the page (ink, colours, ids, log axes) is ``chart_style.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .arguments import check_measured
from .chart_style import chart_style, inline_svg, log_log_axes, pyplot
from .counting import scaling_table
from .data import PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES
from .practice import rounded
from .scoring import score_batch, score_one_by_one

if TYPE_CHECKING:
    from .sweep import SettingsSweep
    from .turnaround import Turnaround

CHART_BATCH_SIZES: tuple[int, ...] = (*PROBE_BATCH_SIZES, 64, 128)
"""The probe sizes, then two doublings beyond them."""


def line_scores_chart(batch: Any, weights: Any) -> str:
    """Grouped bars: each line's score one by one (Python loop) and as a batch (jit + vmap)."""
    plt = pyplot()

    one_by_one = rounded(score_one_by_one(batch, weights))
    batched = rounded(score_batch(batch, weights))
    lines = range(1, len(one_by_one) + 1)
    width = 0.38
    with chart_style():
        figure, axes = plt.subplots(figsize=(7, 3.6))
        for offset, label, scores in (
            (-width / 2, "one by one (Python loop)", one_by_one),
            (width / 2, "as a batch (jax jit + vmap)", batched),
        ):
            bars = axes.bar([line + offset for line in lines], scores, width, label=label)
            axes.bar_label(bars, labels=[f"{score:g}" for score in scores], padding=2)
        axes.set_xticks(list(lines), [f"line {line}" for line in lines])
        axes.set_xlabel("factory line")
        axes.set_ylabel("risk score")
        low, high = min([0.0, *one_by_one, *batched]), max([0.0, *one_by_one, *batched])
        axes.set_ylim(low * 1.25, high * 1.25)  # headroom for the value labels and the legend
        axes.axhline(0, linewidth=0.8, color=plt.rcParams["axes.edgecolor"])  # page ink
        axes.legend(loc="upper left", ncols=2)
        return inline_svg(
            figure,
            "Risk score of each factory line, computed one by one and as a batch: "
            + ", ".join(
                f"line {line} {a:g} and {b:g}"
                for line, a, b in zip(lines, one_by_one, batched, strict=True)
            ),
        )


def multiply_count_chart(
    batch_sizes: Sequence[int] = CHART_BATCH_SIZES,
    feature_sizes: Sequence[int] = PROBE_FEATURE_SIZES,
    probe_sizes: Sequence[int] = PROBE_BATCH_SIZES,
) -> str:
    """One line per feature count: scalar multiplies (exact ints) against batch size.

    The practice's probe sizes are shaded, so the reader sees where the printed table ends.
    """
    plt = pyplot()

    table = scaling_table(batch_sizes, feature_sizes)
    with chart_style():
        figure, axes = plt.subplots(figsize=(7, 3.8))
        axes.axvspan(
            min(probe_sizes),
            max(probe_sizes),
            alpha=0.15,
            color="#888888",
            label="the practice's probe sizes",
        )
        for features, counts in table.items():
            axes.plot(batch_sizes, counts, marker="o", label=f"{features} features")
            axes.annotate(
                f"{counts[-1]:,}",
                (batch_sizes[-1], counts[-1]),
                textcoords="offset points",
                xytext=(-4, 6),
                ha="right",
            )
        axes.set_xlabel("batch size (lines)")
        axes.set_ylabel("scalar multiplications")
        axes.set_xlim(0, max(batch_sizes) * 1.02)
        axes.set_ylim(0, max(max(counts) for counts in table.values()) * 1.12)
        axes.legend(loc="upper left")
        return inline_svg(
            figure,
            "Scalar multiply count against batch size: "
            + "; ".join(
                f"{features} features: "
                + ", ".join(
                    f"{size} lines {count}" for size, count in zip(batch_sizes, counts, strict=True)
                )
                for features, counts in table.items()
            ),
        )


def _short_count(rows: int) -> str:
    for suffix, scale in (("M", 1_000_000), ("k", 1_000)):
        if rows >= scale and rows % scale == 0:
            return f"{rows // scale:,}{suffix}"
    return f"{rows:,}"


def turnaround_chart(turnaround: Turnaround) -> str:
    """Time per pass against batch size, one panel per feature count, as inline SVG."""
    plt = pyplot()
    import numpy as np

    from .turnaround import Turnaround

    check_measured("turnaround", turnaround, Turnaround, "measure_turnaround()")
    feature_counts = sorted({row.features for row in turnaround.rows})
    with chart_style():
        figure, axes = plt.subplots(
            1, len(feature_counts), figsize=(4.2 * len(feature_counts), 3.4), sharey=True
        )
        axes = np.atleast_1d(axes)
        for ax, features in zip(axes, feature_counts, strict=True):
            rows = [row for row in turnaround.rows if row.features == features]
            sizes = [row.rows for row in rows]
            timed = [row for row in rows if row.loop_measured]
            (loop_line,) = ax.plot(
                [r.rows for r in timed], [r.loop_s for r in timed], "o-", label="Python loop"
            )
            guessed = timed[-1:] + [row for row in rows if not row.loop_measured]
            ax.plot(
                [r.rows for r in guessed],
                [r.loop_s for r in guessed],
                "--",
                color=loop_line.get_color(),
                label="loop, extrapolated",
            )
            ax.plot(sizes, [r.numpy_s for r in rows], "s-", label="numpy @")
            ax.plot(sizes, [r.batch_s for r in rows], "^-", label="score_batch")
            log_log_axes(ax, sizes, _short_count, y_base=100)
            ax.set_title(f"{features} features")
            ax.set_xlabel("rows in the batch")
        axes[0].set_ylabel("time per pass")
        axes[0].legend(loc="upper left", fontsize=9)
        return inline_svg(
            figure, "Seconds per scoring pass against batch size, measured on the build machine"
        )


def settings_sweep_chart(sweep: SettingsSweep) -> str:
    """Time against the number of settings, one panel per batch size: one by one and at once."""
    plt = pyplot()
    import numpy as np

    from .sweep import SettingsSweep
    from .timing import format_seconds

    check_measured("sweep", sweep, SettingsSweep, "measure_settings_sweep()")
    sizes = sorted({row.rows for row in sweep.rows})
    with chart_style():
        figure, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.4), sharey=True)
        axes = np.atleast_1d(axes)
        for ax, size in zip(axes, sizes, strict=True):
            rows = [row for row in sweep.rows if row.rows == size]
            counts = [row.settings for row in rows]
            ax.plot(counts, [r.one_by_one_s for r in rows], "o-", label="one by one (loop)")
            ax.plot(counts, [r.at_once_s for r in rows], "^-", label="at once (score_settings)")
            log_log_axes(ax, counts, "{:,}".format, y_base=10)
            ax.set_title(f"{size:,} rows, {rows[0].features} features")
            ax.set_xlabel("weight settings tried")
        axes[0].set_ylabel("time for all settings")
        axes[0].legend(loc="upper left", fontsize=9)
        return inline_svg(
            figure,
            "Seconds to score K weight settings one by one and at once, against K, measured on "
            "the build machine: "
            + "; ".join(
                f"{row.rows:,} rows, {row.settings:,} settings: "
                f"{format_seconds(row.one_by_one_s)} and {format_seconds(row.at_once_s)}"
                for row in sweep.rows
            ),
        )
