"""Offer each notebook page's ``.ipynb`` (and its jupytext or MyST source) for download.

mkdocs-jupyter renders a jupytext ``.py`` source; ``include_source`` copies that ``.py`` next
to the page. This hook writes the ``.ipynb`` beside it and links both with *relative* URLs
(``page.nb_url`` is absolute: it breaks under ``mkdocs serve`` and inside a mike version folder).
A MyST ``.md`` notebook's source is copied beside its page here; an ``.ipynb`` is its own
source. The line says the first cell installs this version's package only where the notebook
has the course's set-up cell (its ``{{ install.requirement }}``).
"""

from __future__ import annotations

import html
import importlib.metadata
import platform
import shutil
from pathlib import Path

from build_support.caching.cache import Cache, key_of
from build_support.notebooks import kernels

# What the .ipynb is made with: its key in the store, beside the jupytext source's text, so
# that a build where nothing changed neither imports jupytext nor converts again.
_MADE_BY = (
    Path(__file__).read_bytes(),
    Path(kernels.__file__).read_bytes(),  # read_jupytext: its cell ids
    *(f"{name} {importlib.metadata.version(name)}" for name in ("jupytext", "nbformat")),
    platform.python_version(),
)
_cache: dict[str, Cache] = {}  # this build's (a fault is reported once per build)


def _notebook_name(page) -> str:
    return Path(page.file.src_uri).stem + ".ipynb"


def on_config(config):
    _cache["ipynb"] = Cache.for_project("notebook-ipynb", Path(config.config_file_path).parent)
    return config


def notebook_text(source: Path) -> str:
    """The ``.ipynb`` of the jupytext ``source``: made once, then read from the store."""
    key = key_of(*_MADE_BY, source.read_bytes())
    text = _cache["ipynb"].read_text(key)
    if text is None:
        import jupytext  # only where it converts

        text = jupytext.writes(kernels.read_jupytext(source), fmt="ipynb")
        text += "" if text.endswith("\n") else "\n"  # as jupytext.write ends a file
        _cache["ipynb"].write_text(key, text)
    return text


SETUP_MARK = "{{ install.requirement }}"  # the course's set-up cell installs this


def download_line(src_uri: str, source_text: str) -> str:
    """The download paragraph of the notebook ``src_uri``: what it says is true of it."""
    notebook = html.escape(Path(src_uri).stem + ".ipynb")
    source = html.escape(Path(src_uri).name)
    run = "then run it top to bottom in Jupyter"
    if SETUP_MARK in source_text:
        run += ": its first cell installs this version's package where it is missing"
    kind = {".py": "jupytext source", ".md": "MyST source"}.get(Path(src_uri).suffix)
    other = f' · <a href="{source}" download>{kind}</a>' if kind else ""
    return (
        '<p class="notebook-download">'
        f'<a href="{notebook}" download>Download this notebook ({notebook})</a>, {run}{other}</p>'
    )


def on_page_content(content, page, config, files):
    if not getattr(page, "nb_url", None):  # set by mkdocs-jupyter on the pages it renders
        return content
    source_text = Path(page.file.abs_src_path).read_text(encoding="utf-8")
    links = download_line(page.file.src_uri, source_text)
    heading_end = content.find("</h1>")
    if heading_end == -1:
        return links + content
    heading_end += len("</h1>")
    return content[:heading_end] + links + content[heading_end:]


def on_post_page(output, page, config):
    if getattr(page, "nb_url", None):
        target = Path(page.file.abs_dest_path).parent / _notebook_name(page)
        target.parent.mkdir(parents=True, exist_ok=True)
        source = Path(page.file.abs_src_path)
        if source.suffix == ".ipynb":  # its own download, as its author wrote it
            shutil.copyfile(source, target)
        else:
            target.write_text(notebook_text(source), encoding="utf-8")
        if source.suffix == ".md":  # mkdocs-jupyter's include_source copies only its own
            shutil.copyfile(source, target.with_name(source.name))
    return output
