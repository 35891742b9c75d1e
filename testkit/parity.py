"""markdown-exec's own documented examples (``tests/markdown_exec_docs/``) built twice, with
stock markdown-exec and with the project's execution, and read back example by example, for
``tests/test_markdown_exec_parity.py`` (issue 48). Needs beautifulsoup4.

Each example in a fixture page follows a heading of class ``example`` (``## ... {#key
.example}``): its output is what the page holds from there to the next such heading. A page's
title is in its front matter, not a ``#`` heading: Material then shows its whole table of
contents, headings that examples generate too (after an ``h1``, only that one's children).
Both builds run in the same folder, one after the other, with the same environment, so that an
example that prints its working folder, or lists it, prints the same in both.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .build import mkdocs_build
from .project import ROOT
from .small_site import site_config

FIXTURE = ROOT / "tests" / "markdown_exec_docs"
PAGES = sorted(
    path.relative_to(FIXTURE / "docs").as_posix() for path in FIXTURE.glob("docs/**/*.md")
)
_MARKER = re.compile(r"^## .*\{#(?P<key>[\w-]+) \.example\}$", re.MULTILINE)
BLOCKS = [
    f"{page}::{match['key']}"
    for page in PAGES
    for match in _MARKER.finditer((FIXTURE / "docs" / page).read_text(encoding="utf-8"))
]
"""Every example, as ``page::key``, read from the fixture's Markdown (the tests' parameters)."""

EXTENSIONS = """\
  - abbr
  - attr_list
  - def_list
  - footnotes
  - md_in_html
  - toc:
      permalink: "¤"
  - pymdownx.arithmatex:
      generic: true
  - pymdownx.betterem:
      smart_enable: all
  - pymdownx.blocks.admonition
  - pymdownx.blocks.details
  - pymdownx.blocks.tab
  - pymdownx.caret
  - pymdownx.details
  - pymdownx.highlight
  - pymdownx.inlinehilite
  - pymdownx.keys
  - pymdownx.magiclink
  - pymdownx.mark
  - pymdownx.smartsymbols
  - pymdownx.snippets:
      base_path: [".", "docs/snippets"]
      check_paths: true
  - pymdownx.tabbed:
      alternate_style: true
  - pymdownx.tasklist:
      custom_checkbox: true
  - pymdownx.tilde
"""
"""markdown-exec's docs' extensions (its ``zensical.toml``), in both builds, less those not in
``uv.lock`` (``callouts``, ``pymdownx.emoji``'s Zensical icons, Zensical's previews) and
superfences' mermaid fence (no example draws one); ``admonition`` and ``pymdownx.superfences``
are ``site_config``'s."""

STOCK_CONFIG = f"""\
site_name: markdown-exec parity
strict: true
theme:
  name: material
  font: false
markdown_extensions:
  - admonition
{EXTENSIONS}  - pymdownx.superfences
plugins:
  - markdown-exec
"""
"""Stock markdown-exec: its MkDocs plugin, every language, none of the project's hooks."""

PROJECT_CONFIG = site_config("markdown-exec parity", extensions=EXTENSIONS)
"""The project's small site (``testkit.small_site``) with the same pages and extensions."""


def environment(folder: Path) -> dict[str, str]:
    """Both builds': this interpreter's scripts on ``PATH`` (``$ mkdocs --help``), and
    matplotlib's SVG made the same run to run (a fixed salt for its ids, a fixed date)."""
    (folder / "matplotlibrc").write_text("svg.hashsalt: markdown-exec-parity\n", encoding="utf-8")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {"PATH": path, "MATPLOTLIBRC": str(folder / "matplotlibrc"), "SOURCE_DATE_EPOCH": "0"}


def build_both(folder: Path) -> None:
    """Stock, then the project, built from ``folder/work`` (a git repository: an example reads
    its ``.git/config``) into ``folder/stock`` and ``folder/project``; each build's log and
    seconds beside it. A failed build fails, with its log."""
    work = folder / "work"
    shutil.copytree(FIXTURE / "docs", work / "docs")
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    env = environment(folder)
    for name, config in (("stock", STOCK_CONFIG), ("project", PROJECT_CONFIG)):
        (work / "mkdocs.yml").write_text(config, encoding="utf-8")
        started = time.monotonic()
        result = mkdocs_build(work / "mkdocs.yml", folder / name, env=env, timeout=600)
        (folder / f"{name}.seconds").write_text(
            f"{time.monotonic() - started:.1f}", encoding="utf-8"
        )
        (folder / f"{name}.log").write_text(result.stderr, encoding="utf-8")
        assert result.returncode == 0, f"the {name} build failed:\n{result.stderr[-5000:]}"


@dataclass(frozen=True)
class Site:
    """One build, read: each example's output (``page::key``) and each page's table of
    contents, one line an entry."""

    blocks: dict[str, str]
    tocs: dict[str, list[str]]


def read(folder: Path, name: str) -> Site:
    """The build ``name`` (``stock``, ``project``) of ``build_both(folder)``."""
    from bs4 import BeautifulSoup

    blocks, tocs = {}, {}
    for page in PAGES:
        built = re.sub(r"(^|/)index\.md$|\.md$", r"\1", page)
        html = (folder / name / built / "index.html").read_text(encoding="utf-8")
        soup = BeautifulSoup(html, "html.parser")
        for key, output in examples(soup).items():
            blocks[f"{page}::{key}"] = output
        tocs[page] = toc(soup)
    return Site(blocks, tocs)


def examples(soup) -> dict[str, str]:
    """The page's examples: each marker heading's id, and what follows it up to the next."""
    from bs4 import Tag

    found: dict[str, list] = {}
    for node in list(soup.select_one("article.md-content__inner").children):
        if isinstance(node, Tag) and "example" in node.get("class", []):
            found[node["id"]] = []
        elif found:
            found[list(found)[-1]].append(node)
    return {key: normalised(nodes) for key, nodes in found.items()}


def normalised(nodes: list) -> str:
    """The nodes' HTML without the project's by-design wrapper (the same rules on both sides).

    The wrapper: ``div.exec-block`` (pairing a source with its output: ``testkit.shown_blocks``),
    its newline either side of the output, and its ``p.run-label`` caption (where a block that
    shows its source and a text result ran: ``build_support.execution.sessions.wrapped``).
    What its ``<div>`` changes around it: Python-Markdown leaves a paragraph around a raw output
    that does not begin with a block-level tag (stock's ``<p></p>`` for an empty output, its
    ``<p><h1>...</h1></p>`` for a heading it reported to the ToC), never around the ``<div>``;
    a browser drops such a paragraph (a block-level tag closes it), and so is it dropped here.
    Whitespace between elements, outside ``<pre>``, is one newline: the wrapper adds some.
    """
    from bs4 import BeautifulSoup, NavigableString, Tag
    from markdown import Markdown

    soup = BeautifulSoup("".join(str(node) for node in nodes), "html.parser")
    for wrapper in soup.select("div.exec-block"):
        for caption in wrapper.find_all("p", class_="run-label", recursive=False):
            caption.decompose()
        wrapper.unwrap()
    block_level = set(Markdown().block_level_elements)
    for paragraph in soup.find_all("p"):
        if all(
            (isinstance(child, Tag) and child.name in block_level)
            or (isinstance(child, NavigableString) and not child.strip())
            for child in paragraph.contents
        ):
            paragraph.unwrap()
    soup.smooth()
    for text in soup.find_all(string=True):
        if not text.strip() and text.find_parent(("pre", "script", "textarea")) is None:
            text.replace_with("\n")
    return str(soup).strip()


def toc(soup) -> list[str]:
    """The page's table of contents as Material shows it: one line an entry, indented by its
    depth, with its text and its link."""
    nav = soup.select_one("nav.md-nav--secondary")
    return [
        "  " * (len(link.find_parents("ul")) - 1)
        + f"{link.get_text(' ', strip=True)} -> {link['href']}"
        for link in (nav.select("a.md-nav__link") if nav else [])
    ]
