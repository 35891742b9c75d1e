"""Open in Colab: each notebook, as ``mike`` deployed it for this version, one click away.

Colab opens a notebook from GitHub by its path on a branch:
``https://colab.research.google.com/github/<owner>/<repo>/blob/gh-pages/<version>/<path>.ipynb``.
``mike`` deploys each version to ``<version>/`` on the ``gh-pages`` branch, with the ``.ipynb``
that ``hooks/notebook_download.py`` writes beside each notebook page, so the link of each version
opens that version's notebook (its first cell installs that version's wheel).

Where ``repo_url`` in mkdocs.yml names a GitHub repository, the link goes on each notebook page
(after its download links) and at the end of the install box of the page of the section the
notebook belongs to (``build_support.section.section_of``: ``notebooks/p5-9-1-….py`` belongs to
P5-9.1), and of no other section; the box's line says the notebook's first cell installs the
package only where it has the course's set-up cell. Anywhere else (no
``repo_url``, another host) no link is shown, and the build says why in one INFO line.
"""

from __future__ import annotations

import html
import logging
import re
from pathlib import Path, PurePosixPath

from mkdocs_jupyter.plugin import NotebookFile

from build_support import section

SETUP_MARK = "{{ install.requirement }}"  # what the course's set-up cell installs (as the
# download line reads it, hooks/notebook_download.py)

log = logging.getLogger("mkdocs.hooks.colab")

COLAB = "https://colab.research.google.com/github/"
_GITHUB = re.compile(r"^https?://(?:www\.)?github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")
_INSTALL_BOX = re.compile(r"^!!! .*\binstall-box\b.*$", re.MULTILINE)


class ColabLinks:
    """One build's: the GitHub repository (``owner/repo``) or None, the release mike deploys
    (the folder that holds every section's notebook), the course's sections, and for each
    section page (its path in ``docs/``) the ``.ipynb`` paths of its notebooks in the built site
    (``notebooks/x/x.ipynb``, set by ``on_files``)."""

    def __init__(self, repository: str | None = None, version: str = "", sections=()):
        self.repository = repository
        self.version = version
        self.sections = list(sections)
        self.notebooks: dict[str, list[str]] = {}
        self.set_up: set[str] = set()  # those (``.ipynb`` paths) with the course's set-up cell

    def url(self, ipynb: str) -> str:
        return f"{COLAB}{self.repository}/blob/gh-pages/{self.version}/{ipynb}"


_state = ColabLinks()


def github_repository(repo_url: str | None) -> str | None:
    """``owner/repo`` where ``repo_url`` is a GitHub repository's address, else None."""
    match = _GITHUB.match(repo_url or "")
    return f"{match[1]}/{match[2]}" if match else None


def notebook_ipynb(dest_uri: str, src_uri: str) -> str:
    """Where a notebook page's ``.ipynb`` lies in the built site: beside the page's
    ``index.html``, named after its source (as ``hooks/notebook_download.py`` writes it)."""
    return str(PurePosixPath(dest_uri).parent / f"{PurePosixPath(src_uri).stem}.ipynb")


def on_config(config):
    global _state
    repository = github_repository(config.repo_url)
    project = Path(config.config_file_path).parent
    _state = ColabLinks(repository, section.release(project), section.sections(project))
    if repository is None:
        why = "is not set" if not config.repo_url else f"({config.repo_url}) is not on GitHub"
        log.info(
            "colab: no 'Open in Colab' links: repo_url in mkdocs.yml %s; Colab opens notebooks "
            "from a GitHub repository's gh-pages branch (README: Open in Colab)",
            why,
        )
    return config


def on_files(files, config):
    # mkdocs-jupyter (a plugin: it runs before the hooks) has made its notebooks pages.
    _state.notebooks = {}
    _state.set_up = set()
    for file in files:
        held = section.section_of(file.src_uri, known=_state.sections)
        if isinstance(file, NotebookFile) and held is not None:
            ipynb = notebook_ipynb(file.dest_uri, file.src_uri)
            _state.notebooks.setdefault(held.page, []).append(ipynb)
            if SETUP_MARK in Path(file.abs_src_path).read_text(encoding="utf-8"):
                _state.set_up.add(ipynb)
    return files


def link_paragraph(ipynb: str, text: str) -> str:
    url = html.escape(_state.url(ipynb))
    return f'<p class="colab-link"><a href="{url}">{text}</a></p>'


def with_box_links(markdown: str, lines: list[str]) -> str:
    """``markdown`` with ``lines`` added at the end of its install box (an admonition whose
    body is the indented block under its ``!!!`` line)."""
    match = _INSTALL_BOX.search(markdown)
    if match is None:
        return markdown
    rest = markdown[match.end() :].split("\n")
    body = 1  # the rest of the ``!!!`` line, then the box's indented or blank lines
    while body < len(rest) and (not rest[body].strip() or rest[body].startswith("    ")):
        body += 1
    while body > 1 and not rest[body - 1].strip():
        body -= 1  # the blank lines after the box stay after it
    added = [line for text in lines for line in ("", f"    {text}")]
    rest[body:body] = added
    return markdown[: match.end()] + "\n".join(rest)


def on_page_markdown(markdown, page, config, files):
    if _state.repository is None or page.file.src_uri not in _state.notebooks:
        return markdown
    lines = [
        f"No NVIDIA GPU here? [Open this version's notebook in Colab]({_state.url(ipynb)}), "
        "choose a GPU runtime (*Runtime > Change runtime type*), and run it"
        + (
            ": its first cell installs this version's package there, with the GPU line."
            if ipynb in _state.set_up
            else "."  # an author's notebook without the course's set-up cell claims no install
        )
        for ipynb in _state.notebooks[page.file.src_uri]
    ]
    return with_box_links(markdown, lines)


def on_page_content(content, page, config, files):
    if _state.repository is None or not getattr(page, "nb_url", None):
        return content
    ipynb = notebook_ipynb(page.file.dest_uri, page.file.src_uri)
    link = link_paragraph(ipynb, "Open this version's notebook in Colab (a GPU runtime, free)")
    download = content.find('<p class="notebook-download">')
    at = content.find("</p>", download) + len("</p>") if download != -1 else 0
    return content[:at] + link + content[at:]
