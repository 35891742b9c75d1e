"""Material's palette stylesheet without the rule that restyles the whole page on every load.

Material turns CSS transitions off while it switches the colour palette, with one rule:
``[data-md-color-switching] *`` (and ``:before``, ``:after``) ``{transition-duration: 0s}``. Its
palette component also applies the stored palette as every page loads: it sets that attribute on
``<body>``, then removes it a task later. A rule on a body attribute over ``*`` makes each of
those two changes invalidate every element, so the page is restyled whole twice while it loads:
about 100 ms of a phone's main thread on the section page (benchmarks/main_thread.py, the
``components/palette`` row), for a rule that changes nothing when the palette does not change.

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
