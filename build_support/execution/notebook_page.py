"""A notebook's page: rendered by mkdocs-jupyter from the executed notebook, or reused from the
execution cache for the same executed notebook and the same plugin options (nbconvert compiles
its templates on every call: half a second of every rebuild).

mkdocs-jupyter (0.26) renders in a ``render`` method it puts on the page in its own
``on_pre_page``; that method converts the file at ``page.file.abs_src_path``, a name it reads
from its closure, and has no parameter for another file. So the executed copy is rendered by
pointing that attribute at it for the length of the call (``_rendered_from``). The other way,
calling its ``convert.nb2html`` and its TOC reader ourselves, would copy its dozen options and
its title rule: more of its internals, not fewer. mkdocs-jupyter's own cache stays off
(``cache: false`` in mkdocs.yml): it keys on the source alone, not on the ``examples`` package.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..caching.cache import canonical, digest
from ..caching.environment import tool_versions
from .notebook_runs import executed_notebook, still_running

if TYPE_CHECKING:
    from .state import BuildState

RUNNING_NOTICE = (
    '<div class="admonition info notebook-running" role="status">\n'
    '<p class="admonition-title">This notebook is still running</p>\n'
    "<p>It runs again with your latest edit. Until it is done, this page shows its cells "
    "without their outputs; it reloads by itself once they are in.</p>\n</div>\n"
)
"""Under ``mkdocs serve``, at the top of a notebook's page while its run goes on: the served
site is always a whole build, and says which of its outputs are still running."""

# What turns an executed notebook into its page: their versions are in the page's key.
NOTEBOOK_RENDERERS = ("mkdocs-jupyter", "nbconvert", "mistune", "pygments")


def render_notebook_page(build: BuildState, page, render: Callable, config, files) -> None:
    """Set the page's content, table of contents and title: reused, or rendered by
    mkdocs-jupyter's ``render`` from the executed notebook (written to the build's scratch
    folder); under ``mkdocs serve``, while its run goes on, from its source, said so."""
    import nbformat

    if still_running(build, page.file.src_uri):  # mkdocs serve: shown as it is, said so
        source = Path(page.file.abs_src_path).read_text(encoding="utf-8")
        _rendered(build, page, render, config, files, {"source, still running": digest(source)})
        page.content = RUNNING_NOTICE + page.content
        return
    text = nbformat.writes(executed_notebook(build, page.file.src_uri))

    def from_executed(config, files):
        executed = (build.notebooks.scratch() / page.file.src_uri).with_suffix(".ipynb")
        executed.parent.mkdir(parents=True, exist_ok=True)
        executed.write_text(text, encoding="utf-8")
        with _rendered_from(page, executed):
            render(config, files)

    _rendered(build, page, from_executed, config, files, {"notebook": digest(text)})


def _rendered(build: BuildState, page, render: Callable, config, files, notebook: dict) -> None:
    """The page's content, table of contents and title: reused for the same ``notebook`` and
    the same plugin options and tools, or rendered by ``render`` and stored."""
    from mkdocs.structure.toc import get_toc

    jupyter = config.plugins["mkdocs-jupyter"].config
    ingredients = notebook | {
        "options": digest(canonical(dict(jupyter))),
        "tools": build.environment.tools,
        "renderer": tool_versions(NOTEBOOK_RENDERERS, build.environment.installed),
    }
    found = build.cache.look_up(ingredients)
    if found.entry is not None:
        page.content = found.entry["content"]
        page.toc = get_toc(found.entry["toc"])
        if found.entry["title"] is not None:
            page.title = found.entry["title"]
        return
    render(config, files)
    title = page.title if isinstance(page.title, str) else None
    stored = {"content": page.content, "toc": [_toc_token(link) for link in page.toc]}
    build.cache.keep(found, stored | {"title": title})


@contextlib.contextmanager
def _rendered_from(page, executed: Path) -> Iterator[None]:
    """mkdocs-jupyter's ``render`` reads the executed copy (see the module's notes)."""
    source = page.file.abs_src_path
    page.file.abs_src_path = str(executed)
    try:
        yield
    finally:
        page.file.abs_src_path = source


def _toc_token(link) -> dict[str, Any]:
    return {
        "level": link.level,
        "id": link.id,
        "name": link.title,
        "children": [_toc_token(child) for child in link.children],
    }
