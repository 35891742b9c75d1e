"""GPU recordings: saved and loaded intact, the committed one is a GPU's, the page shows it."""

from __future__ import annotations

import datetime
import json

from examples import (
    RecordedTurnaround,
    compare_with_recorded,
    latest_recorded,
    load_recorded,
    turnaround_markdown,
)
from examples.recorded import RECORDED_DIR, save_recorded
from examples.turnaround import Turnaround, TurnaroundRow
from testkit.project import MEASURED_PAGE
from testkit.site import page


def row(features, rows, batch_s):
    return TurnaroundRow(rows, features, 1e-3, True, 1e-4, batch_s, first_call_s=0.05)


TABLE = Turnaround(
    (row(3, 4, 1e-5), row(3, 4_000, 2e-5), row(3, 4_000_000, 2e-3), row(16, 4, 1e-5)),
    "computed on cpu · label",
    1.5,
)


def test_save_then_load_gives_back_the_same_table(tmp_path):
    saved = save_recorded(tmp_path / "gpu-a.json", TABLE, "Some GPU")
    loaded = load_recorded(tmp_path / "gpu-a.json")
    assert loaded.turnaround == TABLE  # floats survive JSON exactly
    assert loaded.device == "Some GPU"
    assert loaded.recorded_at == saved.recorded_at.replace(microsecond=0)
    assert loaded.recorded_at.tzinfo is not None


def test_latest_is_the_newest_recording_and_none_without_any(tmp_path):
    assert latest_recorded(tmp_path) is None
    for name, device, date in [
        ("gpu-b", "Old GPU", "2026-01-02"),
        ("gpu-a", "New GPU", "2026-03-04"),
    ]:
        save_recorded(tmp_path / f"{name}.json", TABLE, device)
        data = json.loads((tmp_path / f"{name}.json").read_text())
        data["recorded_at"] = f"{date}T10:00:00+00:00"
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    assert latest_recorded(tmp_path).device == "New GPU"  # by date, not by file name


def test_comparison_takes_the_smallest_and_largest_size_both_tables_have():
    there = RecordedTurnaround(
        Turnaround((row(3, 4, 5e-5), row(3, 4_000, 1e-5), row(3, 4_000_000, 1e-4)), "gpu", 1.0),
        "Test GPU",
        datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
    )
    assert compare_with_recorded(TABLE, there) == [
        "At 4 rows of 3 features, `score_batch` took 50.0 µs on the Test GPU and 10.0 µs on the "
        "build machine: 5.0\N{MULTIPLICATION SIGN} slower there.",
        "At 4,000,000 rows of 3 features, `score_batch` took 100 µs on the Test GPU and 2.00 ms on "
        "the build machine: 20\N{MULTIPLICATION SIGN} faster there.",
    ]  # 16 features: not in the recording, so not compared


def test_the_committed_recording_was_made_on_a_gpu():
    recorded = latest_recorded()
    assert recorded is not None, f"no gpu-*.json in {RECORDED_DIR}"
    assert recorded.turnaround.label.startswith("computed on gpu ·"), recorded.turnaround.label
    assert recorded.device != "cpu"
    stamp = f"gpu-{recorded.recorded_at:%Y%m%d}T"
    logs = [path for path in RECORDED_DIR.iterdir() if path.name.startswith(stamp)]
    text_log = next(path for path in logs if path.name.endswith(".txt"))
    assert "# done: every step passed" in text_log.read_text()


def test_page_shows_the_recording_as_recorded_never_as_live(built_site):
    recorded = latest_recorded()
    section = page(built_site, MEASURED_PAGE)
    heading = section.find(id="the-same-table-recorded-on-a-gpu")
    caption = heading.find_next("em")
    assert caption.get_text() == recorded.caption()
    assert caption.get_text().startswith(
        f"Recorded on {recorded.device}, {recorded.recorded_at:%Y-%m-%d} (not live"
    )
    table = heading.find_next("table")
    cells = [[cell.get_text() for cell in tr.find_all(["td", "th"])] for tr in table.find_all("tr")]
    expected = [
        [cell.strip().replace("`", "").replace("*", "") for cell in line.strip("|").split("|")]
        for line in turnaround_markdown(recorded.turnaround).splitlines()
        if not line.startswith("| ---")
    ]
    assert cells == expected
