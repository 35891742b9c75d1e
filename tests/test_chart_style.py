"""Inline SVG charts: several on one page share no id, and carry nothing HTML forbids."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

pytest.importorskip("matplotlib")

from examples import chart_style as chart_style_module
from examples.chart_style import chart_style, inline_svg

_ID = re.compile(r' id="([^"]+)"')
_REFERENCE = re.compile(r'(?:url\(#|href="#)([^)"]+)')


def _chart(values: list[float], title: str) -> str:
    import matplotlib.pyplot as plt

    with chart_style():
        figure, axes = plt.subplots()
        axes.plot(values, marker="o", label="series")  # markers and clip paths: referenced ids
        axes.legend()
        return inline_svg(figure, title)


def test_two_charts_share_no_id_and_every_reference_resolves():
    first, second = _chart([1, 2, 3], "first"), _chart([3, 1, 2], "second")
    first_ids, second_ids = set(_ID.findall(first)), set(_ID.findall(second))
    assert first_ids and second_ids
    assert not first_ids & second_ids
    for svg, ids in ((first, first_ids), (second, second_ids)):
        references = set(_REFERENCE.findall(svg))
        assert references and references <= ids
        assert len(_ID.findall(svg)) == len(ids)  # no id twice inside one chart either


def test_same_chart_same_svg_and_no_rdf_metadata():
    svg = _chart([1, 2, 3], "first")
    assert svg == _chart([1, 2, 3], "first")  # stable: two builds write the same page
    assert "<metadata" not in svg and "rdf:" not in svg and "xmlns:dc" not in svg


def _drawn(svg: str) -> Counter:
    """Every element of ``svg`` but its groups, by tag and attributes."""
    return Counter(
        (element.tag, tuple(sorted(element.attrib.items())))
        for element in ET.fromstring(svg).iter()
        if not element.tag.endswith("}g")
    )


def test_charts_carry_no_bare_group_and_lose_nothing_drawn(monkeypatch):
    svg = _chart([1, 2, 3], "first")
    groups = [e for e in ET.fromstring(svg).iter() if e.tag.endswith("}g")]
    assert all(group.attrib for group in groups)  # a group without attributes only costs
    monkeypatch.setattr(chart_style_module, "_without_bare_groups", lambda svg: svg)
    as_drawn = _chart([1, 2, 3], "first")
    assert len(ET.fromstring(as_drawn).findall(".//{http://www.w3.org/2000/svg}g")) > len(groups)
    assert _drawn(svg) == _drawn(as_drawn)


def _drawing(browser, svg: str) -> tuple[list, bytes]:
    """Each shape's and text's computed stroke join and cap, and a screenshot, of ``svg`` alone
    on a page."""
    page = browser.new_page()
    page.set_content(f"<!doctype html><title>chart</title><body>{svg}</body>")
    strokes = page.evaluate(
        """() => [...document.querySelectorAll("svg :is(path, use, text, line, rect, circle)")]
          .map(element => {
            const style = getComputedStyle(element);
            return [element.tagName, style.strokeLinejoin, style.strokeLinecap];
          })"""
    )
    picture = page.locator("svg").screenshot()
    page.close()
    return strokes, picture


def test_charts_carry_no_stylesheet_and_draw_as_matplotlib_s_own(browser, monkeypatch):
    """matplotlib's ``<style>*{...}</style>`` would be a stylesheet for the whole page: its
    strokes go on the chart's root instead, and every element draws as before."""
    svg = _chart([1, 2, 3], "first")
    assert "<style" not in svg
    monkeypatch.setattr(chart_style_module, "_defaults_on_root", lambda svg: svg)
    as_drawn = _chart([1, 2, 3], "first")
    assert "<style" in as_drawn  # matplotlib's own form, to compare with
    strokes, picture = _drawing(browser, svg)
    assert {cap for _, _, cap in strokes} >= {"butt", "square"}  # defaults and shapes' own
    assert (strokes, picture) == _drawing(browser, as_drawn)
