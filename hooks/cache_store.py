"""Keeps the store of every cache (build_support/caching/store.py) within its bound: at the end
of each build, the least recently used entries past ``LIMIT_BYTES`` are deleted. The store's
size is kept per folder (``.usage.json``): a build counts again only the folders it changed,
and every entry is walked only when the bound may be passed (``FileStore.prune``)."""

from __future__ import annotations

import logging
from pathlib import Path

from build_support.caching.store import LIMIT_BYTES, FileStore, store_root

log = logging.getLogger("mkdocs.hooks.cache_store")


def on_post_build(config):
    store = FileStore(store_root(Path(config.config_file_path).parent))
    removed = store.prune(LIMIT_BYTES)
    if removed:
        log.info(
            "Cache store: %d least recently used entries pruned (bound %d MB)",
            removed,
            LIMIT_BYTES // 2**20,
        )
