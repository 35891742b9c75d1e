"""What keeps the section page light to load on a phone (issue 22; benchmarks/main_thread.py
and benchmarks/lighthouse.py measure it): its charts carry no group that only costs and no
stylesheet, the heavy blocks below the fold are skipped until a reader nears them, yet print
whole, Material's stylesheets are served without the rules that cost the most (tabs no page
has, the palette's switching rule), the page is styled as enhanced from the start, and
Material mounts a code block only as it comes into view, with nothing lost."""

from __future__ import annotations

import re
import time
from pathlib import Path

import material
import pytest
import tinycss2
from bs4 import BeautifulSoup

from build_support.theme import split_selectors
from testkit.browser_pages import LIGHTHOUSE_PHONE, MATERIAL_BUNDLE, open_page
from testkit.hooks import load_hook
from testkit.project import MEASURED_PAGE, ROOT, SECTION_PAGE
from testkit.shown_blocks import copied_text
from testkit.site import page

without_unstyled_spans = load_hook("code_spans").without_unstyled_spans
_tab_rules = load_hook("tab_rules")
tab_selector_position, trimmed = _tab_rules.tab_selector_position, _tab_rules.trimmed
without_switching_rule = load_hook("palette_switching").without_switching_rule

STYLESHEET = ROOT / "docs" / "assets" / "stylesheets" / "course.css"


def test_charts_carry_no_group_without_attributes_and_no_stylesheet(built_site):
    charts = [
        chart
        for name in (SECTION_PAGE, MEASURED_PAGE)
        for chart in page(built_site, name).select("svg.course-chart")
    ]
    assert len(charts) >= 4
    for chart in charts:
        groups = chart.find_all("g")
        assert all(group.attrs for group in groups), "an attribute-less <g> in a chart"
        assert not chart.find("style"), "a <style> in a chart: a stylesheet for the whole page"


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
    assert page(built_site, MEASURED_PAGE).select("table:not([class])")  # in a scrollwrap each
    assert "content-visibility: visible" in printed
    assert "pre > code" not in screen.split("content-visibility: auto")[0].rsplit("*/", 1)[-1]


# ------------------------------------------------------------ listings (hooks/code_spans.py)

MATERIAL_CSS = sorted(
    Path(material.__file__)
    .parent.joinpath("templates", "assets", "stylesheets")
    .glob("main.*.min.css")
)[0]


def test_name_and_whitespace_spans_are_left_out_of_code_and_only_there():
    html = (
        '<pre><code><span class="kn">import</span><span class="w"> </span>'
        '<span class="nn">numpy</span>\n<span class="n">x</span> <span class="o">=</span> '
        '<span class="n">np</span><span class="o">.</span><span class="n">ones</span></code></pre>'
        '<div class="highlight-ipynb"><pre><span class="n">cell</span></pre></div>'
    )
    trimmed = without_unstyled_spans(html)
    code = BeautifulSoup(trimmed, "html.parser").code
    assert code.get_text() == BeautifulSoup(html, "html.parser").code.get_text()
    assert not code.select("span.n, span.w")
    assert [s["class"] for s in code.select("span")] == [["kn"], ["nn"], ["o"], ["o"]]
    assert '<span class="n">cell</span>' in trimmed  # a notebook cell keeps nbconvert's spans


def test_the_spans_left_out_draw_nothing_in_material_s_stylesheet():
    """Names are painted in the listing's own colour and whitespace has no rule of its own: if
    a Material release styles either, the spans must come back (this fails, naming it)."""
    css = MATERIAL_CSS.read_text()
    declared = dict(re.findall(r"(--md-code-hl-name-color):([^;}]+)", css))
    assert declared == {"--md-code-hl-name-color": "var(--md-code-fg-color)"}
    name_rules = re.findall(r"([^{}]*\.highlight \.n(?=[,{])[^{}]*)\{([^}]*)\}", css)
    assert name_rules and all(
        body == "color:var(--md-code-hl-name-color)" for _, body in name_rules
    )
    assert not re.search(r"\.highlight \.w\b", css)


@pytest.mark.parametrize("name", [SECTION_PAGE, MEASURED_PAGE])
def test_the_pages_listings_have_no_name_or_whitespace_spans(built_site, name):
    shown = page(built_site, name)
    assert len(shown.select("div.highlight code")) >= 5
    assert not shown.select("div.highlight code span.n, div.highlight code span.w")
    assert shown.select("div.highlight code span.kn, div.highlight code span.p")  # the rest stay


# ---------------------------------------------------------------- tab rules (hooks/tab_rules.py)

SAMPLE_TAB_CSS = (
    ".md-typeset .tabbed-set>input:first-child:checked~.tabbed-labels>:first-child,"
    ".md-typeset .tabbed-set>input:nth-child(2):checked~.tabbed-labels>:nth-child(2),"
    ".md-typeset .tabbed-set>input:nth-child(3):checked~.tabbed-labels>:nth-child(3)"
    "{color:red}"
    ".md-typeset .tabbed-set>input:nth-child(7):checked~.tabbed-content>:nth-child(7)"
    "{display:block}"
    ".md-tabs__item:nth-child(7) .md-tabs__link{transition-delay:.14s}"
    "@media screen{.md-typeset :is(.tabbed-set>input:nth-child(4), .x){color:blue}"
    ".tabbed-labels>:nth-child(5){order:1}}"
)


def test_tab_rules_above_the_largest_tab_set_go_and_every_other_rule_stays():
    css, dropped = trimmed(SAMPLE_TAB_CSS, most_tabs=2)
    assert dropped == 4
    assert ":nth-child(3)" not in css and ":nth-child(5)" not in css and "display:block" not in css
    assert ":first-child:checked" in css and "input:nth-child(2):checked" in css
    assert (
        ".md-tabs__item:nth-child(7) .md-tabs__link" in css
    )  # navigation tabs are not content tabs
    # :is(a, b) is one selector: kept, with what it names (position 4 > 2 drops it whole)
    assert ":is(" not in css
    assert trimmed(SAMPLE_TAB_CSS, most_tabs=20)[1] == 0


def test_the_built_stylesheet_keeps_the_tab_rules_the_pages_need_and_no_more(built_site):
    tab_counts = [
        int(count)
        for path in built_site.rglob("*.html")
        for count in re.findall(r'data-tabs="\d+:(\d+)"', path.read_text())
    ]
    most = max(tab_counts)
    built = (built_site / "assets" / "stylesheets" / MATERIAL_CSS.name).read_text()
    original = MATERIAL_CSS.read_text()
    positions_built = [tab_selector_position(s) for s in _selectors(built)]
    positions_original = [tab_selector_position(s) for s in _selectors(original)]
    assert max(p for p in positions_built if p) == most
    for position in range(2, most + 1):  # every rule a tab the site has needs, kept
        assert positions_built.count(position) == positions_original.count(position) > 0
    first = [s for s in _selectors(original) if "tabbed-" in s and ":first-child" in s]
    assert first and all(s in _selectors(built) for s in first)  # the first tab: :first-child
    assert len(positions_original) - len(positions_built) > 100
    assert not (built_site / "assets" / "stylesheets" / f"{MATERIAL_CSS.name}.map").exists()


def _selectors(css: str) -> list[str]:
    sheet = tinycss2.parse_stylesheet(css, skip_comments=True)
    found = []
    for node in sheet:
        if node.type == "at-rule" and node.content:
            sheet.extend(tinycss2.parse_rule_list(node.content, skip_comments=True))
        elif node.type == "qualified-rule":
            found.extend(split_selectors(node.prelude))
    return found


# ------------------------------------------------- palette (hooks/palette_switching.py)

MATERIAL_PALETTE_CSS = sorted(MATERIAL_CSS.parent.glob("palette.*.min.css"))[0]


def test_selectors_on_material_s_switching_attribute_go_and_every_other_stays():
    css = (
        "@media screen{[data-md-color-scheme=slate]{--md-hue:232deg}"
        "[data-md-color-switching] *,[data-md-color-switching] :after,"
        "[data-md-color-switching] :before{transition-duration:0s!important}}"
        "[data-md-color-switching] .x,.kept:is(.a,.b){color:red}"
    )
    out, dropped = without_switching_rule(css)
    assert dropped == 4
    assert "data-md-color-switching" not in out and "transition-duration" not in out
    assert "@media screen{[data-md-color-scheme=slate]{--md-hue:232deg}}" in out
    assert ".kept:is(.a,.b){color:red}" in out  # a rule keeps its other selectors


def test_the_served_palette_stylesheet_has_no_rule_on_the_switching_attribute(built_site):
    """Material's has one (and its bundle sets the attribute on every load); the site's has
    none (palette-switch.js adds the same rule only while the reader switches)."""
    assert "[data-md-color-switching] *" in MATERIAL_PALETTE_CSS.read_text()
    served = built_site / "assets" / "stylesheets" / MATERIAL_PALETTE_CSS.name
    assert "data-md-color-switching" not in served.read_text()
    assert served.read_text() == without_switching_rule(MATERIAL_PALETTE_CSS.read_text())[0]
    assert not served.with_name(served.name + ".map").exists()


# ------------------------------------- html.js from the head (overrides/main.html, extrahead)

ROOT_CLASS = "document.documentElement.className"


def test_the_page_is_styled_as_enhanced_before_material_s_bundle_runs(browser, served_site):
    """With Material's bundle never loaded, <html> is already "js": the head's script swaps it,
    so the bundle's own swap changes nothing (before, it restyled the whole painted page).
    With scripts off it stays "no-js", and Material's fallbacks hold: no search button."""
    url = f"{served_site}{SECTION_PAGE}/"
    tab = open_page(browser, "light")
    tab.context.route(MATERIAL_BUNDLE, lambda route: route.abort())
    bundle = []
    tab.on("requestfailed", lambda request: bundle.append(request.url))
    tab.goto(url, wait_until="load")
    without_bundle = tab.evaluate(ROOT_CLASS)
    tab.context.close()

    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    tab.goto(url, wait_until="load")
    without_scripts = tab.evaluate(ROOT_CLASS)
    search_button = tab.locator("label.md-header__button[for=__search]").first
    search_shown = search_button.is_visible()
    context.close()
    assert bundle, "the bundle was not requested, so not blocked"
    assert without_bundle.split() == ["js", "js-focus-visible"]
    assert without_scripts.split() == ["no-js"]
    assert not search_shown


# Every change to a stylesheet <link>'s href, with whether the body existed yet.
WATCH_STYLESHEET_LINKS = """
window.__stylesheetLinkChanges = [];
new MutationObserver((records) => {
  for (const record of records)
    if (record.target.matches("link[rel=stylesheet]"))
      window.__stylesheetLinkChanges.push(document.body === null ? "before the body" : "later");
}).observe(document, { attributes: true, attributeFilter: ["href"], subtree: true });
"""


STYLESHEET_HREFS = """[...document.querySelectorAll("link[rel=stylesheet]")]
  .map((link) => link.getAttribute("href"))"""


def test_material_s_bundle_changes_nothing_on_html_and_no_stylesheet_link(browser, served_site):
    """Material's bundle marks <html> for its focus-visible polyfill, and its instant navigation
    makes every relative link absolute; for a stylesheet's <link>, Chromium then applies the
    sheet again. Each restyled the whole page while it loaded. The head's script makes the same
    changes before the body exists, so the bundle finds nothing left to change."""
    tab = open_page(browser, "light")
    tab.context.add_init_script(WATCH_STYLESHEET_LINKS)
    tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
    changes = tab.evaluate("window.__stylesheetLinkChanges")
    links = tab.evaluate(STYLESHEET_HREFS)
    root = (
        tab.evaluate(ROOT_CLASS),
        tab.evaluate("document.documentElement.hasAttribute('data-js-focus-visible')"),
    )
    tab.context.close()
    assert len(links) == 3 and all(href.startswith(served_site) for href in links)
    assert changes == ["before the body"] * len(links)
    assert root == ("js js-focus-visible", True)
    # Without the bundle, the polyfill's marks stay on <html>: they must style nothing.
    for stylesheet in MATERIAL_CSS.parent.glob("*.min.css"):
        assert "js-focus-visible" not in stylesheet.read_text()


# The first contentful paint can be recorded after the load event: wait for its entry.
PAINT_AND_STYLESHEET = """() => new Promise((resolve) => {
  new PerformanceObserver((list, observer) => {
    const paint = list.getEntriesByName("first-contentful-paint")[0];
    if (!paint) return;
    observer.disconnect();
    const sheet = performance.getEntriesByType("resource").find((r) => r.name.includes("/main."));
    resolve([paint.startTime, sheet.responseEnd]);
  }).observe({ type: "paint", buffered: true });
})"""


def test_the_first_paint_still_waits_for_the_stylesheets_the_head_s_script_relinks(
    browser, served_site
):
    """Relinked by a script, a stylesheet must still block the first paint: with Material's
    stylesheet slow to arrive, the page is not painted unstyled first."""

    def slow(route):
        time.sleep(1.0)
        route.continue_()

    tab = open_page(browser, "light")
    tab.context.route(re.compile(r".*/main\.[0-9a-f]+\.min\.css$"), slow)
    tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="load")
    painted, arrived = tab.evaluate(PAINT_AND_STYLESHEET)
    tab.context.close()
    assert arrived > 1000 and painted >= arrived


# ------------------------------------- code blocks mounted as they come into view (content.lazy)

CODE = ".md-typeset pre > code"
CODE_BLOCKS = f"""() => [...document.querySelectorAll("{CODE}")].map((code) => ({{
  shown: code.offsetParent !== null,
  mounted: code.parentElement.querySelector(":scope > .md-code__nav") !== null,
  scrolls: code.scrollWidth > code.clientWidth,
  focusable: code.hasAttribute("tabindex"),
}}))"""
# Click the label of the content tab that holds a code block.
SHOW_TAB_OF = """(code) => {
  const block = code.closest(".tabbed-block");
  const index = [...block.parentElement.children].indexOf(block);
  block.closest(".tabbed-set").querySelectorAll(":scope > .tabbed-labels > label")[index].click();
}"""


def test_code_blocks_get_their_copy_button_as_they_come_into_view_and_it_copies(
    browser, built_site, served_site
):
    """Material mounts a code block only once it is in view (content.lazy, mkdocs.yml): at load
    on a phone, the blocks further down have no copy button yet. Brought into view (scrolled
    to, or its content tab chosen, as the install box's GPU line), each block gets one, and it
    copies what the page shows."""
    context = browser.new_context(viewport=LIGHTHOUSE_PHONE, is_mobile=True, has_touch=True)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    tab = context.new_page()
    tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
    at_load = tab.evaluate(CODE_BLOCKS)
    codes = tab.locator(CODE)
    copied = []
    for index in range(codes.count()):
        code = codes.nth(index)
        if not code.is_visible():  # in a content tab not chosen: choose it
            tab.evaluate(SHOW_TAB_OF, code.element_handle())
        code.scroll_into_view_if_needed()
        code.locator("xpath=..").locator(".md-code__nav [data-md-type=copy]").click()
        copied.append(tab.evaluate("navigator.clipboard.readText()"))
    context.close()
    shown = [block for block in at_load if block["shown"]]
    assert shown and len(shown) < len(at_load)  # some in tabs not chosen
    assert not all(block["mounted"] for block in shown), "every shown block mounted at load"
    assert not any(block["mounted"] for block in at_load if not block["shown"])
    assert copied == [copied_text(code) for code in page(built_site, SECTION_PAGE).select(CODE)]


def test_code_blocks_that_scroll_take_focus_before_they_come_into_view(browser, served_site):
    """Material gives a block that scrolls sideways a tab stop when it mounts it, so a block not
    yet in view would have none: scroll-regions.js gives it one once the page is idle."""
    tab = open_page(browser, "light")
    tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
    tab.wait_for_function(
        f"""() => [...document.querySelectorAll("{CODE}")]
            .every((code) => code.scrollWidth <= code.clientWidth || code.tabIndex === 0)""",
        timeout=5_000,
    )
    blocks = tab.evaluate(CODE_BLOCKS)
    tab.context.close()
    assert any(block["scrolls"] and not block["mounted"] for block in blocks)
