"""The header's palette toggle (overrides/partials/palette.html, its script in
overrides/partials/javascripts/palette.html, and palette-switch.js): Material's markup and stored
choice, switched without Material's palette component, whose color-scheme <meta> restyled the
whole page twice on every load. What a reader sees must not change: the toggle for the palette in
use, a choice that holds from page to page (now before Material's bundle has run), the system's
setting on a first visit, Enter on the toggle, the browser's bar in the header's colour, and the
browser's own parts in the scheme's colours."""

from __future__ import annotations

import re
from pathlib import Path

import material

from testkit.browser_pages import MATERIAL_BUNDLE, open_page
from testkit.project import ROOT, SECTION_PAGE

STATE = """() => ({
  scheme: document.body.dataset.mdColorScheme,
  rootScheme: getComputedStyle(document.documentElement).colorScheme,
  toggles: [...document.querySelectorAll("[data-course-palette] label")]
    .filter((label) => !label.hidden)
    .map((label) => label.htmlFor),
  stored: Object.keys(localStorage).filter((key) => key.endsWith("__palette")).length,
})"""

TOGGLE = "[data-course-palette] label:not([hidden])"


def state(tab) -> dict:
    return tab.evaluate(STATE)


def test_a_first_visit_takes_the_system_s_setting_before_material_s_bundle_runs(
    browser, served_site
):
    for system, scheme, root_scheme, toggle_for in (
        ("light", "default", "normal", "__palette_1"),
        ("dark", "slate", "dark", "__palette_0"),
    ):
        tab = open_page(browser, system)
        tab.context.route(MATERIAL_BUNDLE, lambda route: route.abort())
        tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="load")
        assert state(tab) == {
            "scheme": scheme,
            "rootScheme": root_scheme,
            "toggles": [toggle_for],  # one toggle shown: to the other palette
            "stored": 0,  # nothing chosen yet: the site follows the system
        }, system
        tab.context.close()


def test_a_reader_s_choice_holds_on_the_next_page_before_material_s_bundle_runs(
    browser, served_site
):
    tab = open_page(browser, "light")
    tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
    tab.locator(TOGGLE).click()
    tab.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    chosen = state(tab)
    tab.context.route(MATERIAL_BUNDLE, lambda route: route.abort())
    tab.goto(f"{served_site}glossary/", wait_until="load")
    assert (
        state(tab)
        == chosen
        == {
            "scheme": "slate",
            "rootScheme": "dark",
            "toggles": ["__palette_0"],
            "stored": 1,
        }
    )
    tab.context.close()


def test_the_stored_choice_is_material_s_so_its_pages_read_it_too(browser, served_site):
    """A choice stored by Material's palette component (a build before this one) still holds, and
    pages built with that component read the ones stored here."""
    tab = open_page(browser, "light")
    tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
    tab.locator(TOGGLE).click()
    stored = tab.evaluate("__md_get('__palette')")
    inputs = tab.evaluate(
        """[...document.querySelectorAll("[data-course-palette] > input")].map((input) =>
             Object.fromEntries(["media", "scheme", "primary", "accent"].map((key) =>
               [key, input.getAttribute(`data-md-color-${key}`)])))"""
    )
    tab.context.close()
    assert stored == {"index": 1, "color": inputs[1]}


def test_enter_on_the_toggle_switches_and_the_focus_follows_the_palette_chosen(
    browser, served_site
):
    """As in Material: Enter picks the next palette, and its radio button takes the focus."""
    tab = open_page(browser, "light")
    tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
    tab.focus("#__palette_1")
    focused = []
    for scheme in ("slate", "default"):
        tab.keyboard.press("Enter")
        tab.wait_for_function(f"document.body.dataset.mdColorScheme === '{scheme}'")
        focused.append(tab.evaluate("document.activeElement.id"))
    tab.context.close()
    assert focused == ["__palette_1", "__palette_0"]


HEADER_AND_BAR = """() => [
  getComputedStyle(document.querySelector(".md-header")).backgroundColor,
  document.querySelector("meta[name=theme-color]")?.content,
]"""


def test_the_browser_s_bar_takes_the_header_s_colour_after_load_and_after_a_switch(
    browser, served_site
):
    tab = open_page(browser, "light")
    tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
    tab.wait_for_function("document.querySelector('meta[name=theme-color]')")
    header, bar = tab.evaluate(HEADER_AND_BAR)
    assert bar == header and header.startswith("rgb")
    tab.evaluate("document.body.style.setProperty('--md-primary-fg-color', '#123456')")
    tab.locator(TOGGLE).click()
    header, bar = tab.evaluate(HEADER_AND_BAR)
    assert bar == header == "rgb(18, 52, 86)"
    tab.context.close()


# Recorded from before the page's first byte: every color-scheme <meta> added or changed.
WATCH_COLOR_SCHEME_META = """
window.__colorSchemeMeta = [];
new MutationObserver((records) => {
  for (const record of records) {
    const nodes = record.type === "attributes" ? [record.target] : [...record.addedNodes];
    for (const node of nodes)
      if (node.nodeName === "META" && node.getAttribute("name") === "color-scheme")
        window.__colorSchemeMeta.push(record.type);
  }
}).observe(document, { childList: true, subtree: true, attributes: true });
"""


def test_loading_a_page_adds_or_changes_no_color_scheme_meta(browser, served_site):
    """Chromium restyles the whole page for each change to a color-scheme <meta>; Material's
    palette component made two on every load."""
    tab = open_page(browser, "dark")
    tab.context.add_init_script(WATCH_COLOR_SCHEME_META)
    tab.goto(f"{served_site}{SECTION_PAGE}/", wait_until="networkidle")
    tab.wait_for_function("document.querySelector('meta[name=theme-color]')")
    assert tab.evaluate("window.__colorSchemeMeta") == []
    assert state(tab)["scheme"] == "slate"
    tab.context.close()


COMMENT = re.compile(r"\{#.*?#\}\s*", re.DOTALL)


def test_the_toggle_is_material_s_markup_but_for_the_component_it_mounts():
    """overrides/partials/palette.html is a copy of Material's partial: after an upgrade of
    Material it must still be the same, but for the one attribute."""
    theirs = Path(material.__file__).parent / "templates" / "partials" / "palette.html"
    ours = ROOT / "overrides" / "partials" / "palette.html"
    expected = COMMENT.sub("", theirs.read_text()).replace(
        'data-md-component="palette"', "data-course-palette"
    )
    assert COMMENT.sub("", ours.read_text()) == expected
