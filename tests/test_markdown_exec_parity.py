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
    "ran before it, on any page (`_code_block_n11_`): a count shared by every session, which a "
    "block's own worker does not see and its cache key does not hold; here it is named after "
    "the block's id (`_code_block_id_no_id_` where it has none)"
)
_AS_PRINTED = (
    "an effect of the project's wrapper (a `<div>`, `sessions.wrapped`), which the comparison "
    "takes off: stock's page wraps an `html` output that starts with no block tag in a `<p>` "
    "(its test_output_html asserts `<p>**Bold!**\\n</p>`), the `<div>` keeps it as printed"
)
BY_DESIGN: dict[str, str] = {
    "gallery.md::runpy": (
        "click names the program after the process's `__main__`: with stock markdown-exec the "
        "build's own (`python -m mkdocs.mkdocs`), here the block's worker's (`mkdocs`); a block "
        'never runs in the build\'s interpreter (ARCHITECTURE.md, "Where blocks run")'
    ),
    "tests.md::module-attribute": _OWN_MODULE,
    "tests.md::future-annotations": _OWN_MODULE,
    "tests.md::python-output-html": _AS_PRINTED,
    "tests.md::sh-output-html": _AS_PRINTED,
    "tests.md": (
        "table of contents: stock files a block's headings under the HTML it printed, so two "
        "blocks of a page that print the same HTML (`prefix-empty` and `prefix-id-empty`, "
        "`prefix-given` and `prefix-id-given`) share one heading element, and the second's "
        "label reads the permalink sign `toc` gave the first (`HEADING¤`); here each block's "
        "headings are filed under its own wrapped output, and the label is the heading's text. "
        "Compared with stock's labels less that sign"
    ),
}
"""Every difference from stock kept by design, and why, in one place: an example's output
(``page::key``) or a page's table of contents (``page``). An entry whose example no longer
differs fails, so the list stays true."""


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
    if page in BY_DESIGN:
        assert project != stock, f"{page}'s table of contents is stock's now: off BY_DESIGN"
        stock = [line.replace("¤ ->", " ->") for line in stock]  # BY_DESIGN["tests.md"]
    assert project == stock, diff(stock, project)
