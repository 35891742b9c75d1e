"""The course section this project publishes: its page, the version the page's front matter
holds, the package the pages run, and the address the site is published at.

pyproject.toml's ``[tool.course]`` names the page (``section-page``) and the wheel's GPU extra
(``gpu-extra``); ``version:`` in the page's front matter is the one place the version is
written (the page header shows it, mike deploys it as a folder, the wheel carries it).
Everything that needs one of these reads it here: hatch_build.py (the wheel's metadata: it
loads this file by its path, since hatchling's isolated build cannot import the project),
hooks/wheel.py (the install lines), the Makefile (make publish), the tests and the benchmarks.
Standard library only.

    python -m build_support.section version   # v2026.07.20 (make publish, make print-version)
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SITE_URL = re.compile(r"^site_url: *['\"]?([^'\"\s#]+)", re.MULTILINE)
_VERSION = re.compile(r"\A---\n.*?^version: *(\S+)$.*?^---$", re.MULTILINE | re.DOTALL)


def _pyproject(root: Path) -> dict:
    """pyproject.toml, read afresh (it may change between the builds of one mkdocs serve)."""
    return tomllib.loads((root / "pyproject.toml").read_text())


def page_path(root: Path = ROOT) -> Path:
    """The section page, relative to the project's ``root``: ``docs/<name>.md``."""
    table = _pyproject(root)["tool"]["course"]
    return Path(table["section-page"])


def page_name(root: Path = ROOT) -> str:
    """The section page's name, as its folder in the built site names it (no ``.md``)."""
    return page_path(root).stem


def package_name(root: Path = ROOT) -> str:
    """The import name of the package the pages run and readers install: the one package of
    pyproject.toml's wheel (``examples``)."""
    table = _pyproject(root)["tool"]["hatch"]["build"]
    packages = table["targets"]["wheel"].get("packages")
    if not (isinstance(packages, list) and len(packages) == 1 and isinstance(packages[0], str)):
        raise ValueError(
            "pyproject.toml: [tool.hatch.build.targets.wheel] packages must name the one package "
            f"the pages run and readers install, as a list of one name; got {packages!r}"
        )
    return packages[0]


PACKAGE = package_name()
"""The import name of the package the pages run and readers install (``examples``)."""


def site_url(root: Path = ROOT) -> str:
    """The published address, ``site_url`` in mkdocs.yml, ending in ``/`` (the wheel's home
    page; ``mkdocs serve`` replaces MkDocs' own value with the dev server's)."""
    match = _SITE_URL.search((root / "mkdocs.yml").read_text())
    if match is None:
        raise ValueError("no 'site_url:' in mkdocs.yml")
    return match[1].rstrip("/") + "/"


def distribution_name(root: Path = ROOT) -> str:
    """The wheel's distribution name: ``[project] name`` in pyproject.toml."""
    return _pyproject(root)["project"]["name"]


def gpu_extra(root: Path = ROOT) -> str:
    """The name of the wheel's extra for NVIDIA GPUs (``cuda12``): ``[tool.course] gpu-extra``."""
    return _pyproject(root)["tool"]["course"]["gpu-extra"]


def version(root: Path = ROOT) -> str:
    """The ``version:`` in the section page's front matter, as written (``v2026.07.20``);
    ``ValueError`` where there is none."""
    page = page_path(root)
    match = _VERSION.search((root / page).read_text())
    if match is None:
        raise ValueError(f"no 'version:' in the front matter of {page}")
    return match[1]


if __name__ == "__main__":
    if sys.argv[1:] != ["version"]:
        raise SystemExit("usage: python -m build_support.section version")
    try:
        print(version(Path.cwd()))
    except (OSError, KeyError, ValueError) as error:
        raise SystemExit(f"build_support.section: {error!r}") from None
