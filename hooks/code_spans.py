"""Code listings without the token spans that draw nothing: names and whitespace.

Pygments wraps every token of a listing in a ``<span>`` with its token class. Material colours a
name (``.n``) with ``--md-code-hl-name-color``, which is the listing's own colour
(``--md-code-fg-color``), and gives whitespace (``.w``) no style at all: those spans look exactly
like the text around them. They were 211 of the section page's 2,400 elements, and every element
costs its share each time Material's bundle restyles the whole page on load (five times on a
phone, benchmarks/main_thread.py). Their text stays, so what a reader sees, selects and copies
is unchanged; every other token keeps its span and colour.

Only Material's highlighted blocks are touched (``<code>`` inside pymdownx's ``highlight``);
notebook pages colour their cells with nbconvert's own styles and are left as they are.
"""

from __future__ import annotations

import re

# The token classes whose span draws nothing (Material's stylesheet, mkdocs-material 9).
_UNSTYLED_TOKENS = ("n", "w")
_UNSTYLED_SPAN = re.compile(r'<span class="(?:' + "|".join(_UNSTYLED_TOKENS) + r')">([^<]*)</span>')
_CODE = re.compile(r"(<code[^>]*>)(.*?)(</code>)", re.DOTALL)


def without_unstyled_spans(html: str) -> str:
    """``html`` with the name and whitespace spans inside ``<code>`` replaced by their text."""
    return _CODE.sub(lambda m: m[1] + _UNSTYLED_SPAN.sub(r"\1", m[2]) + m[3], html)


def on_page_content(html, page, config, files):
    return without_unstyled_spans(html)
