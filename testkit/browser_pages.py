"""Pages opened in a headless browser (playwright) that record what went wrong: console and
page errors, requests, and any request to a host other than 127.0.0.1 (aborted). Needs
playwright; the browser itself is found by ``build_support.browser``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Page

from .serving import LOCAL_HOST

MATERIAL_BUNDLE = re.compile(r".*/bundle\.[0-9a-f]+\.min\.js$")
"""The URL of Material's script bundle: what a test blocks to see a page before it runs."""

SCHEMES = ("light", "dark")
"""Material's two colour schemes: every page is checked in both."""

# Diagrams are drawn by mermaid at build time (hooks/mermaid_svg.py). One counts as drawn when
# its SVG has a size and its nodes and labels wear the current scheme's colours (Material's
# variables); it returns that label colour for each.
DRAWN_DIAGRAMS = """
() => {
  const probe = document.body.appendChild(document.createElement("span"));
  const scheme = (variable) => {
    probe.style.color = `var(${variable})`;
    return getComputedStyle(probe).color;
  };
  const nodeFill = scheme("--md-mermaid-node-bg-color");
  const labelColor = scheme("--md-mermaid-label-fg-color");
  probe.remove();
  return [...document.querySelectorAll("div.course-diagram > svg")].filter((svg) => {
    const box = svg.getBoundingClientRect();
    const nodes = [...svg.querySelectorAll("g.node rect")];
    // Each label and every element inside it that holds its text.
    const labels = [...svg.querySelectorAll("g.node .nodeLabel, g.node .nodeLabel *")];
    return box.width > 0 && box.height > 0 && nodes.length > 0 && labels.length > 0
      && nodes.every((node) => getComputedStyle(node).fill === nodeFill)
      && labels.every((label) => getComputedStyle(label).color === labelColor);
  }).map(() => labelColor);
}
"""


@dataclass
class PageReport:
    """What one page showed in one scheme: what it should draw, and every finding."""

    url: str
    scheme: str
    diagrams_in_html: int
    diagrams_drawn: int = 0
    node_fills: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    other_hosts: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    axe_serious: list[str] = field(default_factory=list)


DESKTOP = {"width": 1280, "height": 900}
"""The viewport a page opens in unless a test asks for another."""

LIGHTHOUSE_PHONE = {"width": 412, "height": 823}
"""Lighthouse's mobile viewport: the phone the load benchmarks and their tests emulate."""


def open_page(
    browser: Browser, scheme: str, report: PageReport | None = None, viewport: dict = DESKTOP
) -> Page:
    """A new page in its own context that records errors and blocks every other host."""
    context = browser.new_context(color_scheme=scheme, viewport=viewport)
    report = report or PageReport(url="", scheme=scheme, diagrams_in_html=0)

    def route(route):
        if urlsplit(route.request.url).hostname == LOCAL_HOST:
            route.continue_()
        else:
            report.other_hosts.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and report.console_errors.append(m.text))
    page.on("pageerror", lambda error: report.page_errors.append(str(error)))
    page.on("request", lambda request: report.requests.append(request.url))
    return page
