"""Printing the section, or saving it as PDF: chromium prints it (print media, A4), poppler
reads the PDF back. The pages must hold the text, the diagram, the charts, the code of both
tabs each with its output and every table, with no navigation and nothing cut at the edge.

The PDF and a PNG of every page are kept in ``test-artifacts/`` to look at.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from testkit.project import ARTIFACTS, GOLDEN, SECTION_PAGE
from testkit.serving import LOCAL_HOST, serve

SCHEMES = ("light", "dark")
A4_WIDTH_MM = 210
PAGE_MARGIN_MM = 15  # course.css, print rules: @page { margin: 1.5cm }
RESOLUTION_DPI = 40

# The flowchart, drawn by mermaid at build time (hooks/mermaid_svg.py), is in the page as SVG.
DIAGRAMS_DRAWN = """
() => document.querySelectorAll(".course-diagram > svg").length > 0
"""
# Navigation and buttons hidden in print (Material's print styles and course.css's print rules);
# checked in the print layout itself.
CHROME = ".md-header, .md-tabs, .md-sidebar, .md-footer, .md-search, .md-top, .md-code__nav"
VISIBLE_CHROME = f"""
() => [...document.querySelectorAll("{CHROME}")]
  .filter((element) => element.getClientRects().length > 0)
  .map((element) => element.className)
"""


def _squeezed(text: str) -> str:
    """``text`` without any whitespace: a line wrapped in print still matches its source."""
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module", params=SCHEMES)
def printed(request, browser, built_site: Path) -> dict:
    """The section page printed to PDF under one colour scheme: its text, pages and the HTML."""
    scheme = request.param
    ARTIFACTS.mkdir(exist_ok=True)
    pdf = ARTIFACTS / f"section-print-{scheme}.pdf"
    other_hosts = []
    with serve(built_site) as base:
        context = browser.new_context(color_scheme=scheme)

        def route(route):
            if route.request.url.startswith(f"http://{LOCAL_HOST}"):
                route.continue_()
            else:
                other_hosts.append(route.request.url)
                route.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.goto(f"{base}{SECTION_PAGE}/", wait_until="networkidle")
        page.wait_for_function(DIAGRAMS_DRAWN, timeout=20_000)
        page.evaluate("document.fonts.ready")
        page.emulate_media(media="print")
        visible_chrome = page.evaluate(VISIBLE_CHROME)
        page.pdf(path=str(pdf), format="A4")
        context.close()
    # -layout: the physical layout, so a wrapped line keeps its order and its hyphen (the default
    # mode moves a trailing comment to a column of its own and drops a hyphen at a line end).
    text = subprocess.run(
        ["pdftotext", "-layout", "-enc", "UTF-8", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pages = text.count("\f")
    stem = ARTIFACTS / f"section-print-{scheme}"
    for old in ARTIFACTS.glob(f"{stem.name}-*.p?m"):
        old.unlink()
    subprocess.run(
        ["pdftoppm", "-r", str(RESOLUTION_DPI), "-gray", str(pdf), str(stem)], check=True
    )
    images = sorted(ARTIFACTS.glob(f"{stem.name}-*.pgm"))
    html = (built_site / SECTION_PAGE / "index.html").read_text()
    return {
        "scheme": scheme,
        "text": text,
        "squeezed": _squeezed(text),
        "pages": pages,
        "images": images,
        "article": BeautifulSoup(html, "html.parser").select_one("article"),
        "soup": BeautifulSoup(html, "html.parser"),
        "visible_chrome": visible_chrome,
        "other_hosts": other_hosts,
    }


def test_the_pdf_has_pages_and_the_page_asked_no_other_host(printed):
    assert printed["pages"] >= 3
    assert len(printed["images"]) == printed["pages"]
    assert printed["other_hosts"] == []


def test_every_code_line_of_both_tabs_and_every_output_is_printed_whole(printed):
    blocks = [
        code
        for code in printed["article"].select("pre > code")
        if "mermaid" not in (code.parent.get("class") or [])
    ]
    labels = [
        label.get_text(" ", strip=True)
        for label in printed["article"].select(".tabbed-labels label")
    ]
    assert any("NumPy" in label for label in labels) and any("JAX" in label for label in labels)
    assert len(blocks) >= 6  # NumPy and JAX listings and their outputs, the sharding block
    missing = [
        line
        for code in blocks
        for line in code.get_text().splitlines()
        if line.strip() and _squeezed(line) not in printed["squeezed"]
    ]
    assert missing == [], f"{len(missing)} code lines missing or cut, e.g. {missing[:3]}"
    for label in labels:
        assert _squeezed(label) in printed["squeezed"], f"tab label {label!r} not printed"


def test_the_text_the_tables_the_diagram_and_the_charts_are_printed(printed):
    article = printed["article"]
    for paragraph in article.select("p"):
        words = paragraph.get_text(" ", strip=True)
        if len(words) > 40:
            # the paragraph's first words, up to an abbreviation's or a link's own markup
            assert _squeezed(words[:40]) in printed["squeezed"], words
    # A cell whose text wraps is read back line by line across its row: check its words.
    cells = article.select("table:not([class]) td, table:not([class]) th")
    assert cells
    words = {word for cell in cells for word in cell.get_text(" ", strip=True).split()}
    assert sorted(word for word in words if word not in printed["text"]) == []
    labels = re.findall(r'"([^"]+)"', (GOLDEN / "flowchart.mmd").read_text())
    assert [label for label in labels if _squeezed(label) not in printed["squeezed"]] == []
    charts = article.select("svg.course-chart")
    assert len(charts) >= 2
    for chart in charts:
        chart_text = [text.get_text(strip=True) for text in chart.select("text")]
        assert [t for t in chart_text if t and _squeezed(t) not in printed["squeezed"]] == []


def test_no_navigation_or_sidebar_is_printed(printed):
    assert printed["visible_chrome"] == []
    soup, article_text = printed["soup"], _squeezed(printed["article"].get_text())
    # Titles that only the navigation shows (not the text itself) must not be in the PDF.
    nav_only = {
        link.get_text(" ", strip=True)
        for link in soup.select(".md-sidebar .md-nav__link, .md-footer__link, .md-skip")
    } - {""}
    nav_only = {title for title in nav_only if _squeezed(title) not in article_text}
    assert nav_only, "the page has navigation to check"
    assert [title for title in nav_only if _squeezed(title) in printed["squeezed"]] == []


def _rightmost_ink_mm(image: Path) -> float:
    """How far from the page's left edge the rightmost dark pixel of a PGM page lies, in mm."""
    data = image.read_bytes()
    header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
    assert header, f"{image} is not a binary PGM"
    width, height = int(header[1]), int(header[2])
    pixels = data[header.end() :]
    rightmost = 0
    for row in range(height):
        line = pixels[row * width : (row + 1) * width].rstrip(b"\xff\xfe\xfd\xfc\xfb\xfa")
        # anything lighter than 0xe0 is paper or a pale code background, not ink
        for column in range(len(line) - 1, rightmost - 1, -1):
            if line[column] < 0xE0:
                rightmost = column
                break
    return rightmost / width * A4_WIDTH_MM


def test_nothing_reaches_into_the_right_margin(printed):
    """Wrapped code and fitted tables: no page has ink past the right margin."""
    limit = A4_WIDTH_MM - PAGE_MARGIN_MM + 1  # one mm for anti-aliasing
    beyond = {
        image.name: round(mm, 1)
        for image in printed["images"]
        if (mm := _rightmost_ink_mm(image)) > limit
    }
    assert beyond == {}, f"ink past {limit} mm from the left edge: {beyond}"
