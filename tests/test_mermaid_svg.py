"""hooks/mermaid_svg.py: diagrams drawn by mermaid at build time, cached, failing loudly."""

from __future__ import annotations

import hashlib
import html
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import material
import pytest
from mkdocs.exceptions import PluginError

from build_support import browser
from examples import BATCH, sequential_vs_parallel_flowchart
from testkit.hooks import load_hook
from testkit.project import ROOT

mermaid_svg = load_hook("mermaid_svg")

FLOWCHART = sequential_vs_parallel_flowchart(BATCH)
SMALL = "flowchart LR\n  accTitle: Two steps\n  accDescr: A leads to B.\n  A --> B"


@pytest.fixture
def drawing(tmp_path, monkeypatch) -> object:
    """The hook's drawing set-up for this project, with an empty cache of its own."""
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    config = SimpleNamespace(
        config_file_path=str(ROOT / "mkdocs.yml"),
        theme=SimpleNamespace(dirs=[str(Path(material.__file__).parent / "templates")]),
    )
    return mermaid_svg.Drawing(config)


def diagram_entries(drawing) -> list:
    return drawing.cache.store.entries("diagrams")


def page_with(*sources: str) -> str:
    blocks = [f'<pre class="mermaid"><code>{html.escape(s)}</code></pre>' for s in sources]
    return "<p>Before.</p>\n" + "\n".join(blocks) + "\n<p>After.</p>"


def test_the_key_covers_the_source_mermaid_and_material(drawing):
    assert drawing.key(FLOWCHART) == drawing.key(FLOWCHART)
    assert drawing.key(FLOWCHART) != drawing.key(FLOWCHART + "\n")
    before = drawing.key(FLOWCHART)
    drawing.fingerprint = drawing.fingerprint.replace(drawing.theme_css, "")
    assert drawing.key(FLOWCHART) != before
    assert hashlib.sha256(drawing.mermaid.read_bytes()).hexdigest() in drawing.fingerprint
    assert drawing.stylesheets and all(p.name in drawing.fingerprint for p in drawing.stylesheets)


def test_a_drawn_diagram_is_cached_and_reused_without_a_browser(drawing, request):
    (svg,) = mermaid_svg.svgs_for(drawing, [SMALL], "page.md")
    assert svg.startswith("<svg") and "<title" in svg and "Two steps" in svg
    assert [path.name for path, _ in diagram_entries(drawing)] == [drawing.key(SMALL)]
    request.getfixturevalue("no_browser")
    assert mermaid_svg.svgs_for(drawing, [SMALL], "page.md") == [svg]


def test_a_diagram_entry_is_checksummed_an_edited_one_is_drawn_again(drawing):
    (svg,) = mermaid_svg.svgs_for(drawing, [SMALL], "page.md")
    [(entry, _)] = diagram_entries(drawing)
    entry.write_bytes(entry.read_bytes().replace(b"Two steps", b"Tampered!"))
    assert mermaid_svg.svgs_for(drawing, [SMALL], "page.md") == [svg]  # drawn again, not shown
    assert b"Tampered!" not in entry.read_bytes()  # and stored again, whole


def test_a_diagram_drawn_by_another_browser_version_is_drawn_again(drawing):
    found = str(browser.find().path)
    version = subprocess.run([found, "--version"], capture_output=True, text=True)
    assert drawing.browser == version.stdout.strip()
    (svg,) = mermaid_svg.svgs_for(drawing, [SMALL], "page.md")
    [(entry, _)] = diagram_entries(drawing)
    drawing.browser = "Chromium 1.0 (an upgrade)"
    assert mermaid_svg.cached_svg(drawing, drawing.key(SMALL)) is None
    assert mermaid_svg.svgs_for(drawing, [SMALL], "page.md") == [svg]  # drawn again
    assert b"an upgrade" in entry.read_bytes()  # stored with the version that drew it


def test_the_key_holds_playwright_and_the_fonts(drawing):
    assert json.loads(drawing.fingerprint)["playwright"] == importlib.metadata.version("playwright")
    assert json.loads(drawing.fingerprint)["fonts"] == mermaid_svg.fonts_fingerprint()
    assert mermaid_svg.browser_version("/nonexistent/chromium", drawing.cache).startswith("no ")


def test_a_diagram_not_in_the_cache_needs_a_browser(drawing, no_browser):
    failure = r"page\.md: 1 diagram\(s\) to draw \(not in the cache\), and no Chrome-family"
    with pytest.raises(PluginError, match=failure) as raised:
        mermaid_svg.svgs_for(drawing, [SMALL], "page.md")
    assert "playwright install chromium" in str(raised.value)


def test_a_diagram_mermaid_cannot_parse_fails_naming_the_page(drawing):
    failure = r"page\.md: mermaid could not draw diagram .*Parse error"
    with pytest.raises(PluginError, match=failure):
        mermaid_svg.svgs_for(drawing, ["flowchart TD\n  A[unclosed --> B"], "page.md")
    assert diagram_entries(drawing) == []  # nothing cached for a failure


def test_page_gets_inline_svgs_with_ids_of_their_own(drawing):
    out = mermaid_svg.inline_svgs(page_with(SMALL, FLOWCHART, SMALL), drawing, "page.md")
    assert "<pre" not in out and out.count('<div class="course-diagram"><svg') == 3
    assert out.startswith("<p>Before.</p>") and out.endswith("<p>After.</p>")
    ids = re.findall(r'\sid="([^"]+)"', out)
    assert len(ids) == len(set(ids))  # the same diagram twice still has ids of its own


def test_the_drawing_keeps_only_what_it_uses(drawing):
    (svg,) = mermaid_svg.svgs_for(drawing, [FLOWCHART], "page.md")
    assert "data-points" not in svg and 'style=""' not in svg
    assert ".sequenceNumber" not in svg  # Material's rules for other diagram types
    assert "var(--md-mermaid-node-bg-color)" in svg  # the colours follow the page's scheme


def test_the_key_holds_the_font_folders(drawing, tmp_path, monkeypatch):
    assert json.loads(drawing.fingerprint)["fonts"] == mermaid_svg.fonts_fingerprint()
    monkeypatch.setattr(mermaid_svg, "FONT_DIRS", (str(tmp_path / "fonts"),))
    (tmp_path / "fonts" / "truetype").mkdir(parents=True)
    os.utime(tmp_path / "fonts" / "truetype", (1, 1))  # long ago: file times are coarse
    before = mermaid_svg.fonts_fingerprint()
    (tmp_path / "fonts" / "truetype" / "NewSans.ttf").write_bytes(b"a font installed")
    assert mermaid_svg.fonts_fingerprint() != before


def test_the_drawing_page_loads_its_files_by_absolute_address(tmp_path, monkeypatch):
    """`make build` passes mkdocs.yml as a relative path, so the stylesheets and mermaid may be
    relative paths: the page names each by its absolute file URI (a relative one raised)."""
    from types import SimpleNamespace

    monkeypatch.chdir(tmp_path)
    drawing = SimpleNamespace(stylesheets=[Path("css/main.css")], mermaid=Path("mermaid.min.js"))
    page = mermaid_svg.drawing_page(drawing)
    assert f'<link rel="stylesheet" href="{tmp_path.as_uri()}/css/main.css">' in page
    assert f'<script src="{tmp_path.as_uri()}/mermaid.min.js"></script>' in page
