"""The turnaround table: what is measured, what is extrapolated, and how it is printed."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from examples import (
    backend_report,
    machine_label,
    measure_turnaround,
    turnaround_chart,
    turnaround_findings,
    turnaround_markdown,
)
from examples.backend import cpu_model
from examples.timing import format_seconds, median_seconds
from examples.turnaround import TURNAROUND_SIZES, Turnaround, TurnaroundRow

SMALL = {3: (4, 40, 400), 8: (4, 40)}


@pytest.fixture(scope="module")
def small_turnaround() -> Turnaround:
    # A budget so small that only the smallest size of each feature count is timed.
    return measure_turnaround(SMALL, loop_budget_s=1e-9)


def test_the_page_measures_4_rows_to_at_least_a_million_and_a_wider_row():
    assert min(TURNAROUND_SIZES[3]) == 4
    assert max(TURNAROUND_SIZES[3]) >= 1_000_000
    assert any(features > 3 for features in TURNAROUND_SIZES)


def test_every_size_is_measured_in_order(small_turnaround):
    assert [(row.features, row.rows) for row in small_turnaround.rows] == [
        (3, 4),
        (3, 40),
        (3, 400),
        (8, 4),
        (8, 40),
    ]
    for row in small_turnaround.rows:
        assert row.numpy_s > 0 and row.batch_s > 0
        assert row.first_call_s > 0
    assert small_turnaround.cost_s > 0


def test_loop_beyond_the_budget_is_extrapolated_linearly(small_turnaround):
    by_size = {(row.features, row.rows): row for row in small_turnaround.rows}
    for features, sizes in SMALL.items():
        timed = by_size[features, sizes[0]]
        assert timed.loop_measured
        for rows in sizes[1:]:
            guessed = by_size[features, rows]
            assert not guessed.loop_measured
            assert guessed.loop_s == pytest.approx(timed.loop_s / timed.rows * rows)


def test_loop_within_the_budget_is_timed():
    turnaround = measure_turnaround({3: (4, 8)}, loop_budget_s=10.0)
    assert all(row.loop_measured for row in turnaround.rows)


def test_markdown_table_marks_extrapolated_cells(small_turnaround):
    lines = turnaround_markdown(small_turnaround).splitlines()
    assert lines[0] == (
        "| rows | features | Python loop | numpy `@` | `score_batch` "
        "| speed-up over the loop | speed-up over numpy |"
    )
    body = lines[2:]
    assert len(body) == len(small_turnaround.rows)
    for line, row in zip(body, small_turnaround.rows, strict=True):
        assert line.startswith(f"| {row.rows:,} | {row.features} |")
        assert ("*(extrapolated)*" in line) == (not row.loop_measured)
        assert line.count("\N{MULTIPLICATION SIGN}") == 2


def test_findings_name_the_measured_sizes(small_turnaround):
    findings = turnaround_findings(small_turnaround)
    assert findings[-1].startswith("Every new batch shape compiled `score_batch` again")
    assert any("Python loop" in finding for finding in findings)


def test_findings_follow_the_measurements():
    def row(rows, loop_s, numpy_s, batch_s):
        return TurnaroundRow(rows, 3, loop_s, True, numpy_s, batch_s, first_call_s=batch_s + 0.05)

    slow_jax = Turnaround((row(4, 1e-6, 1e-6, 1e-5), row(400, 1e-4, 2e-6, 1e-5)), "label", 1.0)
    findings = turnaround_findings(slow_jax)
    assert findings[0].startswith("The Python loop beat `score_batch` at 4 rows of 3 features:")
    assert findings[1].startswith("numpy's `@` was faster than `score_batch` at 2 of 2 sizes.")
    fast_jax = Turnaround((row(4, 1e-4, 1e-4, 1e-5),), "label", 1.0)
    assert turnaround_findings(fast_jax)[0].startswith("`score_batch` beat the Python loop")


def test_label_names_backend_devices_jax_and_cpu():
    label = machine_label()
    assert label.startswith(backend_report().label())
    assert cpu_model() in label


def test_chart_is_an_inline_svg_with_a_title(small_turnaround):
    svg = turnaround_chart(small_turnaround)
    assert svg.startswith('<svg role="img" aria-label="Seconds per scoring pass')
    assert "3 features" in svg and "8 features" in svg


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (12.3e-6, "12.3 µs"),
        (0.5, "500 ms"),
        (7.25, "7.25 s"),
        (4200, "4,200 s"),
        (3e-9, "3.00 ns"),
        (0, "0 s"),
        # just under a unit boundary: rounding carries into the next unit
        (0.99996, "1.00 s"),
        (999.96e-3, "1.00 s"),
        (999.96e-6, "1.00 ms"),
        (999.96e-9, "1.00 µs"),
        (9.9996e-3, "10.0 ms"),
        (99.996e-6, "100 µs"),
        (0.9994, "999 ms"),
        (999.4, "999 s"),
        (999.96, "1,000 s"),
        (5e-13, "0.000500 ns"),
    ],
)
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


@pytest.mark.parametrize("seconds", [-1.0, math.nan, math.inf])
def test_format_seconds_refuses_what_is_not_a_duration(seconds):
    with pytest.raises(ValueError, match="finite number >= 0"):
        format_seconds(seconds)


_SCALE = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
_PRINTED = re.compile(r"(?P<number>\d{1,3}(?:,\d{3})*(?:\.\d+)?) (?P<unit>ns|µs|ms|s)")


@given(st.floats(min_value=1e-15, max_value=1e7, allow_nan=False, allow_infinity=False))
def test_format_seconds_prints_three_digits_and_a_unit(seconds):
    text = format_seconds(seconds)
    printed = _PRINTED.fullmatch(text)
    assert printed, text  # a plain number and a unit: never "1e+03"
    number = float(printed["number"].replace(",", ""))
    value = number * _SCALE[printed["unit"]]
    if value >= 1000:  # whole seconds from 1,000 s up
        assert printed["unit"] == "s" and "." not in text
        assert abs(value - seconds) <= 0.5
    else:
        digits = printed["number"].replace(".", "").lstrip("0")
        assert len(digits) == 3, text
        assert abs(value - seconds) <= 0.005 * seconds
        # the unit that fits: 1 to 999 of it (below a nanosecond, nanoseconds)
        assert number < 1000 and (number >= 1 or printed["unit"] == "ns"), text


def test_median_seconds_groups_short_calls_and_stops_long_ones():
    calls = []
    median_seconds(lambda: calls.append(1), repeats=3, min_batch_s=1e-3)
    assert len(calls) > 4  # short calls are timed in groups
    calls.clear()
    median_seconds(lambda: calls.append(1), repeats=3, budget_s=0.0)
    assert len(calls) == 1  # a first call past the budget is the measurement


def test_cpu_model_is_a_name():
    assert re.search(r"\w", cpu_model())
