"""Findings cannot contradict their own numbers: stand-in timings on both sides of every
boundary (faster, slower, within the 5% read as "about as fast", one setting) go through
``sweep_findings`` and ``turnaround_findings``, and each sentence is read back: the verdict it
states must follow from the times it prints, as printed."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from examples import sweep_findings, turnaround_findings
from examples.sweep import LayoutCheck, SettingsSweep, SweepRow
from examples.turnaround import Turnaround, TurnaroundRow

TIMES = "\N{MULTIPLICATION SIGN}"
TIME = r"(?:≈ )?\d[\d,.]* (?:ns|µs|ms|s)(?: \(extrapolated\))?"
VERDICT = rf"about as fast as|[\d,.]+{TIMES} (?:faster|slower) than"
NOISE = 1.05 * (1 + 1e-9)  # 5%, and floating point's error in a ratio of printed times
_SCALE = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}

# Ratios of two times around each boundary: clearly apart, just past 5%, just within, equal.
RATIOS = [0.5, 0.94, 0.951, 0.96, 1.0, 1.04, 1.049, 1.06, 2.0, 3.7]


def seconds(printed: str) -> float:
    number, unit = printed.replace("≈ ", "").replace(" (extrapolated)", "").split()
    return float(number.replace(",", "")) * _SCALE[unit]


def check_verdict(verdict: str, this_s: float, other_s: float) -> None:
    """``this`` was ``verdict`` ``other``: does it follow from the two times as printed?"""
    ratio = other_s / this_s
    if verdict == "about as fast as":
        assert 1 / NOISE <= ratio <= NOISE, (verdict, this_s, other_s)
        return
    said = float(verdict.split(TIMES)[0].replace(",", ""))
    if verdict.endswith("faster than"):
        assert ratio > NOISE, (verdict, this_s, other_s)
    else:
        assert ratio < 1 / NOISE, (verdict, this_s, other_s)
        ratio = 1 / ratio
    # the factor printed is the ratio of the times printed, to its two printed digits
    assert said == pytest.approx(ratio, rel=0.06, abs=0.051), (verdict, this_s, other_s)


def check_faster(this_s: float, other_s: float) -> None:
    """``this`` is said to have been faster (beat ``other``), by more than the 5% of noise."""
    assert other_s / this_s > NOISE, (this_s, other_s)


def check_sweep_sentence(sentence: str) -> None:
    loop = re.search(rf"one by one took ({TIME}),", sentence)
    at_once = re.search(rf"all at once took ({TIME}), ({VERDICT}) the loop", sentence)
    if loop:
        assert at_once, sentence
        check_verdict(at_once[2], seconds(at_once[1]), seconds(loop[1]))
    one = re.search(
        rf"no call to share, (and|yet) at once \(({TIME})\) was ({VERDICT}) one `score_batch` "
        rf"call \(({TIME})\)",
        sentence,
    )
    if "no call to share" in sentence:
        assert one, sentence
        check_verdict(one[3], seconds(one[2]), seconds(one[4]))
        assert (one[1] == "and") == (one[3] == "about as fast as"), sentence
    shares = re.search(
        rf"ran at ([\d.e+-]+)% of the rate .* at ([\d.e+-]+)%: "
        rf".* axis last was ({VERDICT}) putting",
        sentence,
    )
    if "settings-first variant" in sentence:
        assert shares, sentence
        # a share of numpy's rate is the inverse of a time: last's time over first's
        check_verdict(shares[3], 1 / float(shares[1]), 1 / float(shares[2]))


def sweep_of(loop_1, once_1, loop_k, once_k, count_k, last_s, first_s) -> SettingsSweep:
    rows = [SweepRow(4, 16, 1, loop_1, once_1)]
    if count_k:
        rows.append(SweepRow(4, 16, count_k, loop_k, once_k))
    return SettingsSweep(
        rows=tuple(rows),
        layout=LayoutCheck(
            4, count_k or 1, numpy_s=1e-3, at_once_s=last_s, settings_first_s=first_s
        ),
        program=("dot_general f32[4,16] f32[1,16] -> f32[4,1]",),
        settings_first_program=("dot_general a",),
        label="stand-in",
        cost_s=1.0,
    )


@pytest.mark.parametrize("ratio", RATIOS)
@pytest.mark.parametrize("base", [445e-6, 999.5e-6, 1.0049e-3, 12.34e-9])
def test_the_one_setting_sentence_follows_its_numbers(ratio, base):
    for sweep in (
        sweep_of(base * ratio, base, 1e-2, 2e-5, 100, 1e-3, 2e-3),  # 1 and 100 settings
        sweep_of(base * ratio, base, 0, 0, 0, 1e-3, 2e-3),  # 1 setting only
    ):
        findings = sweep_findings(sweep)
        assert "no call to share" in findings[0]
        for sentence in findings:
            check_sweep_sentence(sentence)


def test_only_one_setting_is_said_to_share_no_call():
    sweep = sweep_of(1e-4, 1e-4, 1e-2, 2e-5, 100, 1e-3, 2e-3)
    sweep = SettingsSweep(
        rows=(SweepRow(4, 16, 10, 1e-3, 1e-4), SweepRow(4, 16, 100, 1e-2, 2e-4)),
        **{k: getattr(sweep, k) for k in ("layout", "program", "settings_first_program")},
        label="stand-in",
        cost_s=1.0,
    )
    assert "no call to share" not in sweep_findings(sweep)[0]
    assert "With 10 setting " not in sweep_findings(sweep)[0]


@settings(max_examples=200, deadline=None)
@given(
    base=st.floats(1e-8, 10.0),
    ratios=st.lists(
        st.one_of(st.sampled_from(RATIOS), st.floats(0.01, 100.0)), min_size=5, max_size=5
    ),
    count=st.sampled_from([0, 2, 10, 1_000]),
)
def test_every_sweep_sentence_follows_its_numbers(base, ratios, count):
    r1, r2, r3, r4, r5 = ratios
    sweep = sweep_of(base * r1, base, base * r2 * 10, base * r3, count, base * r4, base * r5)
    for sentence in sweep_findings(sweep):
        check_sweep_sentence(sentence)


def turnaround_row(rows, loop_s, numpy_s, batch_s, measured=True, first_call_s=None):
    first_call_s = batch_s + 0.05 if first_call_s is None else first_call_s
    return TurnaroundRow(rows, 3, loop_s, measured, numpy_s, batch_s, first_call_s)


def check_turnaround(turnaround: Turnaround) -> None:
    by_rows = {row.rows: row for row in turnaround.rows}
    for sentence in turnaround_findings(turnaround):
        if sentence.startswith("The Python loop beat"):
            won = re.search(
                rf"at ([\d,]+) rows the loop took ({TIME}) and `score_batch` ({TIME})", sentence
            )
            assert won, sentence
            check_faster(seconds(won[2]), seconds(won[3]))
            assert f"at {won[1]} rows of 3 features" in sentence.split(":")[0]  # a size it names
        elif sentence.startswith("`score_batch` beat the Python loop at every size"):
            for row in turnaround.rows:  # at every size, as printed
                check_faster(seconds(fmt(row.batch_s)), seconds(fmt(row.loop_s)))
        elif sentence.startswith("The Python loop was about as fast as"):
            tie = re.search(rf"\(({TIME}) against ({TIME}) at ([\d,]+) rows\)", sentence)
            assert tie, sentence
            check_verdict("about as fast as", seconds(tie[1]), seconds(tie[2]))
        elif sentence.startswith("numpy's `@` was faster"):
            won = re.search(
                rf"at (\d+) of (\d+) sizes\. At ([\d,]+) rows of 3 features: ({TIME}) for numpy "
                rf"against ({TIME})",
                sentence,
            )
            assert won, sentence
            check_faster(seconds(won[4]), seconds(won[5]))
            row = by_rows[int(won[3].replace(",", ""))]
            assert (fmt(row.numpy_s), fmt(row.batch_s)) == (won[4], won[5])
        else:
            assert "compil" in sentence, sentence


def fmt(seconds_: float) -> str:
    from examples.timing import format_seconds

    return format_seconds(seconds_)


@pytest.mark.parametrize("ratio", RATIOS)
def test_the_turnaround_sentences_follow_their_numbers_at_each_boundary(ratio):
    # the loop against score_batch at 4 rows, numpy against it at 400 rows
    rows = (
        turnaround_row(4, 1e-5 * ratio, 1e-4, 1e-5),
        turnaround_row(400, 1e-3, 2e-5 * ratio, 2e-5),
    )
    check_turnaround(Turnaround(rows, "stand-in", 1.0))


def test_a_win_quotes_the_numbers_of_a_size_that_won():
    # score_batch wins at 4 rows; the loop only at 400 (the old sentence quoted 4 rows)
    rows = (turnaround_row(4, 1e-4, 1e-4, 1e-5), turnaround_row(400, 1e-6, 1e-6, 1e-5))
    findings = turnaround_findings(Turnaround(rows, "stand-in", 1.0))
    assert findings[0].startswith("The Python loop beat `score_batch` at 400 rows of 3 features:")
    assert "at 400 rows the loop took 1.00 µs and `score_batch` 10.0 µs" in findings[0]
    assert "At 400 rows of 3 features: 1.00 µs for numpy against 10.0 µs" in findings[1]


def test_a_compile_cost_that_noise_makes_negative_is_not_printed_as_a_time():
    rows = (turnaround_row(4, 1e-4, 1e-4, 1e-3, first_call_s=5e-4),)
    assert "could be measured" in turnaround_findings(Turnaround(rows, "stand-in", 1.0))[-1]


@settings(max_examples=200, deadline=None)
@given(
    base=st.floats(1e-8, 1.0),
    ratios=st.lists(
        st.one_of(st.sampled_from(RATIOS), st.floats(0.01, 100.0)), min_size=6, max_size=6
    ),
)
def test_every_turnaround_sentence_follows_its_numbers(base, ratios):
    r = ratios
    rows = (
        turnaround_row(4, base * r[0], base * r[1], base),
        turnaround_row(400, base * r[2], base * r[3], base * r[4], measured=r[5] > 1),
    )
    check_turnaround(Turnaround(rows, "stand-in", 1.0))
