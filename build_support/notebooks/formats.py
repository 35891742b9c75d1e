"""Which files of ``docs/`` are notebooks, in which format, and what the build does with each.

- **jupytext** (``KIND_JUPYTEXT``): a ``.py`` that mkdocs-jupyter's ``include`` takes
  (``notebooks/*.py``): executed. One written as the course's own notebooks are, with the
  course's set-up cell (``SETUP_MARK``, as P5-9.1's), is rendered by mkdocs-jupyter, as the
  course's notebook always was; any other (a tutorial converted with ``jupytext --to
  py:percent``) as its ``.ipynb`` would be, below (``as_jupyter_book``).
- **ipynb** (``KIND_IPYNB``): any ``.ipynb`` in ``docs/``: executed, unless its metadata says
  ``"mystnb": {"execution_mode": "off"}`` (myst-nb's own switch, as Jupyter Book reads it):
  then shown with the outputs stored in it, no kernel started.
- **MyST** (``KIND_MYST``): a ``.md`` whose YAML front matter has a ``kernelspec`` mapping
  (what ``jupytext --to md:myst`` writes, with its ``jupytext`` block): executed. Every other
  ``.md`` is a page; only the front matter is read to tell them apart.

The last two, and a ``.py`` without the set-up cell, are rendered as Jupyter Book renders them
(``jupyter_book.py``, ``myst.py``). All three run in the build's kernel (mkdocs-jupyter's
``kernel_name``), under the same cache and limits; a notebook whose kernel is not Python fails
the build, naming it. A nav entry that names a file the build cannot render as a page (a ``.py``
outside ``notebooks/``, a ``.txt``) fails the build naming the entry and the file, rather than
becoming a link to the raw file.
"""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.exceptions import PluginError

KIND_JUPYTEXT = "jupytext"
KIND_IPYNB = "ipynb"
KIND_MYST = "myst"
STORED = "shown with its stored outputs (mystnb.execution_mode: off)"
_FRONT_MATTER_MAX = 64 * 1024  # a front matter longer than this is not a notebook's
SETUP_MARK = "{{ install.requirement }}"  # the course's set-up cell installs this (as the
# download line and the Colab line read it: hooks/notebook_download.py, hooks/colab.py)


def myst_front_matter(path: Path) -> dict | None:
    """The front matter of the ``.md`` at ``path`` where it makes it a notebook (it has a
    ``kernelspec`` mapping), else None."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        head = handle.read(_FRONT_MATTER_MAX)
    if not head.startswith("---\n") or "kernelspec" not in head:
        return None
    end = head.find("\n---", 3)
    if end == -1:
        return None
    import yaml

    try:
        data = yaml.safe_load(head[4:end])
    except yaml.YAMLError:
        return None  # a page's malformed front matter: the page's own check says so
    if isinstance(data, dict) and isinstance(data.get("kernelspec"), dict):
        return data
    return None


def kind_of(file, jupyter) -> str | None:
    """The notebook format of ``file`` (a MkDocs ``File``), or None for every other file."""
    if not file.abs_src_path:
        return None
    suffix = Path(file.src_uri).suffix
    if suffix == ".py":
        return KIND_JUPYTEXT if jupyter.should_include(file) else None
    if suffix == ".ipynb":
        return KIND_IPYNB
    if suffix == ".md" and myst_front_matter(Path(file.abs_src_path)) is not None:
        return KIND_MYST
    return None


def _language(path: Path, kind: str) -> str:
    if kind == KIND_MYST:
        spec = (myst_front_matter(path) or {}).get("kernelspec", {})
    else:
        spec = (
            json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("kernelspec", {})
        )
    return str(spec.get("language") or "python")


def claim(files, config) -> tuple[object, dict[str, str]]:
    """``files`` with each ``.ipynb`` and MyST notebook made a page (mkdocs-jupyter's
    ``NotebookFile``, as it makes its own), and every notebook's format by ``src_uri``. The
    ``.ipynb`` that Jupyter writes beside a jupytext ``.py`` paired with it (its header's
    ``formats: ipynb,py:percent``, as P5-9.1's) is left out: the ``.py`` is the notebook."""
    from mkdocs.structure.files import Files
    from mkdocs_jupyter.plugin import NotebookFile

    jupyter = config.plugins["mkdocs-jupyter"]
    kinds: dict[str, str] = {}
    claimed = []
    found = [(file, kind_of(file, jupyter)) for file in files]
    paired = {f"{file.src_uri[:-3]}.ipynb" for file, kind in found if kind == KIND_JUPYTEXT}
    for file, kind in found:
        if file.src_uri in paired:
            continue  # the .ipynb jupytext pairs with a .py (``formats: ipynb,py:percent``)
        if kind is None:
            claimed.append(file)
            continue
        kinds[file.src_uri] = kind
        if kind != KIND_JUPYTEXT:
            language = _language(Path(file.abs_src_path), kind)
            if language.lower() != "python":
                raise PluginError(
                    f"notebook {file.src_uri}: its kernel's language is {language}; the build "
                    "runs notebooks in a Python kernel only"
                )
            if not isinstance(file, NotebookFile):
                file = NotebookFile(file, **config)
        claimed.append(file)
    return Files(claimed), kinds


def as_jupyter_book(kind: str, source: str) -> bool:
    """The page of a notebook of format ``kind`` whose text is ``source`` is rendered as Jupyter
    Book renders it (``jupyter_book.py``): every ``.ipynb`` and MyST notebook, and a jupytext
    ``.py`` but one written as the course's own are, with its set-up cell (``SETUP_MARK``),
    which keeps mkdocs-jupyter's page. A tutorial converted to ``.py`` thus reads as its
    ``.ipynb`` would: its tags acted on, its MyST rendered, no prompts."""
    return kind != KIND_JUPYTEXT or SETUP_MARK not in source


def shown_as_stored(notebook) -> bool:
    """The notebook asks to be shown with its stored outputs (myst-nb's ``execution_mode``)."""
    mystnb = notebook.get("metadata", {}).get("mystnb", {}) or {}
    return str(mystnb.get("execution_mode", "")).lower() in ("off", "false")


def check_nav(nav) -> None:
    """Every page the nav names is one the build renders: else fail, naming entry and file."""
    for page in nav.pages:
        if not page.file.is_documentation_page():
            raise PluginError(
                f"nav entry {page.title or page.file.src_uri!r} names {page.file.src_uri}, which "
                "the build cannot render as a page: a page is a .md file, a notebook a .ipynb, "
                "a MyST .md (a kernelspec in its front matter) or a jupytext .py under "
                "notebooks/ (ADDING-A-SECTION.md, Notebooks)"
            )
