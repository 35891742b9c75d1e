"""The headings a block prints, in its page's table of contents as markdown-exec puts them there
(its ``updatetoc``, on by default), whether the block ran in this build or was reused.

markdown-exec files the headings of a block's output under the HTML it rendered, which its
``InsertHeadings`` treeprocessor finds in the page. Here the page holds the output wrapped, so a
run's headings are filed again under the wrapper (``follow``), kept with its cache entry
(``kept``: each element, its text and whether that is final), and filed so by a reused block
(``file``). A heading holding raw HTML refers to the page's own HTML stash, which a later build
does not share: such a block is not stored, and runs every build.
"""

from __future__ import annotations

from typing import Any
from xml.etree.ElementTree import Element

from markdown.util import AtomicString
from markdown_exec import MarkdownConverter

INSERT_HEADINGS = "markdown_exec_insert_headings"  # markdown-exec's treeprocessor's name
_STASHED = "\x02wzxhzdk:"  # Python-Markdown's placeholder for stashed raw HTML


def _filed(md: Any) -> dict[str, list[Element]] | None:
    """The page's headings by the HTML they are filed under; None where no block of the page
    asked for its headings in the table of contents."""
    page_md = getattr(md, "_original_md", md)  # a block inside an ``md`` block: the page's
    processors = getattr(page_md, "treeprocessors", None)
    if processors is None or INSERT_HEADINGS not in processors:
        return None
    return processors[INSERT_HEADINGS].headings  # type: ignore[no-any-return]


def follow(md: Any, rendered: str, returned: str) -> None:
    """A run's headings, filed under ``rendered``, filed under ``returned`` (the page's HTML)."""
    filed = _filed(md)
    if filed is not None and rendered in filed:
        filed[returned] = filed.pop(rendered)


def kept(md: Any, rendered: str) -> list[Any] | None:
    """The headings a run of the block filed, as its entry keeps them ([] for none); None
    where they cannot be kept (raw HTML in a heading)."""
    filed = _filed(md)
    elements = filed.get(rendered, []) if filed is not None else []
    texts = (
        text for element in elements for each in element.iter() for text in (each.text, each.tail)
    )
    if any(_STASHED in text for text in texts if text):
        return None
    return [_data(element) for element in elements]


def file(md: Any, returned: str, headings: list[Any]) -> None:
    """A reused block's headings filed as its run filed them (markdown-exec's treeprocessors
    registered on the page, as a run would register them, where none did yet)."""
    if not headings or md is None:
        return
    if _filed(md) is None:
        counter = MarkdownConverter.counter  # a conversion of nothing: no id is numbered
        MarkdownConverter(getattr(md, "_original_md", md)).convert("")
        MarkdownConverter.counter = counter
    filed = _filed(md)
    if filed is not None:
        filed[returned] = [_element(data) for data in headings]


def _data(element: Element) -> list[Any]:
    return [
        element.tag,
        dict(element.attrib),
        [element.text, isinstance(element.text, AtomicString)],
        [element.tail, isinstance(element.tail, AtomicString)],
        [_data(child) for child in element],
    ]


def _element(data: list[Any]) -> Element:
    tag, attributes, (text, text_final), (tail, tail_final), children = data
    element = Element(tag, attributes)
    element.text = AtomicString(text) if text_final and text is not None else text
    element.tail = AtomicString(tail) if tail_final and tail is not None else tail
    element.extend(_element(child) for child in children)
    return element
