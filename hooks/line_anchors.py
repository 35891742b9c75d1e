"""Code-line anchors unique on the page: ``#__codelineno-1-5`` is line 5 of the second listing.

pymdownx.highlight numbers listings per Markdown instance, and markdown-exec renders each
executed block with an instance of its own, so every listing it shows is listing 0: the NumPy
tab, the JAX tab and the sharding block all had ``__codelineno-0-N``, and a link to line 5 of
the JAX tab landed on the NumPy tab. pymdownx's own remedy, a code block ``#id`` that replaces
the number, cannot reach those blocks: markdown-exec writes their fences itself, without it.
So listings are numbered here, in page order, as one Markdown instance would have numbered
them. A listing given its own id keeps it.

The obsolete ``name`` attribute that pygments writes next to each ``id`` goes too: on an ``a``
without ``href`` the HTML validator rejects it, and the ``id`` alone is the link target.
"""

from __future__ import annotations

import re

_LISTING = re.compile(r'<div class="highlight">.*?</code></pre>', re.DOTALL)
_AUTO_ANCHOR = re.compile(r'(id="|href="#)__codelineno-\d+-(\d+)"')
_NAME = re.compile(r' name="__codelineno-[^"]*"')


def unique_line_anchors(html: str) -> str:
    """``html`` with each listing's numbered line anchors renumbered in page order."""
    listing_number = 0

    def renumber(listing: re.Match[str]) -> str:
        nonlocal listing_number
        text = _NAME.sub("", listing[0])
        if not _AUTO_ANCHOR.search(text):
            return text
        number = listing_number
        listing_number += 1
        return _AUTO_ANCHOR.sub(lambda m: f'{m[1]}__codelineno-{number}-{m[2]}"', text)

    return _LISTING.sub(renumber, html)


def on_page_content(html, page, config, files):
    return unique_line_anchors(html)
