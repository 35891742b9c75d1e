"""hooks/execution.py: every executed block and notebook is timed, logged and published."""

from __future__ import annotations

import re

from examples import backend_report
from testkit.project import EXEC_FENCE, FENCE, ROOT, SECTION_PAGE
from testkit.site import page


def report_rows(site) -> list[dict[str, str]]:
    table = page(site, "build-report").select_one("table.build-report")
    header = [th.get_text() for th in table.select("thead th")]
    return [
        dict(zip(header, (td.get_text() for td in row("td")), strict=True))
        for row in table.select("tbody tr")
    ]


def test_the_report_lists_every_executed_block_of_the_section_page(built_site):
    block_ids = EXEC_FENCE.findall((ROOT / "docs" / f"{SECTION_PAGE}.md").read_text())
    assert len(block_ids) >= 3
    rows = [row for row in report_rows(built_site) if row["Page"] == f"{SECTION_PAGE}.md"]
    assert [row["Block id"] for row in rows] == block_ids
    for row in rows:
        assert float(row["Seconds"]) >= 0
        assert row["Ran on"].startswith("computed on ")
        # The tests' builds run fresh, as CI's and make publish's do: nothing is reused.
        assert (row["Outcome"], row["Why it ran"]) == ("ran", "FRESH=1")


def test_every_exec_block_has_an_id_and_is_reported_once(built_site):
    fences = re.findall(FENCE + "$", _all_markdown(), re.MULTILINE)
    assert all(' id="' in fence for fence in fences), fences
    ids = [row["Block id"] for row in report_rows(built_site)]
    assert len(ids) == len(set(ids)) == len(fences) + len(list(_notebooks()))


def test_the_report_lists_the_notebook_with_the_backend_its_kernel_printed(built_site):
    rows = {row["Block id"]: row for row in report_rows(built_site)}
    for notebook in _notebooks():
        row = rows[f"notebooks/{notebook.name}"]
        assert row["Ran on"] == backend_report().label()
        assert float(row["Seconds"]) > 0


def test_the_build_log_ends_with_the_summary(built_site, build_log):
    rows = report_rows(built_site)
    assert f"Executed {SECTION_PAGE}.md p5-9-1-practice-jax:" in build_log
    blocks = sum(not row["Page"].startswith("notebooks/") for row in rows)
    summary = re.search(
        r"Execution report: (\d+) blocks and (\d+) notebooks?: (\d+) ran, (\d+) reused; "
        r"executed in ([\d.]+) s",
        build_log,
    )
    assert summary is not None, build_log
    assert int(summary[1]) == blocks
    assert int(summary[2]) == len(rows) - blocks
    assert int(summary[3]) == sum(row["Outcome"] == "ran" for row in rows)
    assert int(summary[4]) == sum(row["Outcome"] == "reused" for row in rows)
    shown = sum(float(row["Seconds"]) for row in rows)
    assert abs(float(summary[5]) - shown) < 0.01 * len(rows) + 0.01


def _all_markdown() -> str:
    return "\n".join(path.read_text() for path in sorted((ROOT / "docs").rglob("*.md")))


def _notebooks():
    """Every section's notebooks, of every format (jupytext, .ipynb, MyST)."""
    from build_support import section

    found = [page for one in section.sections() for page in section.notebooks_of(one)]
    return sorted(ROOT / "docs" / page for page in found)
