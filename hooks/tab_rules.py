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
kept in the store's ``theme-stylesheet`` cache, keyed on the stylesheet, the count and this file.
"""

from __future__ import annotations

import re
from pathlib import Path

import tinycss2
from mkdocs.exceptions import PluginError

from build_support.caching.cache import Cache, key_of

_TAB_COUNT = re.compile(r'class="tabbed-set[^"]*"[^>]*\bdata-tabs="\d+:(\d+)"')
_POSITION = re.compile(r":nth-child\((\d+)\)")
_GROUPS = ("media", "supports", "layer", "container")  # at-rules that hold rules


def tab_selector_position(selector: str) -> int | None:
    """The highest tab position a content-tabs selector names (None: not a tab rule)."""
    if "tabbed-" not in selector:
        return None
    positions = [int(n) for n in _POSITION.findall(selector)]
    return max(positions, default=None)


def trimmed(css: str, most_tabs: int) -> tuple[str, int]:
    """``css`` without the selectors for tab positions above ``most_tabs``; how many went."""
    dropped = 0

    def rules(nodes: list) -> list:
        nonlocal dropped
        kept = []
        for node in nodes:
            if node.type == "qualified-rule":
                selectors = _split_selectors(node.prelude)
                needed = [s for s in selectors if (tab_selector_position(s) or 0) <= most_tabs]
                dropped += len(selectors) - len(needed)
                if not needed:
                    continue
                if len(needed) < len(selectors):
                    node.prelude = tinycss2.parse_component_value_list(",".join(needed))
            elif node.type == "at-rule" and node.lower_at_keyword in _GROUPS and node.content:
                inner = rules(tinycss2.parse_rule_list(node.content, skip_comments=True))
                node.content = tinycss2.parse_component_value_list(tinycss2.serialize(inner))
            kept.append(node)
        return kept

    sheet = tinycss2.parse_stylesheet(css, skip_comments=True)
    return tinycss2.serialize(rules(sheet)), dropped


def _split_selectors(prelude: list) -> list[str]:
    # Top-level commas only: one inside :is(...) or :not(...) is part of a function token.
    selectors, current = [], []
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            selectors.append(tinycss2.serialize(current).strip())
            current = []
        else:
            current.append(token)
    selectors.append(tinycss2.serialize(current).strip())
    return selectors


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
    source = _material_stylesheet(config)
    target = Path(config.site_dir) / "assets" / "stylesheets" / source.name
    target.write_text(_stylesheet(source, _rules.most, config), encoding="utf-8")
    (target.parent / f"{source.name}.map").unlink(missing_ok=True)


def _stylesheet(source: Path, most: int, config) -> str:
    """The trimmed stylesheet, from the store when this stylesheet, count and hook made it
    before: ``make serve`` loads the hooks afresh for every rebuild, and a parse takes 0.2 s."""
    css = source.read_bytes()
    key = key_of(css, str(most), Path(__file__).read_bytes())
    cache = Cache.for_project("theme-stylesheet", Path(config.config_file_path).parent)
    kept = cache.read_text(key)
    if kept is not None:
        return kept
    text, dropped = trimmed(css.decode("utf-8"), most)
    if not dropped and most < 20:
        raise PluginError(f"tab_rules: no tab rule found in {source}; Material's markup changed")
    cache.write_text(key, text)
    return text


def _material_stylesheet(config) -> Path:
    # The installed theme's own stylesheet (theme.dirs also lists custom_dir and mkdocs').
    for folder in map(Path, config.theme.dirs):
        found = sorted((folder / "assets" / "stylesheets").glob("main.*.min.css"))
        if found:
            return found[0]
    raise PluginError("tab_rules: Material's main.*.min.css not found in theme.dirs")
