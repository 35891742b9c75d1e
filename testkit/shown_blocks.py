"""The Python blocks a built site shows, paired with the output shown for each, as a reader
copies them (Material's copy button), and what went wrong when each ran. Needs beautifulsoup4.

``build_support`` wraps each executed block in ``div.exec-block``: inside it, markdown-exec's
source block and its output block. Notebook pages are left out (their cells are checked by
tests/test_notebook_*.py)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup, Tag

from build_support.publishing.record import SOURCE_FIRST, SOURCE_LAST

PYTHON_CLASSES = {"language-python", "language-py", "language-pycon"}


@dataclass(frozen=True)
class ShownBlock:
    """One displayed block: where it is, its source as copied, the output shown for it."""

    page: str
    block_id: str
    source: str
    output: str


def copied_text(code: Tag) -> str:
    """What Material's copy button puts on the clipboard for this ``code`` element."""
    code = copy.copy(code)  # not a re-parse: outside its <pre>, bs4 would collapse indentation
    for annotation in code.select(".md-annotation"):
        annotation.decompose()
    return code.get_text().rstrip()


def pages(site: Path) -> list[tuple[str, BeautifulSoup]]:
    """Every built page but the notebooks', parsed, with its path relative to ``site``."""
    found = []
    for html in sorted(site.rglob("*.html")):
        soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
        # Notebooks' pages, mkdocs-jupyter's or Jupyter Book's way: see test_notebook_*.py
        if soup.select_one("div.jp-Notebook, div.notebook-cell") is None:
            found.append((str(html.relative_to(site)), soup))
    return found


def shown_blocks(site: Path) -> tuple[list[ShownBlock], list[str]]:
    """Every displayed source paired with its output, and every displayed block left unpaired."""
    blocks, unpaired = [], []
    for name, soup in pages(site):
        for wrapper in soup.select("div.exec-block"):
            location, result = wrapper["data-source"], wrapper["data-result"]
            label = f"{name} '{wrapper['data-exec-id']}'"
            if not location:
                continue  # source not displayed: only its output is on the page
            highlights = wrapper.select("div.highlight")
            if not result or len(highlights) != 2 or location not in SOURCE_FIRST | SOURCE_LAST:
                unpaired.append(f"{label}: source shown ({location!r}) without a text output")
                continue
            source, output = highlights if location in SOURCE_FIRST else highlights[::-1]
            blocks.append(
                ShownBlock(
                    name,
                    wrapper["data-exec-id"],
                    copied_text(source.select_one("code")),
                    output.select_one("code").get_text(),
                )
            )
        for highlight in soup.select("div.highlight"):
            shown_as_python = PYTHON_CLASSES & set(highlight.get("class", []))
            if shown_as_python and highlight.find_parent("div", class_="exec-block") is None:
                unpaired.append(f"{name}: a Python block that is not executed: {highlight.text!r}")
    return blocks, unpaired


def copy_failures(blocks, run_block, where_run: str) -> list[str]:
    """What went wrong when each block ran as copied: ``run_block(block, number)`` runs it."""
    failures = []
    for number, block in enumerate(blocks):
        run = run_block(block, number)
        where = f"{block.page} '{block.block_id}'"
        if run.returncode != 0:
            failures.append(f"{where} fails {where_run}:\n{run.stderr}")
        elif run.stdout.rstrip("\n") != block.output.rstrip("\n"):
            failures.append(f"{where} prints\n{run.stdout}\nbut the page shows\n{block.output}")
    return failures
