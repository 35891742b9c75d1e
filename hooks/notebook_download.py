"""Offer each notebook page's ``.ipynb`` (and its jupytext source) for download.

mkdocs-jupyter renders a jupytext ``.py`` source; ``include_source`` copies that ``.py`` next
to the page. This hook writes the ``.ipynb`` beside it and links both with *relative* URLs
(``page.nb_url`` is absolute: it breaks under ``mkdocs serve`` and inside a mike version folder).
"""

from __future__ import annotations

import html
from pathlib import Path

import jupytext

from build_support.execution.notebooks import read_jupytext


def _notebook_name(page) -> str:
    return Path(page.file.src_uri).stem + ".ipynb"


def on_page_content(content, page, config, files):
    if not getattr(page, "nb_url", None):  # set by mkdocs-jupyter on the pages it renders
        return content
    notebook = html.escape(_notebook_name(page))
    source = html.escape(Path(page.file.src_uri).name)
    links = (
        '<p class="notebook-download">'
        f'<a href="{notebook}" download>Download this notebook ({notebook})</a>, '
        "then run it top to bottom in Jupyter: its first cell installs this version's package "
        "where it is missing · "
        f'<a href="{source}" download>jupytext source</a></p>'
    )
    heading_end = content.find("</h1>")
    if heading_end == -1:
        return links + content
    heading_end += len("</h1>")
    return content[:heading_end] + links + content[heading_end:]


def on_post_page(output, page, config):
    if getattr(page, "nb_url", None):
        target = Path(page.file.abs_dest_path).parent / _notebook_name(page)
        target.parent.mkdir(parents=True, exist_ok=True)
        jupytext.write(read_jupytext(page.file.abs_src_path), target, fmt="ipynb")
    return output
