"""Code-line anchors: unique on the page (hooks/line_anchors.py), and a link to a line inside a
content tab that is not showing opens that tab (docs/assets/javascripts/anchor-tabs.js)."""

from __future__ import annotations

from pathlib import Path

from testkit.hooks import load_hook
from testkit.project import SECTION_PAGE
from testkit.serving import serve
from testkit.site import page

line_anchors = load_hook("line_anchors")


def _listing(prefix: str, lines: int) -> str:
    """A listing as pymdownx writes it with anchor_linenums, its anchors named ``prefix``."""
    body = "".join(
        f'<a id="__codelineno-{prefix}-{n}" name="__codelineno-{prefix}-{n}" '
        f'href="#__codelineno-{prefix}-{n}"></a>line {n}\n'
        for n in range(1, lines + 1)
    )
    return f'<div class="highlight"><pre><span></span><code>{body}</code></pre></div>'


def test_listings_are_numbered_in_page_order_and_lose_the_obsolete_name():
    html = _listing("0", 2) + "<p>text</p>" + _listing("0", 3) + _listing("my-id", 1)
    fixed = line_anchors.unique_line_anchors(html)
    assert 'id="__codelineno-0-2"' in fixed and 'href="#__codelineno-0-2"' in fixed
    assert 'id="__codelineno-1-3"' in fixed and 'href="#__codelineno-1-3"' in fixed
    assert 'id="__codelineno-my-id-1"' in fixed  # an id given by the author is kept
    assert " name=" not in fixed
    assert fixed.count("__codelineno-0-") == 2 * 2  # id and href of the first listing only


def test_text_without_listings_is_left_alone():
    html = '<p><a href="#__codelineno-0-5">line 5</a> of the listing</p>'
    assert line_anchors.unique_line_anchors(html) == html


def _jax_tab_line(site: Path, line: int) -> str:
    soup = page(site)
    for label, block in zip(
        soup.select(".tabbed-labels label"), soup.select(".tabbed-block"), strict=False
    ):
        if "JAX" in label.get_text():
            anchor = block.select_one(f"[id^=__codelineno-][id$='-{line}']")
            assert anchor is not None, "the JAX tab's listing has no line anchors"
            return anchor["id"]
    raise AssertionError("no JAX tab on the section page")


def test_a_link_to_a_line_of_the_jax_tab_opens_the_jax_tab(browser, built_site):
    target = _jax_tab_line(built_site, 5)
    with serve(built_site) as base:
        context = browser.new_context()
        tab = context.new_page()
        tab.goto(f"{base}{SECTION_PAGE}/#{target}", wait_until="networkidle")
        tab.wait_for_function(
            f"document.getElementById('{target}').checkVisibility()", timeout=5_000
        )
        in_view = tab.evaluate(
            f"""() => {{
              const box = document.getElementById('{target}').getBoundingClientRect();
              return box.top >= 0 && box.bottom <= window.innerHeight;
            }}"""
        )
        checked_label = tab.evaluate(
            f"""() => {{
              const tabs = document.getElementById('{target}').closest('.tabbed-set');
              const input = tabs.querySelector(':scope > input:checked');
              return document.querySelector(`label[for="${{input.id}}"]`).textContent;
            }}"""
        )
        context.close()
    assert "JAX" in checked_label
    assert in_view
