"""The tests' small sites: one ``mkdocs.yml`` that loads the checkout's hooks, and a page of one
Python block. A build of one takes a second or two, not the course's minutes: what a test of
the hooks checks is the hooks, not the pages."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from build_support.build_command import ROOT
from build_support.settings import ENV_VARS

__all__ = [
    "DATA_FILE",
    "EXECUTION_HOOK",
    "ONE_PAGE_CONFIG",
    "build_on",
    "checkout_elsewhere",
    "from_env",
    "hook",
    "page_with",
    "site_config",
    "write_site",
]


def hook(name: str) -> Path:
    """The checkout's ``hooks/<name>.py``."""
    return ROOT / "hooks" / f"{name}.py"


EXECUTION_HOOK = hook("execution")


def site_config(
    site_name: str,
    build_settings: str = "",
    *,
    hooks: Sequence[str | Path] = (EXECUTION_HOOK,),
    extensions: str = "",
) -> str:
    """A small site's ``mkdocs.yml``: Python blocks run by ``hooks`` (default: the execution
    hook alone), jupytext notebooks under ``docs/notebooks/``. ``build_settings``
    (``"cell_timeout_s: 2"``) are added to ``extra.build``; ``extensions``, YAML list items
    (``"  - abbr\\n"``), to the Markdown extensions, before ``pymdownx.superfences``. The site's
    folder and the store's come from the variables ``make build`` sets (``-d`` overrides the
    first), as in the project's ``mkdocs.yml``."""
    settings = ", ".join(
        part
        for part in ("fresh: !ENV FRESH, cache_dir: !ENV COURSE_CACHE_DIR", build_settings)
        if part
    )
    hook_lines = "".join(f"  - {path}\n" for path in hooks)
    return f"""\
site_name: {site_name}
strict: true
site_dir: !ENV [COURSE_SITE_DIR, site]
theme:
  name: material
  font: false
markdown_extensions:
  - admonition
{extensions}  - pymdownx.superfences
plugins:
  - markdown-exec:
      languages: [python, py, pycon, sh, bash, console, md, markdown, tree] # as mkdocs.yml
  - mkdocs-jupyter:
      include: ["notebooks/*.py"]
      ignore: ["*.md"]
      execute: false
      cache: false # as mkdocs.yml: it keys on the file's name, not on what it ran
hooks:
{hook_lines}extra:
  build: {{{settings}}}
"""


ONE_PAGE_CONFIG = site_config(
    "one page", "memory_limit_gib: 1", hooks=(EXECUTION_HOOK, hook("serve_last_build"))
)
"""The one-page site of the block guard's tests and of those that build a page as an author
would: the execution hook, then the one that keeps the last build served under ``mkdocs
serve``; a block's memory capped at 1 GiB."""


def page_with(code: str, options: str = "") -> str:
    """``docs/index.md`` of a one-page site: prose, the block ``blk`` (``code``, with the fence
    ``options``: ``' session="a"'``), prose."""
    return (
        "# A page\n\nBefore the block.\n\n"
        f'```python exec="on" id="blk"{options}\n{code}\n```\n\nAfter the block.\n'
    )


DATA_FILE = {"data.txt": "read from the project's docs/"}
"""A file of the project's ``docs/`` that a block reads (``open("docs/data.txt")``)."""


def from_env(*options: str) -> str:
    """``extra.build`` settings, each read from the variable a tool sets it with
    (``settings.ENV_VARS``): ``from_env("shard")`` is ``"shard: !ENV SHARD"``."""
    return ", ".join(f"{option}: !ENV {ENV_VARS[option]}" for option in options)


def write_site(
    root: Path,
    site_name: str,
    pages: dict[str, str],
    build_settings: str = "",
    files: dict[str, str] | None = None,
    hooks: Sequence[str | Path] = (EXECUTION_HOOK,),
) -> Path:
    """A small site in ``root``: ``mkdocs.yml`` (``site_config(site_name, build_settings,
    hooks=hooks)``), its nav ``pages`` in their order, each written under ``docs/`` by its path
    (``"a.md"``, ``"notebooks/n.py"``), and ``files`` beside them (``DATA_FILE``)."""
    nav = ", ".join(pages)
    config = site_config(site_name, build_settings, hooks=hooks)
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "mkdocs.yml").write_text(config + f"nav: [{nav}]\n", encoding="utf-8")
    for path, text in (pages | (files or {})).items():
        (root / "docs" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / path).write_text(text, encoding="utf-8")
    return root


def checkout_elsewhere(site: Path, root: Path) -> Path:
    """Another machine's checkout of the small ``site``: its ``docs/`` and ``mkdocs.yml`` at
    ``root``, without its built sites and stores."""
    shutil.copytree(site / "docs", root / "docs")
    shutil.copy2(site / "mkdocs.yml", root / "mkdocs.yml")
    return root


def build_on(
    site: Path, machine: str, env: dict[str, str], fresh: bool = False, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """The strict build of the small ``site`` as ``machine`` builds it: into a site
    (``site-<machine>``) and a local store (``store-<machine>``) of its own, with ``env``."""
    from .build import mkdocs_build

    return mkdocs_build(
        site / "mkdocs.yml",
        site / f"site-{machine}",
        fresh=fresh,
        cache_dir=site / f"store-{machine}",
        env=env,
        timeout=timeout,
    )
