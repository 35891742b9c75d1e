"""Printing the section, or saving it as PDF: chromium prints it (print media, A4), pypdfium2
(PDFium, pinned in uv.lock) reads the PDF back: its text and an image of each page. The pages
must hold the text, the diagram, the charts, the code of both tabs each with its output, with
no navigation and nothing cut at the edge; the companion page's (the measured tables and
charts) the same, every table whole.

The PDF and a PNG of every page are kept in ``test-artifacts/`` to look at.
"""

from __future__ import annotations

import ctypes
import math
import re
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from bs4 import BeautifulSoup

from testkit.project import ARTIFACTS, GOLDEN, MEASURED_PAGE, SECTION_PAGE
from testkit.serving import LOCAL_HOST, serve

SCHEMES = ("light", "dark")
A4_WIDTH_MM = 210
PAGE_MARGIN_MM = 15  # course.css, print rules: @page { margin: 1.5cm }
RESOLUTION_DPI = 40
SAME_LINE_PT = 3  # baselines closer than this are one line (a superscript, inline code)

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
    return _print(browser, built_site, SECTION_PAGE, request.param, "section-print")


@pytest.fixture(scope="module")
def printed_measured(browser, built_site: Path) -> dict:
    """The companion page (the turnaround and sweep tables) printed to PDF, light."""
    return _print(browser, built_site, MEASURED_PAGE, "light", "measured-print")


def _print(browser, built_site: Path, name: str, scheme: str, stem: str) -> dict:
    ARTIFACTS.mkdir(exist_ok=True)
    pdf = ARTIFACTS / f"{stem}-{scheme}.pdf"
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
        page.goto(f"{base}{name}/", wait_until="networkidle")
        if name == SECTION_PAGE:
            page.wait_for_function(DIAGRAMS_DRAWN, timeout=20_000)
        page.evaluate("document.fonts.ready")
        page.emulate_media(media="print")
        visible_chrome = page.evaluate(VISIBLE_CHROME)
        page.pdf(path=str(pdf), format="A4")
        context.close()
    pages, images = _read_back(pdf, ARTIFACTS / f"{stem}-{scheme}")
    text = "\f".join(pages)
    html = (built_site / name / "index.html").read_text()
    article = BeautifulSoup(html, "html.parser").select_one("article")
    panels = article.select("details.try-it")  # the Try it panel: a control, never printed
    for panel in panels:
        panel.decompose()
    return {
        "scheme": scheme,
        "text": text,
        "squeezed": _squeezed(text),
        "pages": len(pages),
        "images": images,
        "article": article,
        "panels": len(panels),
        "soup": BeautifulSoup(html, "html.parser"),
        "visible_chrome": visible_chrome,
        "other_hosts": other_hosts,
    }


def _read_back(pdf: Path, stem: Path) -> tuple[list[str], dict[str, np.ndarray]]:
    """The text of each page of ``pdf``, and each page rendered in grey at RESOLUTION_DPI (as
    an array of pixels by name, each also saved as ``{stem}-{n}.png`` to look at)."""
    for old in stem.parent.glob(f"{stem.name}-*.png"):
        old.unlink()
    texts, images = [], {}
    document = pdfium.PdfDocument(pdf)
    try:
        for number, page in enumerate(document, start=1):
            texts.append(_page_text(page.get_textpage()))
            image = page.render(scale=RESOLUTION_DPI / 72, grayscale=True).to_pil().convert("L")
            path = stem.with_name(f"{stem.name}-{number}.png")
            image.save(path)
            images[path.name] = np.asarray(image)
    finally:
        document.close()
    return texts, images


def _page_text(textpage: pdfium.PdfTextPage) -> str:
    """A page's text in its physical layout, as poppler's ``pdftotext -layout`` reads it: line
    by line from the top, each line in its own reading direction (a chart's axis title is
    turned on its side). PDFium lists the characters in the order Chromium drew them, which is
    not the reading order (the code of a block split across two pages comes after the caption
    under it), so the lines are rebuilt from each character's position and angle: a code line
    wrapped in print then reads in order, hyphen included, across a page break too."""
    raw, x, y = textpage.raw, ctypes.c_double(), ctypes.c_double()
    chars = []  # (angle in degrees, along its line, across it: the baseline, height, character)
    for index in range(textpage.count_chars()):
        char = chr(pdfium_c.FPDFText_GetUnicode(raw, index))
        if char in "\r\n":  # PDFium's own line breaks, in drawing order
            continue
        if char == "\x02":  # PDFium's mark for a hyphen that ends a line: the hyphen printed
            char = "-"
        if pdfium_c.FPDFText_IsGenerated(raw, index):  # a space PDFium puts between two words
            angle, along, baseline, height, _ = chars[-1] if chars else (0, 0.0, 0.0, 0.0, "")
            chars.append((angle, along + 1e-3, baseline, height, char))
            continue
        radians = pdfium_c.FPDFText_GetCharAngle(raw, index)
        pdfium_c.FPDFText_GetCharOrigin(raw, index, ctypes.byref(x), ctypes.byref(y))
        # PDFium measures the angle clockwise: the line runs along (cos, -sin), up is (sin, cos).
        cos, sin = math.cos(radians), math.sin(radians)
        along, baseline = x.value * cos - y.value * sin, x.value * sin + y.value * cos
        chars.append((round(math.degrees(radians)) % 360, along, baseline, y.value, char))
    lines: list[list[tuple]] = []
    for char in sorted(chars, key=lambda char: (char[0], -char[2])):
        line = lines[-1] if lines else None
        if line and line[0][0] == char[0] and line[0][2] - char[2] <= SAME_LINE_PT:
            line.append(char)
        else:
            lines.append([char])
    lines.sort(key=lambda line: -max(char[3] for char in line))  # from the top of the page
    return "\n".join(
        "".join(char[4] for char in sorted(line, key=lambda c: c[1])) for line in lines
    )


def test_the_pdf_has_pages_and_the_page_asked_no_other_host(printed):
    assert printed["pages"] >= 3
    assert len(printed["images"]) == printed["pages"]
    assert printed["other_hosts"] == []


def test_the_try_it_panel_is_not_printed(printed):
    assert printed["panels"] == 1
    assert _squeezed("Try it here") not in printed["squeezed"]


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


def test_the_text_the_diagram_and_the_charts_are_printed(printed):
    _assert_text_and_charts_printed(printed)
    labels = re.findall(r'"([^"]+)"', (GOLDEN / "flowchart.mmd").read_text())
    assert [label for label in labels if _squeezed(label) not in printed["squeezed"]] == []


def test_the_measured_page_prints_its_text_every_table_and_its_charts(printed_measured):
    printed = printed_measured
    assert printed["other_hosts"] == [] and printed["visible_chrome"] == []
    _assert_text_and_charts_printed(printed)
    # A cell whose text wraps is read back line by line across its row: check its words.
    cells = printed["article"].select("table:not([class]) td, table:not([class]) th")
    assert cells
    words = {word for cell in cells for word in cell.get_text(" ", strip=True).split()}
    assert sorted(word for word in words if word not in printed["text"]) == []


def _assert_text_and_charts_printed(printed: dict) -> None:
    """Every paragraph's first words and every chart's labels are in the printed text."""
    article = printed["article"]
    for paragraph in article.select("p"):
        words = paragraph.get_text(" ", strip=True)
        if len(words) > 40:
            # the paragraph's first words, up to an abbreviation's or a link's own markup
            assert _squeezed(words[:40]) in printed["squeezed"], words
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


def _rightmost_ink_mm(pixels: np.ndarray) -> float:
    """How far from the page's left edge the rightmost dark pixel of a grey page lies, in mm."""
    # anything lighter than 0xe0 is paper or a pale code background, not ink
    columns = np.flatnonzero((pixels < 0xE0).any(axis=0))
    rightmost = columns[-1] if columns.size else 0
    return float(rightmost / pixels.shape[1] * A4_WIDTH_MM)


def test_nothing_reaches_into_the_right_margin(printed):
    """Wrapped code: no page has ink past the right margin."""
    _assert_within_margin(printed)


def test_the_measured_tables_fit_within_the_margin(printed_measured):
    """The wide turnaround and sweep tables are fitted to the page, not cut at its edge."""
    _assert_within_margin(printed_measured)


def _assert_within_margin(printed: dict) -> None:
    limit = A4_WIDTH_MM - PAGE_MARGIN_MM + 1  # one mm for anti-aliasing
    beyond = {
        name: round(mm, 1)
        for name, pixels in printed["images"].items()
        if (mm := _rightmost_ink_mm(pixels)) > limit
    }
    assert beyond == {}, f"ink past {limit} mm from the left edge: {beyond}"
