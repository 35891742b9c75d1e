"""The published site in a headless browser (build_support.browser): every page, light and dark.

Each page of the version that `make publish` deploys is loaded once per colour scheme, from a
server on 127.0.0.1; any request to another host is aborted and recorded. The tests below then
read the records: console and page errors, other hosts, diagrams drawn, axe-core violations.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from bs4 import BeautifulSoup
from playwright.sync_api import Browser
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from testkit.author import section_version
from testkit.browser_pages import DESKTOP, DRAWN_DIAGRAMS, SCHEMES, PageReport, open_page
from testkit.project import ARTIFACTS, AXE, ROOT, SECTION_PAGE
from testkit.serving import LOCAL_HOST, free_port, listening, serve
from testkit.site import built_pages, site_prefix

SERIOUS = {"serious", "critical"}
SETTLED_CODE_BLOCKS = """
() => [...document.querySelectorAll("pre > code")]
  .every((code) => code.scrollWidth <= code.clientWidth || code.hasAttribute("tabindex"))
"""


@pytest.fixture(scope="session")
def site_url(published_site: Path) -> str:
    with serve(published_site) as base:
        yield base + site_prefix()


PHONE = {"width": 390, "height": 844}


def visit(
    browser: Browser, site: Path, base: str, path: str, scheme: str, viewport: dict = DESKTOP
) -> PageReport:
    html = (site / (path if path.endswith(".html") else path + "index.html")).read_text()
    soup = BeautifulSoup(html, "html.parser")
    expected = len(soup.select("div.course-diagram > svg, pre.mermaid"))
    report = PageReport(url=base + path, scheme=scheme, diagrams_in_html=expected)
    page = open_page(browser, scheme, report, viewport)
    page.goto(report.url, wait_until="networkidle")
    report.node_fills = page.evaluate(DRAWN_DIAGRAMS)
    report.diagrams_drawn = len(report.node_fills)
    # Material makes overflowing code blocks focusable once it has measured them; let it
    # finish, so axe judges the page a reader gets (a block left unfocusable is reported).
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(SETTLED_CODE_BLOCKS, timeout=5_000)
    page.add_script_tag(path=AXE)
    violations = page.evaluate("async () => (await axe.run(document)).violations")
    report.axe_serious = [
        f"{v['impact']} {v['id']}: {[node['target'] for node in v['nodes']]}"
        for v in violations
        if v["impact"] in SERIOUS
    ]
    if path == f"{SECTION_PAGE}/" and viewport == DESKTOP:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / f"section-{scheme}.png", full_page=True)
        for index, chart in enumerate(page.locator("svg.course-chart").all(), start=1):
            chart.screenshot(path=ARTIFACTS / f"section-{scheme}-chart-{index}.png")
        if report.diagrams_drawn:
            diagram = page.locator("div.course-diagram").first
            diagram.screenshot(path=ARTIFACTS / f"section-{scheme}-flow.png")
    page.context.close()
    return report


@pytest.fixture(scope="session")
def version_root(published_site: Path) -> Path:
    return published_site / site_prefix() / section_version()


@pytest.fixture(scope="session")
def reports(browser, version_root, site_url) -> list[PageReport]:
    """Every built page of the published version, visited once in each colour scheme."""
    base = f"{site_url}{version_root.name}/"
    pages = built_pages(version_root)
    assert f"{SECTION_PAGE}/" in pages
    return [visit(browser, version_root, base, path, s) for path in pages for s in SCHEMES]


def failures(reports: list[PageReport], attribute: str) -> str:
    """One line per page and finding; empty when every page is clean."""
    return "\n".join(
        f"{r.url} ({r.scheme}): {item}" for r in reports for item in getattr(r, attribute)
    )


def test_no_console_errors(reports):
    found = failures(reports, "console_errors")
    assert not found, found


def test_no_page_errors(reports):
    found = failures(reports, "page_errors")
    assert not found, found


def test_no_request_to_another_host(reports):
    found = failures(reports, "other_hosts")
    assert not found, found


def test_every_diagram_is_drawn_in_each_scheme(reports):
    assert any(r.diagrams_in_html for r in reports), "no page has a diagram to check"
    assert [(r.url, r.scheme) for r in reports if r.diagrams_drawn != r.diagrams_in_html] == []
    # The same SVG, in each scheme's own colours.
    fills = {r.scheme: r.node_fills for r in reports if r.diagrams_in_html}
    assert fills["light"] != fills["dark"], fills


def test_no_page_loads_mermaid(reports, version_root):
    # Drawn when the site is built: readers never download mermaid (3.5 MB), from anywhere.
    scripts = [url for r in reports for url in r.requests if "mermaid" in urlsplit(url).path]
    assert scripts == []
    assert list(version_root.rglob("mermaid*")) == []


def test_axe_finds_no_serious_or_critical_violation(reports):
    found = failures(reports, "axe_serious")
    assert not found, found


def test_axe_on_a_phone_finds_no_serious_or_critical_violation(browser, version_root, site_url):
    # On a narrow screen wide tables and code scroll sideways: each scrolling region must
    # take keyboard focus, or a keyboard user cannot read its hidden columns.
    base = f"{site_url}{version_root.name}/"
    pages = [f"{SECTION_PAGE}/", "build-report/"]
    phone = [visit(browser, version_root, base, path, "light", PHONE) for path in pages]
    found = failures(phone, "axe_serious")
    assert not found, found


def test_instant_navigation_draws_the_diagram(browser, site_url, version_root):
    """Moving from the home page (no mermaid) to the section without a full page load."""
    report = PageReport(url="home, then the section", scheme="light", diagrams_in_html=1)
    page = open_page(browser, "light", report)
    page.goto(f"{site_url}{version_root.name}/", wait_until="networkidle")
    page.locator(f"article a[href$='{SECTION_PAGE}/']").first.click()
    page.wait_for_url(f"**/{SECTION_PAGE}/")
    page.wait_for_function(f"({DRAWN_DIAGRAMS})().length >= 1", timeout=20_000)
    assert page.evaluate("() => performance.getEntriesByType('navigation').length") == 1
    # Switched to the dark scheme with the header's toggle, the diagram follows.
    light = page.evaluate(DRAWN_DIAGRAMS)
    page.locator("[data-course-palette] label:visible").first.click()
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    dark = page.evaluate(DRAWN_DIAGRAMS)
    assert len(light) == len(dark) == 1 and light != dark
    page.context.close()
    assert (report.other_hosts, report.console_errors, report.page_errors) == ([], [], [])


SWITCH_AND_LISTEN = """async () => {
  const started = [];
  document.addEventListener("transitionrun", (event) => started.push(event.propertyName));
  document.querySelector("[data-course-palette] label:not([hidden])").click();
  await new Promise((resolve) => setTimeout(resolve, 600));
  const left = document.querySelectorAll("style[data-course-palette-switching]").length;
  return [document.body.dataset.mdColorScheme, left, started.length];
}"""


def test_switching_the_palette_runs_no_transition(browser, site_url, version_root):
    """As in Material, though its rule for this is not served (hooks/palette_switching.py):
    palette-switch.js adds the same rule only while the reader switches, then removes it."""
    page = open_page(browser, "light")
    page.goto(f"{site_url}{version_root.name}/{SECTION_PAGE}/", wait_until="networkidle")
    assert page.evaluate(SWITCH_AND_LISTEN) == ["slate", 0, 0]
    assert page.evaluate(SWITCH_AND_LISTEN) == ["default", 0, 0]
    # The rule is lifted: a link's colour transition runs again on hover.
    assert (
        page.evaluate("getComputedStyle(document.querySelector('article a')).transitionDuration")
        != "0s"
    )
    page.context.close()


def test_root_redirects_to_latest(browser, site_url):
    page = open_page(browser, "light")
    page.goto(site_url, wait_until="networkidle")
    assert page.url == f"{site_url}latest/"
    assert page.title() == "Deep Learning Course · Live Code"
    page.context.close()


def test_glossary_tooltip_shows_the_short_definition(browser, site_url, version_root):
    page = open_page(browser, "light")
    page.goto(f"{site_url}{version_root.name}/{SECTION_PAGE}/", wait_until="networkidle")
    term = page.locator("article abbr", has_text="GPU").first
    term.hover()
    tooltip = page.locator(".md-tooltip2--active")
    tooltip.wait_for(timeout=5_000)
    assert "Graphics processing unit" in tooltip.inner_text()
    page.context.close()


def test_mike_serve_shows_the_version_selector(browser, published_repo):
    port = free_port()
    mike = ROOT / ".venv" / "bin" / "mike"
    server = subprocess.Popen(
        [str(mike), "serve", "--dev-addr", f"{LOCAL_HOST}:{port}"],
        cwd=published_repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not listening(port):
            assert time.monotonic() < deadline, "mike serve did not start"
            time.sleep(0.2)
        page = open_page(browser, "light")
        page.goto(f"http://{LOCAL_HOST}:{port}/latest/{SECTION_PAGE}/", wait_until="networkidle")
        selector = page.locator(".md-version__current")
        selector.wait_for(timeout=10_000)
        assert selector.inner_text() == section_version()
        versions = page.locator(".md-version__link").all_inner_texts()
        assert any(section_version() in text for text in versions), versions
        page.context.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_links_are_touch_targets_of_at_least_24px_on_a_phone(browser, site_url, version_root):
    # axe's target-size (WCAG 2.2, 2.5.8) is what Lighthouse's accessibility score runs; the
    # listing's line-number links are the small ones that course.css enlarges.
    page = open_page(browser, "light", viewport=PHONE)
    page.goto(f"{site_url}{version_root.name}/{SECTION_PAGE}/", wait_until="networkidle")
    assert page.locator(".linenodiv a").count() > 0
    page.add_script_tag(path=AXE)
    rule = "{ runOnly: { type: 'rule', values: ['target-size'] } }"
    violations = page.evaluate(f"async () => (await axe.run(document, {rule})).violations")
    page.context.close()
    assert [node["target"] for v in violations for node in v["nodes"]] == []
