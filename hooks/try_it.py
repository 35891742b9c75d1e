"""The "Try it here" panel's files in the built site: jax-js, and the book's data as JSON.

The panel (``docs/assets/javascripts/try-it/``) runs the section's practice in the reader's
browser with jax-js. Its ESM build is copied from ``node_modules/@jax-js/jax/dist`` (pinned in
``package-lock.json``) into ``assets/vendor/jax-js/`` of the built site, so each version that
mike deploys serves its own copy from the site itself: no CDN, no other host. A missing copy
fails the build (``make setup`` installs it).

``try-it/book.json`` holds what the panel computes from: the manuscript's batch and weights and
the practice's probe sizes, read from ``examples/data.py`` in a worker and cached like a block
(as ``hooks/live_numbers.py`` does), never typed into the browser code.
``try-it/figures.json`` holds the book's turnaround figures the panel's table shows beside the
reader's own, read from this build's measured page as it prints them: the live table (the build
machine's CPU) and the GPU recording (timings: ``build_support/caching/compare.py`` leaves the
copy out, the page is compared).
"""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

JAX_JS = Path("node_modules/@jax-js/jax")
VENDOR = Path("assets/vendor/jax-js")
BOOK = Path("assets/javascripts/try-it/book.json")
FIGURES_FILE = Path("assets/javascripts/try-it/figures.json")
"""The measured page's timing tables, copied: ``make check-cache`` compares the page instead."""
MEASURED_PAGE = Path("p5-9-1-measured/index.html")
FIGURES = {"cpu": "p5-9-1-turnaround-table", "gpu": "p5-9-1-turnaround-recorded-gpu"}
"""The measured page's turnaround blocks whose tables the panel shows: their data-exec-id."""


class _BlockTable(HTMLParser):
    """The first paragraph (where it was computed) and the first table of one executed block."""

    def __init__(self, block_id: str):
        super().__init__()
        self.block_id, self.depth = block_id, 0  # depth: open <div>s inside the block
        self.caption, self.rows, self.cell = "", [], None
        self.in_caption = self.in_table = self.done = False

    def handle_starttag(self, tag, attrs):
        if self.done:
            return
        if self.depth == 0:
            if tag == "div" and dict(attrs).get("data-exec-id") == self.block_id:
                self.depth = 1
            return
        self.depth += tag == "div"
        if tag == "p" and not self.caption and not self.rows:
            self.in_caption = True
        elif tag == "table":
            self.in_table = True
        elif tag == "tr" and self.in_table:
            self.rows.append([])
        elif tag in ("td", "th") and self.in_table:
            self.cell = ""

    def handle_endtag(self, tag):
        if self.depth == 0 or self.done:
            return
        self.depth -= tag == "div"
        if tag == "p":
            self.in_caption = False
        elif tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(" ".join(self.cell.split()))
            self.cell = None
        elif tag == "table" or self.depth == 0:
            self.done = True

    def handle_data(self, data):
        if self.in_caption:
            self.caption += data
        elif self.cell is not None:
            self.cell += data


def _figures(site: Path) -> dict:
    """Each turnaround table of the measured page, as printed: caption, header, rows."""
    html = (site / MEASURED_PAGE).read_text(encoding="utf-8")
    figures = {}
    for name, block_id in FIGURES.items():
        table = _BlockTable(block_id)
        # Parsed from the block's own <div> on, a few KiB at a time, until its table has ended:
        # the whole page, once per figure, was 40 ms of every rebuild under serve.
        begins = html.rfind("<div", 0, max(html.find(f'data-exec-id="{block_id}"'), 0))
        for start in range(max(begins, 0), len(html), 8192):
            table.feed(html[start : start + 8192])
            if table.done:
                break
        if len(table.rows) < 2:
            raise ValueError(
                f"{MEASURED_PAGE}: no table in block {block_id}, which the panel shows"
            )
        header, *rows = table.rows
        figures[name] = {"caption": " ".join(table.caption.split()), "header": header, "rows": rows}
    return figures


BOOK_DATA = """\
import json

from examples import data

book = {
    "batch": [list(row) for row in data.BATCH],
    "weights": list(data.WEIGHTS),
    "probe_batch_sizes": list(data.PROBE_BATCH_SIZES),
    "probe_feature_sizes": list(data.PROBE_FEATURE_SIZES),
}
print(json.dumps(book))
"""
"""What book.json holds, printed in a worker as a block would (never in the build)."""

_book: dict | None = None  # this build's, computed in on_env


def on_env(env, config, files):
    # While the build's workers are alive: they end in hooks/execution.py's on_post_build, and
    # a worker asked for after that would start its template again (0.9 s).
    global _book
    from build_support.execution import state  # loaded by hooks/execution.py

    _book = state.current().cached_value("try_it_book", BOOK_DATA)
    return env


def on_post_build(config) -> None:
    root = Path(config.config_file_path).parent
    dist = root / JAX_JS / "dist"
    modules = sorted(dist.glob("*.js"))
    if not modules:
        raise FileNotFoundError(
            f"{dist} holds no jax-js modules, which the Try it panel serves: run `make setup`"
        )
    site = Path(config.site_dir)
    vendor = site / VENDOR
    shutil.rmtree(vendor, ignore_errors=True)
    vendor.mkdir(parents=True)
    for module in modules:
        shutil.copy2(module, vendor / module.name)
    shutil.copy2(root / JAX_JS / "LICENSE", vendor / "LICENSE")
    (site / BOOK).write_text(
        json.dumps(_book, sort_keys=True) + "\n", encoding="utf-8"
    )  # as the store keeps it
    (site / FIGURES_FILE).write_text(
        json.dumps(_figures(site), ensure_ascii=False) + "\n", encoding="utf-8"
    )
