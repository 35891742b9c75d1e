"""Output drift between versions: ``make publish`` names every output that changed since the
previous version on gh-pages (build_support/publishing/record.py), and the new Build report
lists them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bs4 import BeautifulSoup

from build_support.publishing.record import RECORD_FILE, Output, compare
from build_support.publishing.release import release
from testkit.author import publish_as, publish_copy, run_in
from testkit.project import MEASURED_PAGE, ROOT, SECTION_PAGE

PAGE = f"{SECTION_PAGE}.md"
MEASURED = f"{MEASURED_PAGE}.md"  # the turnaround table's page
FIRST = release(ROOT)  # the release make publish deploys first
NEXT = f"{FIRST.rsplit('.', 1)[0]}.{int(FIRST.rsplit('.', 1)[1]) + 1}"  # the next, the same day


def _output(block: str, digest: str, expected: bool = False) -> Output:
    return Output(PAGE, block, digest, expected)


def test_compare_sets_expected_changes_apart():
    before = [_output("a", "1"), _output("b", "1"), _output("t", "1", True), _output("gone", "1")]
    after = [_output("a", "1"), _output("b", "2"), _output("t", "2", True), _output("new", "1")]
    drift = compare(before, after, "v1")
    assert [o.block_id for o in drift.changed] == ["b"]
    assert [o.block_id for o in drift.expected] == ["t"]
    assert [o.block_id for o in drift.added] == ["new"]
    assert [o.block_id for o in drift.removed] == ["gone"]
    assert drift.lines()[0] == f"changed since v1: {PAGE} b"
    assert f"changed since v1 (expected: timings): {PAGE} t" in drift.lines()


def test_nothing_to_compare_with_says_so():
    assert compare([], [_output("a", "1")], None).lines() == [
        "no previous version on gh-pages to compare with"
    ]


def _show(repo: Path, path: str) -> str:
    return subprocess.run(
        ["git", "show", f"gh-pages:{path}"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def test_a_changed_printed_output_is_named_by_the_next_publish(tmp_path: Path):
    """NumPy 2's scalar repr, as it changed the manuscript's listing: a silent change in a printed
    output becomes a named one."""
    published_repo = publish_copy(tmp_path)  # its own throw-away repository: it publishes twice
    first = json.loads(_show(published_repo, f"{FIRST}/{RECORD_FILE}"))
    assert first["version"] == FIRST
    ids = {output["block_id"] for output in first["outputs"]}
    assert {"p5-9-1-practice-numpy", "notebooks/p5-9-1-practice-in-jax.py"} <= ids
    timed = {o["block_id"] for o in first["outputs"] if o["expected_to_change"]}
    assert "p5-9-1-turnaround-table" in timed and "p5-9-1-practice-numpy" not in timed

    page = published_repo / "docs" / PAGE
    publish_as(published_repo, NEXT, page, "v2026.08.01")
    listing = published_repo / "docs/snippets" / SECTION_PAGE / "practice_numpy.py"
    text = listing.read_text(encoding="utf-8")
    assert "round(float(score), 3)" in text
    listing.write_text(text.replace("round(float(score), 3)", "round(score, 3)"), encoding="utf-8")
    run_in(published_repo, "git", "commit", "-qam", "the listing as printed")
    # -o: the copy shares the checkout's .venv; the moved release must not re-sync it from here
    set_up = ("-o", ".venv/.synced", "-o", "node_modules/.installed")
    published = run_in(published_repo, "make", *set_up, "publish").stdout

    assert f"changed since {FIRST}: {PAGE} p5-9-1-practice-numpy" in published
    changed = [line for line in published.splitlines() if line.startswith("changed since")]
    plain = [line for line in changed if "(expected: timings)" not in line]
    assert plain == [f"changed since {FIRST}: {PAGE} p5-9-1-practice-numpy"]
    assert f"changed since {FIRST} (expected: timings): {MEASURED} p5-9-1-turnaround-table" in (
        published
    )

    report = BeautifulSoup(_show(published_repo, f"{NEXT}/build-report/index.html"), "html.parser")
    assert f"Outputs changed since {FIRST}" in report.get_text()
    changed_items = [li.get_text() for li in report.select(".drift-changed li")]
    assert changed_items == [f"{PAGE} p5-9-1-practice-numpy"]
    expected_items = [li.get_text() for li in report.select(".drift-expected li")]
    assert f"{MEASURED} p5-9-1-turnaround-table" in expected_items
