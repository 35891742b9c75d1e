"""The installed Material theme's own assets, for the hooks that read them or serve them
rewritten (hooks/mermaid_svg.py, hooks/tab_rules.py, hooks/palette_switching.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import tinycss2
from mkdocs.exceptions import PluginError


def material_assets(config) -> Path:
    """The installed theme's ``assets`` folder (``theme.dirs`` also lists custom_dir and
    MkDocs' own templates, which have no bundle)."""
    for folder in map(Path, config.theme.dirs):
        if any((folder / "assets" / "javascripts").glob("bundle.*.min.js")):
            return folder / "assets"
    raise PluginError("Material's assets folder (with bundle.*.min.js) not found in theme.dirs")


def material_stylesheet(config, prefix: str) -> Path:
    """The theme's own ``<prefix>.<hash>.min.css`` (``main`` or ``palette``)."""
    found = sorted((material_assets(config) / "stylesheets").glob(f"{prefix}.*.min.css"))
    if not found:
        raise PluginError(f"Material's {prefix}.*.min.css not found in its assets folder")
    return found[0]


def serve_rewritten(config, source: Path, css: str) -> None:
    """Write ``css`` into the built site in place of the theme's stylesheet ``source`` (same
    name), and drop the source map beside it, which no longer matches."""
    target = Path(config.site_dir) / "assets" / "stylesheets" / source.name
    target.write_text(css, encoding="utf-8")
    target.with_name(f"{source.name}.map").unlink(missing_ok=True)


# ---------------------------------------------------------------- rewriting its stylesheets

_GROUPS = ("media", "supports", "layer", "container")  # at-rules that hold rules


def without_selectors(css: str, drop: Callable[[str], bool]) -> tuple[str, int]:
    """``css`` without each selector for which ``drop`` is true, inside at-rule groups too; a
    rule left with no selector goes whole. Returns the stylesheet and how many selectors went."""
    dropped = 0

    def rules(nodes: list) -> list:
        nonlocal dropped
        kept = []
        for node in nodes:
            if node.type == "qualified-rule":
                selectors = split_selectors(node.prelude)
                needed = [s for s in selectors if not drop(s)]
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


def split_selectors(prelude: list) -> list[str]:
    """A rule's selectors, split at top-level commas only: one inside ``:is(...)`` or
    ``:not(...)`` is part of a function token."""
    selectors, current = [], []
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            selectors.append(tinycss2.serialize(current).strip())
            current = []
        else:
            current.append(token)
    selectors.append(tinycss2.serialize(current).strip())
    return selectors
