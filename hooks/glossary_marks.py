"""A glossary tooltip at the first use of each term on a page, not at every use.

The ``abbr`` extension marks every occurrence of every glossary term: the section page had 102
marks ("batch" 40 times, "GPU" 30). Material's ``content.tooltips`` mounts a tooltip component
on each element with a ``title`` when the page loads (focus and hover watchers and a timer
each), all in the one task that runs its components at DOMContentLoaded, which a phone's
Lighthouse counts as blocking time (benchmarks/main_thread.py, benchmarks/lighthouse.py).
Marking the first use in each section still left 43 marks on the section page; at the first
use on the page there are 10, one per term, and that task took about a quarter less time
(the closing note of issue 22 has the figures). A reader meets each term's tooltip where the
page first uses it, as a printed text spells a term out at its first use, and the glossary
page holds every definition; later uses are plain text. A term in a heading keeps its mark
and does not count.

The headings' permalinks (``¶``) carry ``title="Permanent link"`` and got a tooltip each too: the
title becomes their accessible name (``aria-label``), with no tooltip to mount.
"""

from __future__ import annotations

import re

_HEADING = re.compile(r"<h([1-6])[\s>].*?</h\1>", re.DOTALL)
_ABBR = re.compile(r'<abbr title="([^"]*)">(.*?)</abbr>', re.DOTALL)


def first_marks(html: str) -> str:
    """``html`` with each glossary term's mark kept only at its first use outside headings."""
    seen: set[str] = set()
    headings = [match.span() for match in _HEADING.finditer(html)]

    def keep_first(match: re.Match[str]) -> str:
        if any(start <= match.start() < end for start, end in headings):
            return match[0]
        term = match[2].lower()
        if term in seen:
            return match[2]
        seen.add(term)
        return match[0]

    return _ABBR.sub(keep_first, html)


_PERMALINK = re.compile(r'(<a class="headerlink" href="[^"]*") title="(Permanent link)"')


def named_permalinks(html: str) -> str:
    """Permalinks named by ``aria-label`` instead of ``title`` (no tooltip to mount for them)."""
    return _PERMALINK.sub(r'\1 aria-label="\2"', html)


def on_page_content(html, page, config, files):
    return named_permalinks(first_marks(html))
