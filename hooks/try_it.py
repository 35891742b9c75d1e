"""The "Try it here" panel's files in the built site: jax-js, and the book's data as JSON.

The panel (``docs/assets/javascripts/try-it/``) runs the section's practice in the reader's
browser with jax-js. Its ESM build is copied from ``node_modules/@jax-js/jax/dist`` (pinned in
``package-lock.json``) into ``assets/vendor/jax-js/`` of the built site, so each version that
mike deploys serves its own copy from the site itself: no CDN, no other host. A missing copy
fails the build (``make setup`` installs it).

``try-it/book.json`` holds what the panel computes from: the manuscript's batch and weights and
the practice's probe sizes, read from ``examples/data.py`` (cached like a block, as
``hooks/live_numbers.py`` does), never typed into the browser code.
"""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

JAX_JS = Path("node_modules/@jax-js/jax")
VENDOR = Path("assets/vendor/jax-js")
BOOK = Path("assets/javascripts/try-it/book.json")


def _book() -> dict:
    from examples import data  # imported late: `mkdocs serve` reloads examples

    return {
        "batch": [list(row) for row in data.BATCH],
        "weights": list(data.WEIGHTS),
        "probe_batch_sizes": list(data.PROBE_BATCH_SIZES),
        "probe_feature_sizes": list(data.PROBE_FEATURE_SIZES),
    }


def on_post_build(config) -> None:
    from build_support.execution import state  # loaded by hooks/execution.py

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
    book = state.current().cached_value("try_it_book", _book, inspect.getsource(_book))
    (site / BOOK).write_text(json.dumps(book) + "\n")
