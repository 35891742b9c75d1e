"""Each page's HTML, as the theme's templates render it, reused from the store while nothing
that feeds it changed (build_support/rendering/page_cache.py): a build with nothing changed, or
a prose edit under ``make serve``, stops rendering Material's templates (the whole navigation
with them) for every page. Every other hook and plugin runs as before: ``on_page_context``
before the render, ``on_post_page`` on the HTML, reused or rendered. The templates a render
needs are compiled once, kept in the store too (``build_support/serve_templates.py``)."""

from __future__ import annotations

import importlib.util
import logging
import sys
from pathlib import Path

from mkdocs.plugins import event_priority

if importlib.util.find_spec("build_support") is None:  # not installed with the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from build_support import serve_staging, settings
from build_support.caching.cache import Cache
from build_support.rendering.page_cache import PageRenders, reuse_renders
from build_support.serve_templates import StoredTemplates

log = logging.getLogger("mkdocs.hooks.page_render_cache")

_renders: PageRenders | None = None  # this build's, made anew by each build's on_config


def on_config(config):
    global _renders
    own = settings.of(config)
    project = Path(config.config_file_path).parent.resolve()
    _renders = PageRenders.for_build(project, own.cache_dir, own.fresh)
    return config


@event_priority(-100)  # last: the environment every other plugin and hook has set up
def on_env(env, config, files):
    own = settings.of(config)
    if not serve_staging.SERVE.lock.serving and not own.fresh:  # a serve keeps them in memory
        env.bytecode_cache = StoredTemplates(Cache("templates", _renders.cache.store))
    return reuse_renders(env, _renders)


def on_post_build(config):
    log.info("Page renders: %s", _renders.summary())
