"""Reading a built site: its pages, one page parsed, its install box's lines, where it lives on
its host, the wheel it serves, and how its install line begins. ``page`` needs beautifulsoup4
(the docs stack)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from build_support import section

from .project import SECTION_PAGE

if TYPE_CHECKING:
    from bs4 import BeautifulSoup

INSTALL = "python -m pip install "
"""How the install line the section page shows begins (the wheel's URL follows)."""


def page(site: Path, name: str = SECTION_PAGE) -> BeautifulSoup:
    """The built page in folder ``name`` of ``site`` (default: the section page), parsed."""
    # Imported here: the numeric tests also run where only jax, numpy and pytest are
    # installed (benchmarks/gpu_check.sh on a GPU machine), without the docs stack.
    from bs4 import BeautifulSoup

    return BeautifulSoup((site / name / "index.html").read_text(encoding="utf-8"), "html.parser")


def install_box_lines(site: Path, name: str = SECTION_PAGE) -> dict[str, str]:
    """The install box's content tabs on page ``name``: label -> the line its copy button gives
    (``CPU``, then the NVIDIA GPU line)."""
    box = page(site, name).select_one("div.install-box")
    assert box is not None, f"no install box on page {name!r}"
    labels = [label.get_text(" ", strip=True) for label in box.select(".tabbed-labels label")]
    codes = [code.get_text().strip() for code in box.select(".tabbed-block pre code")]
    assert len(labels) == len(codes), (labels, codes)
    return dict(zip(labels, codes, strict=True))


def built_pages(site: Path) -> list[str]:
    """Every HTML page of a built site, as paths relative to its root (``glossary/``, ...)."""
    pages = []
    for html in sorted(site.rglob("*.html")):
        relative = html.relative_to(site).as_posix()
        pages.append(relative.removesuffix("index.html"))
    return pages


def site_prefix() -> str:
    """The path part of ``site_url`` (``""`` or ``course/``): where the site lives on its host."""
    path = urlsplit(section.site_url()).path.strip("/")
    return f"{path}/" if path else ""


def served_wheel(site: Path) -> Path:
    """The one wheel a built site serves (an assertion error names them when it is not one)."""
    wheels = sorted(site.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]
