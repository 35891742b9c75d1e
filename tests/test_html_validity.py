"""Every built page: no id twice, and valid HTML by the W3C Nu validator (vnu.jar, npm
``vnu-jar``, run with Java). Errors that come from the theme's or mkdocs-jupyter's own
templates are listed apart below, each by page, message and origin; anything else fails."""

from __future__ import annotations

import collections
import json
import shutil
import subprocess
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import pytest

from testkit.project import ROOT, SECTION_PAGE
from testkit.site import page

VNU_JAR = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"


def _pages(site: Path) -> list[str]:
    return sorted(str(path.relative_to(site)) for path in site.rglob("*.html"))


def test_no_id_appears_twice_on_any_page(built_site):
    from bs4 import BeautifulSoup

    repeated = {}
    for name in _pages(built_site):
        soup = BeautifulSoup((built_site / name).read_text(), "html.parser")
        counts = collections.Counter(tag["id"] for tag in soup.find_all(id=True))
        twice = sorted(value for value, count in counts.items() if count > 1)
        if twice:
            repeated[name] = twice[:10]
    assert not repeated, f"ids used more than once: {repeated}"


def test_each_listing_links_its_line_numbers_to_its_own_lines(built_site):
    """A link to line 5 of the JAX tab lands on the JAX tab, not on the NumPy one."""
    soup = page(built_site)
    listings = soup.select("div.highlight")
    anchored = [listing for listing in listings if listing.select("[id^=__codelineno-]")]
    assert len(anchored) >= 3  # the NumPy tab, the JAX tab, the sharding block at least
    prefixes = set()
    for listing in anchored:
        own = {tag["id"] for tag in listing.select("[id^=__codelineno-]")}
        links = {tag["href"][1:] for tag in listing.select("a[href^='#__codelineno-']")}
        assert links and links <= own
        prefixes |= {value.rsplit("-", 1)[0] for value in own}
    assert len(prefixes) == len(anchored)  # one prefix per listing, none shared
    for tab_label, tab in zip(
        soup.select(".tabbed-labels label"), soup.select(".tabbed-block"), strict=False
    ):
        if "JAX" in tab_label.get_text():
            assert tab.select_one("[id^=__codelineno-]"), "the JAX tab's lines have anchors"


@dataclass(frozen=True)
class Allowed:
    """An error from a template that is not the project's, set apart by name."""

    pages: str  # glob on the page's path in the site
    message: str  # the start of the validator's message
    extract: str  # text that the flagged markup contains ("" if the message is specific enough)
    origin: str  # where it comes from and why it is not fixed here


ALLOWED = (
    Allowed(
        "*",
        "Attribute “autocomplete” is only allowed when the input type is",
        'class="md-toggle"',
        "Material's base.html: its drawer and search toggles are checkboxes with "
        'autocomplete="off" (Firefox would otherwise restore their state on reload)',
    ),
    Allowed(
        "notebooks/*",
        "A “style” element in “body” must be the first child of its parent.",
        "",
        "mkdocs-jupyter's notebook template writes JupyterLab's CSS as <style> inside the page",
    ),
    Allowed(
        "notebooks/*",
        "CSS: ",
        "",
        "JupyterLab's CSS, inlined by mkdocs-jupyter's template: legacy and vendor properties "
        "(box-orient, :horizontal scrollbar pseudo-classes, transition-delay: 0)",
    ),
    Allowed(
        "notebooks/*",
        "Bad value “” for attribute “src” on element “script”",
        '<script src="">',
        "mkdocs-jupyter's template: its require.js <script> when no URL is configured",
    ),
    Allowed(
        "notebooks/*",
        "The “aria-label” attribute must not be specified on any “clipboard-copy” element",
        "<clipboard-copy",
        "mkdocs-jupyter's template: the copy button of each notebook cell",
    ),
)


def _allowed_by(message: dict, name: str) -> Allowed | None:
    for allowed in ALLOWED:
        if (
            fnmatch(name, allowed.pages)
            and message["message"].startswith(allowed.message)
            and allowed.extract in message.get("extract", "")
        ):
            return allowed
    return None


@pytest.fixture(scope="module")
def validator_errors(built_site) -> list[dict]:
    java = shutil.which("java")
    assert java, "no java on PATH: `make test` says what to install (see README)"
    assert VNU_JAR.is_file(), f"{VNU_JAR} missing: run `make setup` (npm ci)"
    result = subprocess.run(
        [java, "-jar", str(VNU_JAR), "--format", "json", "--errors-only", "--skip-non-html"]
        + [str(built_site / name) for name in _pages(built_site)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    messages = json.loads(result.stderr)["messages"]
    for message in messages:
        message["page"] = message["url"].split(str(built_site) + "/", 1)[-1]
    return messages


def test_every_page_is_valid_html_apart_from_the_templates_listed(validator_errors):
    own = [
        f"{m['page']}:{m.get('lastLine')}: {m['message']} [{m.get('extract', '').strip()[:80]}]"
        for m in validator_errors
        if not _allowed_by(m, m["page"])
    ]
    assert not own, "invalid HTML:\n" + "\n".join(own)


def test_the_section_page_has_no_validator_error_at_all_but_materials(validator_errors):
    """The section page is the project's own markup: only Material's toggles are set apart."""
    section = [m for m in validator_errors if m["page"].startswith(SECTION_PAGE)]
    assert {_allowed_by(m, m["page"]) for m in section} <= {ALLOWED[0]}


def test_the_sites_own_stylesheets_are_valid_css():
    java = shutil.which("java")
    assert java, "no java on PATH: `make test` says what to install (see README)"
    stylesheets = sorted((ROOT / "docs" / "assets" / "stylesheets").glob("*.css"))
    assert stylesheets
    result = subprocess.run(
        [java, "-jar", str(VNU_JAR), "--css", "--errors-only"] + [str(s) for s in stylesheets],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
