"""An ``.ipynb``, MyST or jupytext notebook's page (``formats.as_jupyter_book``), as Jupyter
Book renders it: its Markdown cells through ``myst.py``, its code cells as the site's listings,
with no prompt column, and each cell's tags acted on (``TAGS``).

- ``remove-cell``: the cell is not on the page; ``remove-input`` / ``remove-output``: its code /
  its outputs are not; ``hide-input`` / ``hide-output`` (and ``hide-cell``): they are, folded
  in a ``<details>`` the reader opens. JupyterLab's own ``jupyter.source_hidden`` and
  ``outputs_hidden`` metadata fold them as the hide tags do.
- ``raises-exception``: the cell's error is shown (its traceback without ANSI colours or the
  kernel's temporary paths) and the run goes on (nbclient); ``skip-execution``: the cell is
  shown, never run (nbclient).

Where the notebook prints no ``computed on ...`` label of its own, the page ends with the one
the build had its kernel say (``kernels.WHERE_IT_RAN``), as a block's. Each code cell's
``<div>`` has the id ``cell-N``: ``N`` numbers the notebook's cells as the
build's errors name them (code and text alike, as Jupyter counts them). Outputs: printed text,
``text/html``, images (PNG, JPEG, GIF inline; SVG as an image), ``text/markdown``, plain text;
widgets' and JavaScript's views are left out (the site loads nothing from another host). A cell
whose Markdown or output would load something from another host (a CDN script, a remote image
in its HTML) fails the build naming the cell; a Markdown image on another host (a Colab badge)
is shown as its alt text instead (``myst.py``).
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass

from . import myst

__all__ = [
    "TAGS",
    "NotebookPageError",
    "Rendered",
    "remote_loads",
    "render_notebook",
    "without_ansi",
]

TAGS = (
    "remove-cell",
    "remove-input",
    "remove-output",
    "hide-cell",
    "hide-input",
    "hide-output",
    "raises-exception",
    "skip-execution",
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_IMAGES = ("image/png", "image/jpeg", "image/gif")


def without_ansi(text: str) -> str:
    """``text`` without terminal colour codes (nbconvert's ``strip_ansi`` does the same)."""
    return _ANSI.sub("", text)


@dataclass
class Rendered:
    content: str
    headings: list[myst.Heading]
    title: str | None
    unresolved: list[str]  # "cell N: {ref}`label`: no such label on the site", one a reference


def _tags(cell) -> set[str]:
    tags = set(cell.get("metadata", {}).get("tags", []) or [])
    jupyter = cell.get("metadata", {}).get("jupyter", {}) or {}
    if jupyter.get("source_hidden"):
        tags.add("hide-input")
    if jupyter.get("outputs_hidden"):
        tags.add("hide-output")
    if "hide-cell" in tags:
        tags |= {"hide-input", "hide-output"}
    return tags


def _folded(summary: str, body: str) -> str:
    return f'<details class="notebook-hidden"><summary>{summary}</summary>\n{body}</details>\n'


def _text(data) -> str:
    return "".join(data) if isinstance(data, list) else str(data)


def _pre(text: str, kind: str) -> str:
    body = html.escape(without_ansi(text))
    return f'<div class="notebook-output {kind}"><pre><code>{body}</code></pre></div>\n'


def _output(output, resolver: myst.Resolver) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _pre(_text(output.get("text", "")), f"notebook-{output.get('name', 'stdout')}")
    if kind == "error":
        traceback = output.get("traceback") or [f"{output.get('ename')}: {output.get('evalue')}"]
        return _pre("\n".join(traceback), "notebook-error")
    data = output.get("data", {})
    for mime in _IMAGES:
        if mime in data:
            encoded = _text(data[mime]).strip()
            alt = html.escape(_text(data.get("text/plain", "")).strip()[:200])
            return (
                f'<div class="notebook-output"><img src="data:{mime};base64,{encoded}" '
                f'alt="{alt}"></div>\n'
            )
    if "image/svg+xml" in data:
        svg = base64.b64encode(_text(data["image/svg+xml"]).encode()).decode()
        image = f'<img src="data:image/svg+xml;base64,{svg}" alt="">'
        return f'<div class="notebook-output">{image}</div>\n'
    if "text/html" in data:
        return f'<div class="notebook-output notebook-html">\n{_text(data["text/html"])}\n</div>\n'
    if "text/markdown" in data:
        shown = myst.render(_text(data["text/markdown"]), resolver)
        return f'<div class="notebook-output">\n{shown}</div>\n'
    if "text/latex" in data:
        latex = html.escape(_text(data["text/latex"]))
        return f'<div class="notebook-output arithmatex">{latex}</div>\n'
    if "text/plain" in data:
        return _pre(_text(data["text/plain"]), "notebook-result")
    return ""


class NotebookPageError(Exception):
    """A cell's page cannot be shown as the site shows pages: the message names the cell."""


_LOADS = {  # what a browser fetches without a click: each tag's attributes
    "img": ("src", "srcset"),
    "script": ("src",),
    "iframe": ("src",),
    "link": ("href",),
    "audio": ("src",),
    "video": ("src", "poster"),
    "source": ("src", "srcset"),
    "embed": ("src",),
    "object": ("data",),
    "input": ("src",),
}


def remote_loads(fragment: str) -> list[str]:
    """The addresses on another host that ``fragment`` (HTML) makes the browser load."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Loads(HTMLParser):
        def handle_starttag(self, tag, attrs):
            for name, value in attrs:
                if name in _LOADS.get(tag, ()) and value and myst.REMOTE.match(value.strip()):
                    found.append(f"<{tag} {name}={value.strip()[:80]}>")

        handle_startendtag = handle_starttag

    Loads(convert_charrefs=True).feed(fragment)
    return found


def _local_only(fragment: str, number: int, where: str) -> str:
    loads = remote_loads(fragment)
    if loads:
        raise NotebookPageError(
            f"cell {number}: its {where} loads {loads[0]} from another host, and the site loads "
            "nothing from another host: keep the file beside the notebook and link it, or tag "
            "the cell remove-output (or remove-cell)"
        )
    return fragment


def render_notebook(notebook, resolver: myst.Resolver) -> Rendered:
    """The page of ``notebook`` (executed, or as stored): its HTML, headings and title, and
    each reference its cells make to nothing on the site, named by cell."""
    language = (
        notebook.get("metadata", {}).get("kernelspec", {}).get("language")
        or notebook.get("metadata", {}).get("language_info", {}).get("name")
        or "python"
    )
    parts: list[str] = []
    unresolved: list[str] = []
    for number, cell in enumerate(notebook.cells, start=1):
        parts.append(_cell(cell, number, language, resolver))
        unresolved += [f"cell {number}: {what}" for what in resolver.unresolved]
        resolver.unresolved.clear()
    ran_on = notebook.get("metadata", {}).get("course", {}).get("ran_on", "")
    if ran_on and "computed on" not in "".join(parts):  # the build's words, where it said none
        parts.append(f'<p class="run-label">{html.escape(ran_on)}</p>\n')
    title = next((h.name for h in resolver.headings if h.level == 1), None)
    return Rendered("".join(parts), resolver.headings, title, unresolved)


def _cell(cell, number: int, language: str, resolver: myst.Resolver) -> str:
    """One cell as its page shows it (nothing where its tags remove it)."""
    tags = _tags(cell)
    if "remove-cell" in tags:
        return ""
    source = _text(cell.get("source", ""))
    if cell.cell_type == "markdown":
        shown = myst.render(source, resolver, cell.get("attachments"))
        return _local_only(shown, number, "Markdown")
    if cell.cell_type != "code":
        return ""  # a raw cell is for another output format
    anchor = f"cell-{number}"
    resolver.ids.add(anchor)
    inner = []
    if "remove-input" not in tags and source.strip():
        listing = myst.highlighted(source, language)
        inner.append(_folded("Show code cell source", listing) if "hide-input" in tags else listing)
    if "remove-output" not in tags:
        outputs = "".join(_output(output, resolver) for output in cell.get("outputs", []))
        outputs = _local_only(outputs, number, "output")
        if outputs and "hide-output" in tags:
            outputs = _folded("Show code cell output", outputs)
        inner.append(outputs)
    if not any(inner):
        return ""
    return f'<div class="notebook-cell" id="{anchor}">\n{"".join(inner)}</div>\n'


def toc_tokens(headings: list[myst.Heading]) -> list[dict]:
    """The headings as MkDocs' ``get_toc`` reads them: nested by level."""
    root: list[dict] = []
    stack: list[dict] = []
    for heading in headings:
        token = {"level": heading.level, "id": heading.id, "name": heading.name, "children": []}
        while stack and stack[-1]["level"] >= heading.level:
            stack.pop()
        (stack[-1]["children"] if stack else root).append(token)
        stack.append(token)
    return root
