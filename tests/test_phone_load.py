"""What keeps the section page light to load on a phone (issue 22; benchmarks/main_thread.py
and benchmarks/lighthouse.py measure it): its charts carry no group that only costs, and the
heavy blocks below the fold are skipped until a reader nears them, yet print whole."""

from __future__ import annotations

from testkit.project import ROOT, SECTION_PAGE
from testkit.site import page

STYLESHEET = ROOT / "docs" / "assets" / "stylesheets" / "course.css"


def test_charts_carry_no_group_without_attributes(built_site):
    charts = page(built_site, SECTION_PAGE).select("svg.course-chart")
    assert len(charts) >= 4
    for chart in charts:
        groups = chart.find_all("g")
        assert all(group.attrs for group in groups), "an attribute-less <g> in a chart"


def test_blocks_skipped_below_the_fold_are_the_page_s_heavy_ones_and_print(built_site):
    """content-visibility: auto on the charts' blocks, the diagram and the tables; each of
    those selectors matches on the page, and print turns it off."""
    css = STYLESHEET.read_text()
    screen, printed = css.split("@media print", 1)
    section = page(built_site, SECTION_PAGE)
    for selector in (
        ".md-typeset .exec-block:has(> svg.course-chart:only-child)",
        ".md-typeset .course-diagram",
        ".md-typeset__scrollwrap",
    ):
        assert selector in screen.split("content-visibility: auto")[0], selector
    assert section.select(".exec-block > svg.course-chart:only-child")
    assert section.select(".course-diagram")
    assert section.select("table")  # Material wraps each in .md-typeset__scrollwrap
    assert "content-visibility: visible" in printed
    assert "pre > code" not in screen.split("content-visibility: auto")[0].rsplit("*/", 1)[-1]
