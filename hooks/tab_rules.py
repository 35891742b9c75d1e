"""Material's stylesheet without its rules for tab positions that no page has.

Material styles pymdownx's content tabs with one rule per tab position, 1 to 20, for the label,
the content, focus, no-JS and dialogs (about 160 selectors), each ending in ``:nth-child(N)``.
A selector whose last part has no class or tag is tried on every element of the page at every
restyle, and Material's bundle restyles the whole page five times as it loads: on the section
page those selectors took 45 % of all selector matching (Chromium's selector statistics), more
than every other rule together. The site's largest tab set has two tabs.

After the build, this hook writes the theme's ``main.*.min.css`` into the site again, from the
installed theme, without the selectors for positions above the most tabs any page of this
build has (pymdownx writes each set's count in ``data-tabs="set:count"``). A page with more
tabs keeps every rule it needs, since the count is taken from the pages each build. The
stylesheet keeps its name; its source map is left out, since it no longer matches. The result is
kept in the store's ``theme-stylesheet`` cache, keyed on the stylesheet, the count, this file and
build_support/theme.py, which does the rewriting.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError

from build_support import theme
from build_support.caching.cache import Cache, key_of
from build_support.theme import material_stylesheet, serve_rewritten, without_selectors

_TAB_COUNT = re.compile(r'class="tabbed-set[^"]*"[^>]*\bdata-tabs="\d+:(\d+)"')
_POSITION = re.compile(r":nth-child\((\d+)\)")


def tab_selector_position(selector: str) -> int | None:
    """The highest tab position a content-tabs selector names (None: not a tab rule)."""
    if "tabbed-" not in selector:
        return None
    positions = [int(n) for n in _POSITION.findall(selector)]
    return max(positions, default=None)


def trimmed(css: str, most_tabs: int) -> tuple[str, int]:
    """``css`` without the selectors for tab positions above ``most_tabs``; how many went."""

    def above(selector: str) -> bool:
        return (tab_selector_position(selector) or 0) > most_tabs

    return without_selectors(css, above)


class TabRules:
    """The most tabs in one tab set on any page of the running build."""

    def __init__(self) -> None:
        self.most = 0


_rules = TabRules()


def on_pre_build(config):
    _rules.most = 0


def on_post_page(output, page, config):
    counts = [int(n) for n in _TAB_COUNT.findall(output)]
    _rules.most = max(_rules.most, *counts, 0)
    return output


def on_post_build(config):
    source = material_stylesheet(config, "main")
    serve_rewritten(config, source, _stylesheet(source, _rules.most, config))


def _stylesheet(source: Path, most: int, config) -> str:
    """The trimmed stylesheet, from the store when this stylesheet, count and hook made it
    before: ``make serve`` loads the hooks afresh for every rebuild, and a parse takes 0.2 s."""
    css = source.read_bytes()
    key = key_of(css, str(most), Path(__file__).read_bytes(), Path(theme.__file__).read_bytes())
    cache = Cache.for_project("theme-stylesheet", Path(config.config_file_path).parent)
    kept = cache.read_text(key)
    if kept is not None:
        return kept
    text, dropped = trimmed(css.decode("utf-8"), most)
    if not dropped and most < 20:
        raise PluginError(f"tab_rules: no tab rule found in {source}; Material's markup changed")
    cache.write_text(key, text)
    return text
