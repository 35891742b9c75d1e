"""markdown-exec's own documented examples render here as they do with stock markdown-exec
(issue 48): its 1.12.6 docs' and tests' examples (``tests/markdown_exec_docs/``, whose README
says where each comes from and what is left out, and why), built once with stock markdown-exec
and once with the project (``testkit.parity``), compared example by example, and each page's
table of contents. The project's wrapper around an output is its own by design, and is taken
off before comparing (``parity.normalised``); any other difference is listed in ``BY_DESIGN``,
with its reason, or fails.
"""

from __future__ import annotations

import difflib

import pytest

from testkit import parity
from testkit.shared import once_per_run

_OWN_MODULE = (
    "stock names a session-less block's module after how many such blocks the build's process "
    "ran before it, on any page (`_code_block_n11_`): a count across sessions, which a block's "
    "own worker does not see and its session's cache key does not hold; here it is named after "
    "the block's id"
)
_AS_PRINTED = (
    "a block's `html` output is placed as it printed it: stock leaves the page's Markdown to "
    "wrap an output that does not start with a block tag in a `<p>`, which the project's own "
    "wrapper (a `<div>`) prevents; a chart or table a block prints is never put in a paragraph"
)
BY_DESIGN: dict[str, str] = {
    "gallery.md::runpy": (
        "click names the program after the process's `__main__`: with stock markdown-exec the "
        "build's own (`python -m mkdocs`), here the block's worker's; a block never runs in the "
        "build's interpreter"
    ),
    "tests.md::module-attribute": _OWN_MODULE,
    "tests.md::future-annotations": _OWN_MODULE,
    "tests.md::python-output-html": _AS_PRINTED,
    "tests.md::sh-output-html": _AS_PRINTED,
}
"""``page::key`` of an example whose output differs by design, and why (ARCHITECTURE.md,
"Where blocks run"). An entry whose example no longer differs fails, so the list stays true."""


@pytest.fixture(scope="session")
def sites(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> tuple[parity.Site, parity.Site]:
    """The two builds, once a test run: stock, then the project."""
    folder = once_per_run(tmp_path_factory, worker_id, "markdown-exec-parity", parity.build_both)
    return parity.read(folder, "stock"), parity.read(folder, "project")


def diff(stock: str | list[str], project: str | list[str]) -> str:
    lines = [text.splitlines() if isinstance(text, str) else text for text in (stock, project)]
    return "\n".join(difflib.unified_diff(*lines, "stock", "project", lineterm=""))


@pytest.mark.parametrize("block", parity.BLOCKS)
def test_an_example_shows_what_stock_markdown_exec_shows(sites, block):
    stock, project = (site.blocks.get(block) for site in sites)
    assert stock is not None, f"{block}: not found in the stock build (its heading is gone)"
    assert project is not None, f"{block}: not found in the project's build (its heading is gone)"
    if block in BY_DESIGN:
        assert project != stock, f"{block} now shows what stock does: take it off BY_DESIGN"
    else:
        assert project == stock, diff(stock, project)


@pytest.mark.parametrize("page", parity.PAGES)
def test_a_pages_table_of_contents_is_stock_markdown_execs(sites, page):
    stock, project = (site.tocs[page] for site in sites)
    assert stock, f"{page}: no table of contents in the stock build"
    # Stock's label of a heading a block printed with an ``idprefix`` keeps the permalink sign
    # (``HEADING¤``); the project's is the heading's text, as for every other heading.
    stock = [line.replace("¤ ->", " ->") for line in stock]
    assert project == stock, diff(stock, project)
