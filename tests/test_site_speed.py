"""The page's live sections: the turnaround table and score_sharded on the build's devices
(and across processes, as recorded)."""

from __future__ import annotations

import re

import jax

from examples import machine_label
from examples.multiprocess import latest_multiprocess_recording
from examples.turnaround import TURNAROUND_SIZES
from testkit.project import MEASURED_PAGE, SECTION_PAGE
from testkit.site import page


def section_after(soup, heading_id: str) -> list:
    """The elements between the heading with ``heading_id`` and the next h2 or h3."""
    heading = soup.find(id=heading_id)
    assert heading is not None, f"no heading #{heading_id}"
    elements = []
    for element in heading.find_next_siblings():
        if element.name in ("h2", "h3"):
            break
        elements.append(element)
    return elements


def test_the_measured_sections_have_their_own_page_which_the_practice_links(built_site):
    headings = [h.get("id") for h in page(built_site, MEASURED_PAGE).select("h2")]
    assert headings == [
        "experiment-turnaround-measured-on-the-build-machine",
        "the-same-batch-across-every-device",
    ]
    section = page(built_site, SECTION_PAGE)
    assert not section.find(id="experiment-turnaround-measured-on-the-build-machine")
    practice = section_after(section, "practice-and-example")
    assert any(
        link["href"].startswith(f"../{MEASURED_PAGE}/")
        for element in practice
        for link in element.find_all("a", href=True)
    ), "the practice points to the measured page"


def test_turnaround_table_has_every_size_and_its_label(built_site):
    section = section_after(
        page(built_site, MEASURED_PAGE), "experiment-turnaround-measured-on-the-build-machine"
    )
    text = "\n".join(element.get_text() for element in section)
    assert f"Measured on this build: {machine_label()}" in text
    tables = [table for element in section for table in element.find_all("table", recursive=True)]
    tables += [element for element in section if element.name == "table"]
    assert len(tables) == 1
    rows = [[cell.get_text() for cell in tr.select("td")] for tr in tables[0].select("tbody tr")]
    expected = [(n, f) for f, sizes in TURNAROUND_SIZES.items() for n in sorted(sizes)]
    assert [(int(r[0].replace(",", "")), int(r[1])) for r in rows] == expected
    assert any("(extrapolated)" in r[2] for r in rows)  # a million rows is never looped here
    assert all(re.fullmatch(r"[\d.,]+ (ns|µs|ms|s)", r[3]) for r in rows)


def test_the_gpu_recording_follows_the_live_table_under_its_own_heading(built_site):
    headings = [(h.name, h.get("id")) for h in page(built_site, MEASURED_PAGE).select("h2, h3")]
    position = headings.index(("h2", "experiment-turnaround-measured-on-the-build-machine"))
    assert headings[position + 1] == ("h3", "the-same-table-recorded-on-a-gpu")


def test_turnaround_chart_and_findings(built_site):
    section = section_after(
        page(built_site, MEASURED_PAGE), "experiment-turnaround-measured-on-the-build-machine"
    )
    html = "".join(str(element) for element in section)
    assert 'class="course-chart"' in html and "<svg" in html
    text = "\n".join(element.get_text() for element in section)
    assert "Every new batch shape compiled score_batch again" in text
    cost = re.search(r"Measuring the whole table took ([\d.]+) s", text)
    assert cost is not None


def test_score_sharded_runs_on_the_builds_devices(built_site):
    section = section_after(page(built_site, MEASURED_PAGE), "the-same-batch-across-every-device")
    outputs = [code.get_text() for element in section for code in element.select("div.highlight")]
    output = next(text for text in outputs if text.startswith("devices ="))
    assert f"devices = {jax.devices()}" in output
    assert "scores_sharded = [0.2, 1.19, 0.35, 1.3]" in output
    assert output.count(" holds rows ") == len(jax.devices())


def test_score_sharded_across_processes_is_shown_as_recorded(built_site):
    recording = latest_multiprocess_recording()
    section = section_after(page(built_site, MEASURED_PAGE), "the-same-batch-across-every-device")
    outputs = [code.get_text() for element in section for code in element.select("div.highlight")]
    output = next(text for text in outputs if text.startswith("Recorded "))
    assert output.strip() == "\n\n".join([recording.caption(), "\n".join(recording.lines())])
    assert "not live" in output and recording.command in output
    devices = recording.processes * recording.devices_per_process
    assert output.count(" holds rows ") == devices
