"""No dead internal link: every href/src on every built page lands on a file (the served
wheel included), and every #fragment on an element with that id; in the published tree too,
where the outdated-version notice links each page to the same page in latest."""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from bs4 import BeautifulSoup

from testkit.project import SECTION_PAGE
from testkit.site import built_pages, site_prefix

PAGE_ORIGIN = "http://site.invalid/"  # a stand-in origin to resolve relative links against


@cache
def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(), "html.parser")


def _target_file(site: Path, url: str) -> Path:
    path = site / unquote(urlsplit(url).path).removeprefix("/")
    return path / "index.html" if path.is_dir() or url.endswith("/") else path


# The notice links to a sibling version folder (`../latest/...`), which only the published
# tree has: checked there (test_published_tree_has_no_dead_link), not in a plain build.
OUTDATED_NOTICE = '[data-md-component="outdated"]'
OUTDATED_ATTRIBUTES = {"data-md-component": "outdated"}


def dead_links(site: Path, pages: list[str] | None = None, versioned: bool = False) -> list[str]:
    dead = []
    for page in built_pages(site) if pages is None else pages:
        if page.endswith("404.html"):
            continue  # its links are absolute to site_url's path, checked in the browser tests
        page_url = urljoin(PAGE_ORIGIN, page)
        soup = _soup(_target_file(site, page_url))
        for element in soup.select("[href], [src]"):
            if not versioned and element.find_parent(attrs=OUTDATED_ATTRIBUTES):
                continue
            link = element.get("href") or element.get("src")
            url = urljoin(page_url, link)
            if not url.startswith(PAGE_ORIGIN):
                continue  # another host: never loaded by the site, only followed by a reader
            target = _target_file(site, url)
            if not target.is_file():
                dead.append(f"{page}: {link} (no file {target.relative_to(site)})")
                continue
            fragment = urlsplit(url).fragment
            if fragment and target.suffix == ".html" and not _soup(target).find(id=fragment):
                dead.append(f"{page}: {link} (no #{fragment} in {target.relative_to(site)})")
    return dead


def test_no_dead_internal_link(built_site):
    dead = dead_links(built_site)
    assert not dead, "\n".join(dead)


def test_link_check_finds_a_dead_link(built_site, tmp_path):
    """The checker itself: a page with a missing file and a missing anchor is reported."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "index.html").write_text(
        '<a href="../glossary/#no-such-term">x</a> <a href="../no-such-page/">y</a>'
    )
    (tmp_path / "glossary").mkdir()
    (tmp_path / "glossary" / "index.html").write_text('<h2 id="gpu">GPU</h2>')
    assert dead_links(tmp_path) == [
        "broken/: ../glossary/#no-such-term (no #no-such-term in glossary/index.html)",
        "broken/: ../no-such-page/ (no file no-such-page/index.html)",
    ]


def test_published_tree_has_no_dead_link(published_site):
    """Every version folder and alias as the host serves them: the notice's links included."""
    root = published_site / site_prefix()
    versions = json.loads((root / "versions.json").read_text())
    folders = [v["version"] for v in versions] + [a for v in versions for a in v["aliases"]]
    pages = [f"{folder}/{page}" for folder in folders for page in built_pages(root / folder)]
    assert any(
        _soup(_target_file(root, urljoin(PAGE_ORIGIN, p))).select_one(OUTDATED_NOTICE)
        for p in pages
    ), "no page carries the outdated notice"
    dead = dead_links(root, pages, versioned=True)
    assert not dead, "\n".join(dead)


def test_a_link_to_a_wheel_that_is_not_served_is_dead(built_site, tmp_path):
    """The page links its wheel; a site without that file has a dead link, named."""
    section = built_site / SECTION_PAGE / "index.html"
    wheels = [a["href"] for a in _soup(section).select("div.install-box a[href$='.whl']")]
    assert len(wheels) == 1, wheels
    copy = tmp_path / "site"
    (copy / SECTION_PAGE).mkdir(parents=True)
    shutil.copy(section, copy / SECTION_PAGE / "index.html")
    dead = dead_links(copy, [f"{SECTION_PAGE}/"])
    assert f"{SECTION_PAGE}/: {wheels[0]} (no file {wheels[0].removeprefix('../')})" in dead


def test_section_links_the_glossary_and_course_map(built_site):
    soup = _soup(built_site / SECTION_PAGE / "index.html")
    hrefs = {a["href"] for a in soup.select("article a[href]")}
    for target in [
        "../glossary/#gpu",
        "../glossary/#parallel-processing",
        "../course-map/#p5-9-2",
        "../course-map/#p5-14-4",
        "../course-map/#part-2",
    ]:
        assert target in hrefs
