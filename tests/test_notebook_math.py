"""A notebook's formulas as MathML, written by KaTeX when the site is built
(build_support/notebooks/tex.py): the page loads nothing to show them, from the site or another
host, and a rebuild whose formulas are in the store starts no Node."""

from __future__ import annotations

import pytest

from build_support.caching.cache import Cache
from build_support.caching.store import FileStore
from build_support.notebooks import myst, tex

TEXT = "Inline $2^{19937}-1$ and {math}`a < b`, then\n\n$$\n\\frac{x}{y}\n$$\n\nand $\\nosuch$.\n"


def rendered() -> str:
    return myst.render(TEXT, myst.Resolver(label=lambda name: None, document=lambda path: None))


def test_formulas_become_mathml_with_their_tex_and_nothing_to_load(tmp_path):
    page = rendered()
    assert tex.formulas(page) == [
        ("2^{19937}-1", False),
        ("a < b", False),
        ("\\frac{x}{y}", True),
        ("\\nosuch", False),
    ]
    shown = tex.as_mathml(page, Cache("math", FileStore(tmp_path)))
    assert "arithmatex" not in shown and "\\(" not in shown and "\\[" not in shown
    assert shown.count("<math") == 4 and shown.count('display="block"') == 1
    assert '<annotation encoding="application/x-tex">a &lt; b</annotation>' in shown
    assert '<div class="notebook-math"><span class="katex"><math' in shown
    assert "<script" not in shown and "<link" not in shown and "src=" not in shown
    assert 'mathcolor="#cc0000"' in shown  # a formula KaTeX cannot read: its TeX, marked


def test_a_rebuild_takes_each_formula_from_the_store(tmp_path, monkeypatch):
    cache = Cache("math", FileStore(tmp_path))
    first = tex.as_mathml(rendered(), cache)

    def no_node(items, katex):
        raise AssertionError(f"Node started for {items}")

    monkeypatch.setattr(tex, "_katex", no_node)
    assert tex.as_mathml(rendered(), Cache("math", FileStore(tmp_path))) == first
    assert tex.as_mathml("<p>no formula</p>", None) == "<p>no formula</p>"


def test_without_katex_the_build_says_what_to_run(tmp_path):
    with pytest.raises(tex.TexError, match=r"katex\.js is missing: run `make setup`"):
        tex.as_mathml(rendered(), None, katex=tmp_path / "node_modules/katex/dist/katex.js")


# A display formula wider than a phone's column (about 900 px as Chromium draws it)
LONG_FORMULA = (
    "\\log p(y \\mid X, w, b) = \\sum_{i=1}^{N} \\left[ y_i \\log \\sigma(w^\\top x_i + b) "
    "+ (1 - y_i) \\log \\left( 1 - \\sigma(w^\\top x_i + b) \\right) \\right] "
    "- \\frac{\\lambda}{2} \\lVert w \\rVert_2^2 - \\frac{\\lambda}{2} b^2"
)
PHONE = {"width": 360, "height": 740}  # the narrowest phone a page is read on
MEASURE = """
() => {
  const box = document.querySelector(".notebook-math");
  const style = getComputedStyle(box);
  return {
    page: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    box: box.getBoundingClientRect().right,
    scrolls: box.scrollWidth > box.clientWidth && ["auto", "scroll"].includes(style.overflowX),
    tall: box.scrollHeight > box.clientHeight,
    focusable: box.tabIndex >= 0,
  };
}
"""


def test_a_long_display_formula_scrolls_in_its_own_box_on_a_phone(tmp_path, browser):
    """On a 360-px-wide phone a display formula wider than the column scrolls sideways in its
    own box (the site's stylesheet), which takes a tab stop (scroll-regions.js): the page itself
    is never wider than the phone, and axe finds nothing serious."""
    import contextlib
    import shutil

    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    from testkit.browser_pages import PageReport, open_page
    from testkit.build import mkdocs_build
    from testkit.project import AXE, ROOT
    from testkit.serving import serve
    from tests.test_notebook_formats import MYST_HEAD, site

    assets = ("stylesheets/course.css", "javascripts/scroll-regions.js")
    text = MYST_HEAD.format(language="python") + f"# Wide\n\nBefore.\n\n$$\n{LONG_FORMULA}\n$$\n"
    config = site(tmp_path, ["notebooks/wide.md"], {"notebooks/wide.md": text})
    for asset in assets:
        (tmp_path / "docs/assets" / asset).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "docs/assets" / asset, tmp_path / "docs/assets" / asset)
    with config.open("a", encoding="utf-8") as mkdocs_yml:  # as the project's lists them
        mkdocs_yml.write(
            f"extra_css: [assets/{assets[0]}]\nextra_javascript: [assets/{assets[1]}]\n"
        )
    result = mkdocs_build(config, tmp_path / "site", cache_dir=tmp_path / "cache", timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    with serve(tmp_path / "site") as base:
        report = PageReport(url=f"{base}notebooks/wide/", scheme="light", diagrams_in_html=0)
        page = open_page(browser, "light", report, viewport=PHONE)
        page.goto(report.url, wait_until="networkidle")
        with contextlib.suppress(PlaywrightTimeoutError):  # its tab stop comes once idle
            page.wait_for_function(f"() => ({MEASURE})().focusable", timeout=5_000)
        shown = page.evaluate(MEASURE)
        page.add_script_tag(path=AXE)
        violations = page.evaluate("async () => (await axe.run(document)).violations")
        page.context.close()
    assert shown["page"] <= shown["viewport"] == PHONE["width"], shown  # the page: no wider
    assert shown["box"] <= PHONE["width"] and shown["scrolls"], shown  # the formula scrolls
    assert not shown["tall"], shown  # nothing of it clipped, or scrolled up and down
    assert shown["focusable"], shown
    serious = [v["id"] for v in violations if v["impact"] in ("serious", "critical")]
    assert not serious and not report.other_hosts and not report.page_errors, (serious, report)
