"""No dead internal link: every href/src on every built page lands on a file, and every
#fragment on an element with that id."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from bs4 import BeautifulSoup

from .browser import built_pages
from .helpers import SECTION_PAGE

PAGE_ORIGIN = "http://site.invalid/"  # a stand-in origin to resolve relative links against


@cache
def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(), "html.parser")


def _target_file(site: Path, url: str) -> Path:
    path = site / unquote(urlsplit(url).path).removeprefix("/")
    return path / "index.html" if path.is_dir() or url.endswith("/") else path


def dead_links(site: Path) -> list[str]:
    dead = []
    for page in built_pages(site):
        if page.endswith("404.html"):
            continue  # its links are absolute to site_url's path, checked in the browser tests
        page_url = urljoin(PAGE_ORIGIN, page)
        soup = _soup(_target_file(site, page_url))
        for element in soup.select("[href], [src]"):
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
