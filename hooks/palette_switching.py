"""Material's palette stylesheet without the rule it restyled the whole page with on every load.

Material turns CSS transitions off while it switches the colour palette, with one rule:
``[data-md-color-switching] *`` (and ``:before``, ``:after``) ``{transition-duration: 0s}``. Its
palette component sets that attribute on ``<body>`` as every page loads, then removes it a task
later, and each change invalidated every element: the page was restyled whole twice while it
loaded (about 100 ms of a phone's main thread on the section page, benchmarks/main_thread.py).
The site no longer mounts that component (overrides/partials/palette.html), so nothing sets the
attribute; the rule would still end in ``*``, and be tried on every element at every restyle.

After the build, this hook writes the theme's ``palette.*.min.css`` into the site again without
that rule (and without the source map, which no longer matches). ``palette-switch.js`` adds the
same rule, in a ``<style>`` of its own, only while the reader switches the palette, so a switch
still runs no transition, as in Material, and a page load pays for neither the attribute nor a
rule ending in ``*``.
"""

from __future__ import annotations

from mkdocs.exceptions import PluginError

from build_support.theme import material_stylesheet, serve_rewritten, without_selectors

SWITCHING = "[data-md-color-switching]"


def without_switching_rule(css: str) -> tuple[str, int]:
    """``css`` without the selectors that start at ``SWITCHING``; how many went."""
    return without_selectors(css, lambda selector: selector.startswith(SWITCHING))


def on_post_build(config):
    source = material_stylesheet(config, "palette")
    css, dropped = without_switching_rule(source.read_text(encoding="utf-8"))
    if dropped != 3:  # the rule's *, :after and :before
        raise PluginError(
            f"palette_switching: expected 3 {SWITCHING} selectors in {source}, found {dropped}: "
            "Material's palette changed; see the hook's docstring"
        )
    serve_rewritten(config, source, css)
