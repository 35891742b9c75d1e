"""The settings sweep: measured, tabled, charted, recorded and shown as recorded, never as live."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from examples import (
    latest_recorded_sweep,
    measure_settings_sweep,
    settings_sweep_chart,
    sweep_findings,
    sweep_markdown,
)
from examples.recorded import load_recorded_sweep, save_recorded_sweep
from examples.sweep import SWEEP_ROWS, SWEEP_SETTINGS, LayoutCheck, SettingsSweep, SweepRow
from testkit.project import MEASURED_PAGE, ROOT
from testkit.site import page


@pytest.fixture(scope="module")
def small_sweep() -> SettingsSweep:
    return measure_settings_sweep(rows=(4, 40), settings=(1, 3))


def test_the_page_sweeps_1_to_1000_settings_at_two_batch_sizes():
    assert SWEEP_SETTINGS == (1, 10, 100, 1_000)
    assert len(SWEEP_ROWS) == 2


def test_every_size_and_count_is_measured_in_order(small_sweep):
    assert [(r.rows, r.settings) for r in small_sweep.rows] == [(4, 1), (4, 3), (40, 1), (40, 3)]
    assert all(r.one_by_one_s > 0 and r.at_once_s > 0 for r in small_sweep.rows)
    assert (small_sweep.layout.rows, small_sweep.layout.settings) == (40, 3)
    assert small_sweep.program[0].startswith("dot_general float32[40,16] float32[3,16]")


def test_markdown_has_one_line_per_measurement(small_sweep):
    lines = sweep_markdown(small_sweep).splitlines()
    assert lines[0].startswith("| rows | features | settings | one by one")
    assert len(lines) == 2 + len(small_sweep.rows)
    assert lines[2].startswith("| 4 | 16 | 1 |")


def row(rows, settings, one_by_one_s, at_once_s):
    return SweepRow(rows, 16, settings, one_by_one_s, at_once_s)


SWEEP = SettingsSweep(
    rows=(row(4, 1, 1e-5, 1e-5), row(4, 1_000, 1e-2, 2e-5), row(4_000, 1, 3e-5, 6e-5)),
    layout=LayoutCheck(4_000, 1_000, numpy_s=2e-3, at_once_s=1e-3, settings_first_s=4e-3),
    program=("dot_general float32[4000,16] float32[1000,16] -> float32[4000,1000]",),
    settings_first_program=("dot_general a", "transpose b"),
    label="computed on cpu · label",
    cost_s=1.0,
)


def test_findings_follow_the_measurements():
    findings = sweep_findings(SWEEP)
    assert findings[0].startswith(
        "At 4 rows, trying 1,000 settings one by one took 10.0 ms, 10.0 µs a setting; all at "
        "once took 20.0 µs, 500\N{MULTIPLICATION SIGN} faster than the loop: 50,000,000 settings"
    )
    assert findings[0].endswith("was about as fast as one `score_batch` call (10.0 µs).")
    assert findings[1].startswith(
        "At 4,000 rows, with 1 setting there is no call to share, yet at once (60.0 µs) was "
        "2\N{MULTIPLICATION SIGN} slower than one `score_batch` call (30.0 µs): not from a "
        "shared call"
    )
    assert "became one matrix product" in findings[2]
    assert "With the settings axis first (`out_axes=0`): 2 operations" in findings[2]
    assert findings[3].startswith("There, `score_settings` ran at 200% of the rate of numpy's")
    assert findings[3].endswith(
        "putting the settings axis last was 4\N{MULTIPLICATION SIGN} faster than putting it first."
    )


def test_chart_is_an_inline_svg_with_a_title(small_sweep):
    pytest.importorskip("matplotlib")
    svg = settings_sweep_chart(small_sweep)
    assert svg.startswith('<svg role="img" aria-label="Seconds to score K weight settings')
    assert "4 rows, 3 settings:" in svg


def test_recording_round_trips_and_the_newest_wins(tmp_path):
    assert latest_recorded_sweep(tmp_path) is None
    for name, device, date in [
        ("settings-b", "Old", "2026-01-02"),
        ("settings-a", "New", "2026-03-04"),
    ]:
        save_recorded_sweep(tmp_path / f"{name}.json", SWEEP, device)
        data = json.loads((tmp_path / f"{name}.json").read_text())
        data["recorded_at"] = f"{date}T10:00:00+00:00"
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    assert load_recorded_sweep(tmp_path / "settings-a.json").sweep == SWEEP
    newest = latest_recorded_sweep(tmp_path)
    assert newest.device == "New"
    assert newest.caption().startswith("Recorded on New, 2026-03-04 (not live: measured once")


def test_the_page_shows_the_sweep_live_and_a_recording_only_as_recorded(built_site):
    heading = page(built_site, MEASURED_PAGE).find(id="many-weight-settings-at-once")
    assert heading is not None
    caption = heading.find_next("p", class_="measured-label")
    assert caption.get_text().startswith("Measured on")  # the runner's caption of a timed block
    live = heading.find_next("table")
    assert [th.get_text() for th in live.find_all("th")][:3] == ["rows", "features", "settings"]
    assert len(live.find_all("tr")) == 1 + len(SWEEP_ROWS) * len(SWEEP_SETTINGS)
    recorded = latest_recorded_sweep()
    after = live.find_next("h2").find_all_previous("em")
    texts = [em.get_text() for em in after]
    if recorded is None:
        assert "No GPU recording of this sweep exists yet" in " ".join(texts)
    else:
        assert recorded.caption() in texts


def test_python_m_examples_sweep_prints_the_table_and_the_recording_or_its_absence():
    run = subprocess.run(
        [sys.executable, "-m", "examples", "sweep"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "Measured on this machine: computed on" in run.stdout
    assert "| rows | features | settings |" in run.stdout
    assert "Measuring the whole sweep took" in run.stdout
    if latest_recorded_sweep() is None:
        assert "No GPU recording of this sweep ships with this package" in run.stdout
    else:
        assert "Recorded on " in run.stdout


def test_the_gpu_checks_command_records_a_sweep_the_page_can_read(tmp_path):
    # benchmarks/gpu_check.sh runs this on the GPU; here it runs on whatever JAX finds.
    target = tmp_path / "settings-gpu-test.json"
    subprocess.run(
        [sys.executable, "-m", "examples.recorded", "--sweep", str(target)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    recorded = latest_recorded_sweep(tmp_path)
    assert recorded.sweep.label.startswith("computed on ")
    assert [(r.rows, r.settings) for r in recorded.sweep.rows] == [
        (rows, count) for rows in SWEEP_ROWS for count in SWEEP_SETTINGS
    ]
