"""A notebook's page through the build: its run reused from the execution cache or started in
the background (``start_notebooks``; the runs: ``kernels.py``), its page rendered from the
executed notebook (as Jupyter Book renders it, ``jupyter_book.py``; a ``.py`` with the course's
set-up cell by mkdocs-jupyter, or reused: ``formats.as_jupyter_book``), and its run recorded as
a ``Run``.

A page is reused for the same executed notebook and plugin options: nbconvert compiles its
templates on every call, half a second of every rebuild. mkdocs-jupyter's ``render`` (put on the
page by its ``on_pre_page``) converts the file at ``page.file.abs_src_path`` and takes no other,
so that attribute points at the executed copy for the length of the call; calling its
``convert.nb2html`` ourselves would copy its dozen options and its title rule. Its own cache
stays off (``cache: false``): it keys on the source alone, not on the ``examples`` package.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..caching.cache import Cache, canonical, digest
from ..caching.environment import tool_versions
from ..cluster import shards
from ..publishing.runs import Run
from . import formats, jupyter_book, kernels, myst, tex

if TYPE_CHECKING:
    from ..execution.state import BuildState

_PRINTED_LABEL = re.compile(r"computed on [^<\n]+")  # where the kernel said it ran
STILL_RUNNING = "still running (make serve)"  # where a run still going on ran, recorded
RUNNING_NOTICE = (
    '<div class="admonition info notebook-running" role="status">\n'
    '<p class="admonition-title">This notebook is still running</p>\n'
    "<p>It runs again with your latest edit. Until it is done, this page shows its cells "
    "without their outputs; it reloads by itself once they are in.</p>\n</div>\n"
)
"""Under ``mkdocs serve``, at the top of a notebook's page while its run goes on: the served
site is always a whole build, and says which of its outputs are still running."""

log = logging.getLogger("mkdocs.hooks.execution")

# What turns an executed notebook into its page: their versions are in the page's key.
NOTEBOOK_RENDERERS = ("mkdocs-jupyter", "nbconvert", "mistune", "pygments")


def start_notebooks(
    build: BuildState, pages: list[tuple[str, Path, str]], kernel_name: str
) -> None:
    """Each notebook (``src_uri``, its path, its format: ``formats.py``) reused from the
    cache, or run in the background; a run's notebook is stored once its cells have all run.
    An ``.ipynb`` that asks to be shown as stored is read, not run."""
    import nbformat

    for src_uri, path, kind in pages:
        build.notebooks.kinds[src_uri] = kind
        build.notebooks.paths[src_uri] = path
        source = path.read_text(encoding="utf-8")
        if formats.as_jupyter_book(kind, source):
            build.notebooks.jupyter_book.add(src_uri)
        if kind == formats.KIND_IPYNB and formats.shown_as_stored(json.loads(source)):
            run = kernels.NotebookRun(src_uri, ran=False, reasons=[formats.STORED])
            run.result.set_result(kernels.read_notebook(path))
            run.cells_done.set()
            build.notebooks.runs[src_uri] = run
            continue
        ingredients = build.environment.ingredients(
            code_cells(kind, source), source=digest(source), kernel=kernel_name
        )
        run = kernels.NotebookRun(src_uri, says_where=src_uri in build.notebooks.jupyter_book)
        build.notebooks.runs[src_uri] = run
        found = build.cache.look_up(ingredients, identity=src_uri)
        running = build.notebooks.threads.runs.get(src_uri)  # mkdocs serve: an earlier rebuild's
        if running is not None and (found.entry is not None or running.key != found.key):
            running.cancel()  # done and stored, or its notebook or what it reaches changed
            build.notebooks.threads.runs.pop(src_uri)
        elif running is not None:  # the same key: this build takes that run over
            build.notebooks.runs[src_uri] = running
            if running.result.done():
                build.notebooks.threads.runs.pop(src_uri)  # its end is shown once
            continue
        shards.notebook_looked_up(build, src_uri, found.entry)  # RENDER_ONLY=1, SHARD=k/n
        if found.entry is not None:  # no kernel: the notebook comes from the cache
            run.ran = False
            run.result.set_result(nbformat.reads(found.entry["notebook"], as_version=4))
            run.cells_done.set()
            continue
        run.reasons, run.key = found.reasons, found.key

        def keep(notebook, seconds, found=found):
            build.cache.keep(found, {"notebook": nbformat.writes(notebook), "seconds": seconds})

        def start(path=path, run=run, keep=keep):
            build.notebooks.start(path, kernel_name, run, keep)

        shards.start_notebook(build, run, path, start)  # held back by RENDER_ONLY=1, SHARD=k/n


_MAGIC = re.compile(r"^(\s*)[%!]")  # an IPython magic or shell line: ``%timeit f()``, ``!pip``


def code_cells(kind: str, source: str) -> str:
    """What a notebook runs, as Python, for its key's reach of ``examples`` (``reach.py``
    parses it; its whole text stays in the key as ``source``): a jupytext ``.py`` as it is, an
    ``.ipynb``'s or a MyST notebook's code cells (a MyST cell's options left out), each magic
    line a ``pass``. Its Markdown, or the JSON around the cells, would not parse, and the key
    would hold the whole package. Read without jupytext: a build whose notebooks are all
    cached never imports it."""
    if kind == formats.KIND_JUPYTEXT:
        return source
    if kind == formats.KIND_IPYNB:
        cells = [
            "".join(cell.get("source", ""))
            if isinstance(cell.get("source"), list)
            else str(cell.get("source", ""))
            for cell in json.loads(source).get("cells", [])
            if cell.get("cell_type") == "code"
        ]
    else:
        from markdown_it import MarkdownIt

        tokens = MarkdownIt("commonmark").parse(source)
        cells = [
            _without_options(token.content)
            for token in tokens
            if token.type == "fence" and token.info.strip().startswith("{code-cell}")
        ]
    lines = [_MAGIC.sub(r"\1pass  # ", line) for cell in cells for line in [*cell.splitlines(), ""]]
    return "\n".join(lines)


def _without_options(content: str) -> str:
    """A MyST code cell's code: without its ``:tags: [...]`` lines or ``---`` YAML block."""
    lines = content.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((at for at in range(1, len(lines)) if lines[at].strip() == "---"), 0)
        return "\n".join(lines[end + 1 :])
    at = 0
    while at < len(lines) and re.match(r"^:[\w-]+:", lines[at]):
        at += 1
    return "\n".join(lines[at:])


def still_running(build: BuildState, src_uri: str) -> bool:
    """Under ``mkdocs serve``: the notebook's run has not ended; its page says so."""
    run = build.notebooks.runs[src_uri]
    return build.notebooks.background and not run.result.done()


def render_notebook_page(build: BuildState, page, render: Callable, config, files) -> None:
    """Set the page's content, table of contents and title: reused, or rendered by
    mkdocs-jupyter's ``render`` from the executed notebook (written to the build's scratch
    folder); under ``mkdocs serve``, while its run goes on, from its source, said so. A failed
    run fails the build."""
    import nbformat
    from mkdocs.exceptions import PluginError

    src_uri = page.file.src_uri
    if src_uri in build.notebooks.jupyter_book:
        _render_as_jupyter_book(build, page, files)
        return
    if still_running(build, src_uri):  # mkdocs serve: shown as it is, said so
        source = Path(page.file.abs_src_path).read_text(encoding="utf-8")
        _rendered(build, page, render, config, files, {"source, still running": digest(source)})
        page.content = RUNNING_NOTICE + page.content
        return
    try:
        text = nbformat.writes(build.notebooks.runs[src_uri].result.result())
    except Exception as error:  # a NotebookError names its cell in a line; another is shown whole
        apart = " " if isinstance(error, kernels.NotebookError) else "\n"
        raise PluginError(f"notebook {src_uri} failed to execute:{apart}{error}") from error

    def from_executed(config, files):
        executed = (build.notebooks.scratch() / src_uri).with_suffix(".ipynb")
        executed.parent.mkdir(parents=True, exist_ok=True)
        executed.write_text(text, encoding="utf-8")
        source, page.file.abs_src_path = page.file.abs_src_path, str(executed)
        try:  # mkdocs-jupyter's ``render`` reads the executed copy (see the module's notes)
            render(config, files)
        finally:
            page.file.abs_src_path = source

    _rendered(build, page, from_executed, config, files, {"notebook": digest(text)})


def _render_as_jupyter_book(build: BuildState, page, files) -> None:
    """An ``.ipynb`` or MyST notebook's page (``jupyter_book.py``): from its executed copy (a
    failed run fails the build); under ``mkdocs serve``, while its run goes on, from its source
    without outputs, said so. Rendered on every build: it is quick, and its links depend on the
    other pages."""
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.toc import get_toc

    src_uri = page.file.src_uri
    running = still_running(build, src_uri)
    if running:
        notebook = kernels.read_notebook(Path(page.file.abs_src_path))
    else:
        try:
            notebook = build.notebooks.runs[src_uri].result.result()
        except Exception as error:
            apart = " " if isinstance(error, kernels.NotebookError) else "\n"
            raise PluginError(f"notebook {src_uri} failed to execute:{apart}{error}") from error
    try:
        rendered = jupyter_book.render_notebook(notebook, _resolver(build, page, files))
        content = tex.as_mathml(rendered.content, Cache.for_project("math", build.project_root))
    except (jupyter_book.NotebookPageError, tex.TexError) as error:
        raise PluginError(f"notebook {src_uri}: {error}") from error
    for unresolved in rendered.unresolved:  # as Sphinx says it, but not a failure: a tutorial
        log.info("notebook %s: %s", src_uri, unresolved)  # names its own project's other pages
    page.content = (RUNNING_NOTICE if running else "") + content
    page.toc = get_toc(jupyter_book.toc_tokens(rendered.headings))
    page._title_from_render = rendered.title  # MkDocs' own: a nav title comes first
    # The download and Colab links go on the pages mkdocs-jupyter marks so (its ``nb_url``)
    page.nb_url = f"{Path(src_uri).stem}.ipynb"


def _labels(build: BuildState) -> dict[str, tuple[str, str]]:
    """Every ``(label)=`` target of the build's ``.ipynb`` and MyST notebooks: its page and the
    title a ``{ref}`` to it shows (``myst.targets``); read once per build, from the sources."""
    if build.notebooks.labels is None:
        labels: dict[str, tuple[str, str]] = {}
        for src_uri in build.notebooks.kinds:
            if src_uri not in build.notebooks.jupyter_book or src_uri not in build.notebooks.paths:
                continue
            notebook = kernels.read_notebook(build.notebooks.paths[src_uri])
            cells = notebook.cells
            for cell, after in zip(cells, [*cells[1:], None], strict=True):
                if cell.cell_type != "markdown":
                    continue
                next_text = after.source if after and after.cell_type == "markdown" else ""
                for label, title in myst.targets(cell.source, next_text):
                    labels.setdefault(label, (src_uri, title))
        build.notebooks.labels = labels
    return build.notebooks.labels


def _resolver(build: BuildState, page, files) -> myst.Resolver:
    """Where this page's ``{ref}``, ``{doc}`` and relative links go (``myst.Resolver``)."""
    import posixpath

    here = page.file

    def document(path: str):
        if not path or path.startswith("/"):
            return None
        base = posixpath.normpath(posixpath.join(posixpath.dirname(here.src_uri), path))
        for candidate in (base, *(base + suffix for suffix in (".md", ".ipynb", ".py"))):
            file = files.get_file_from_path(candidate)
            if file is not None:
                title = getattr(getattr(file, "page", None), "title", None)
                return file.url_relative_to(here), title or posixpath.basename(path)
        return None

    def label(name: str):
        found = _labels(build).get(name)
        if found is None:
            return None
        src_uri, title = found
        if src_uri == here.src_uri:
            return f"#{name}", title
        file = files.get_file_from_path(src_uri)
        return (f"{file.url_relative_to(here)}#{name}", title) if file is not None else None

    return myst.Resolver(label=label, document=document)


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


def _toc_token(link) -> dict[str, Any]:
    return {
        "level": link.level,
        "id": link.id,
        "name": link.title,
        "children": [_toc_token(child) for child in link.children],
    }


def outputs_digest(notebook) -> str:
    """The digest of a notebook's outputs as the reader sees them, without execution counts and
    without what differs from run to run (a varying or timing cell's outputs, an object's
    address), as ``make check-cache`` compares them: a publish names the notebook as changed
    (``publishing/record.py``) only where the rest changed."""
    outputs = [
        "(varying)"
        if kernels.varies(cell)
        else [{k: v for k, v in out.items() if k != "execution_count"} for out in cell.outputs]
        for cell in notebook.cells
        if cell.cell_type == "code"
    ]
    return digest(kernels.ADDRESS.sub("at 0x", canonical(outputs)))


def record_notebook(build: BuildState, src_uri: str, content: str) -> None:
    """The notebook's run, with where its kernel said it ran (its page's ``content``)."""
    run = build.notebooks.runs[src_uri]
    if still_running(build, src_uri):
        reasons = [*run.reasons, "still running: its page shows it once done"]
        build.runs.append(Run(src_uri, src_uri, True, reasons, 0.0, STILL_RUNNING, "notebook"))
        return
    printed = _PRINTED_LABEL.search(content)
    ran_on = html.unescape(printed.group(0)) if printed else "kernel did not print its backend"
    if formats.STORED in run.reasons:
        ran_on = "not run: its stored outputs"
    build.runs.append(
        Run(
            page=src_uri,
            block_id=src_uri,
            ran=run.ran,
            reasons=run.reasons,
            seconds=run.seconds,
            ran_on=ran_on,
            kind="notebook",
            output_digest=outputs_digest(run.result.result()),
        )
    )
