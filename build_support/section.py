"""The course model: which pages are sections, each section's version, this release of the site,
the package the pages run, and the address the site is published at.

- **A section** is a page ``docs/<name>.md`` whose front matter has ``section_id`` (``P5-9.1``)
  and ``version`` (``v2026.07.20``: a ``v`` and a date), titled by its ``# `` line; an ID or a
  version not in that form fails whatever reads it, naming the page, the line and the field.
  Nothing else lists sections: adding the page adds the section (``python -m
  build_support.new_section`` writes one).
- **A page belongs to a section** when it is the section's page, or its file name starts with
  the section's slug and a hyphen (``p5-9-1-measured.md``, ``notebooks/p5-9-1-practice-in-jax.py``
  belong to P5-9.1): its install box, Colab link and notebook set-up are that section's.
- **The release** is this version of the whole site: ``[tool.course] release`` in
  pyproject.toml. mike deploys it as a folder; the readers' wheel carries its version and holds
  every section at the section's own version (in its metadata: one Project-URL per section,
  labelled with the section's ID and version).

The rule every page keeps: the version a section's header shows is the version its install box
names, its Colab link opens (the notebook of the release that holds it) and ``verify`` compares
(the block's section and version, from the wheel's expected outputs). Pages of no section name
the release.

Everything that needs one of these reads it here: hatch_build.py (it loads this file by its
path, since hatchling's isolated build cannot import the project), the hooks, the Makefile
(make publish), the tests and the benchmarks. Standard library only.

    python -m build_support.section version    # the release: v2026.07.20 (make publish)
    python -m build_support.section sections   # one line per section: ID, version, page
"""

from __future__ import annotations

import datetime
import itertools
import re
import sys
import tomllib
from pathlib import Path, PurePosixPath
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
_SITE_URL = re.compile(r"^site_url: *['\"]?([^'\"\s#]+)", re.MULTILINE)
_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)
_FIELD = re.compile(r"^(\w+): *(.*?) *$", re.MULTILINE)
_TITLE = re.compile(r"^# +(.+?) *$", re.MULTILINE)
SECTION_ID = re.compile(r"P\d+(?:-\d+)*(?:\.\d+)*", re.ASCII)
"""A section's ID (``P5-9.1``), whole (``fullmatch``): ASCII digits only, as file names take it."""
VERSION = re.compile(r"v(\d{4})\.(\d{2})\.(\d{2})", re.ASCII)
"""A section's version, whole (``fullmatch``): ``v`` and its content's date, ``v2026.07.20``."""


class Section(NamedTuple):
    """One section of the course, as its page's front matter and title say. (A NamedTuple, not
    a dataclass: hatch_build.py loads this module by its path, outside ``sys.modules``.)"""

    id: str  # P5-9.1
    version: str  # v2026.07.20
    title: str  # the page's ``# `` line: P5-9.1 GPUs And Parallel Processing
    page: str  # its Markdown, relative to docs/: p5-9-1-gpus-and-parallel-processing.md

    @property
    def slug(self) -> str:
        """The ID as file names start with it: ``p5-9-1``."""
        return slug(self.id)

    @property
    def name(self) -> str:
        """The page's name, as its folder in the built site names it (no ``.md``)."""
        return PurePosixPath(self.page).stem

    def holds(self, page: str) -> bool:
        """Whether ``page`` (relative to docs/) belongs to this section."""
        name = PurePosixPath(page).name
        return page == self.page or name.startswith(f"{self.slug}-")


def slug(section_id: str) -> str:
    """``P5-9.2`` as a file name starts with it: ``p5-9-2``."""
    return re.sub(r"[^a-z0-9]+", "-", section_id.lower()).strip("-")


def _pyproject(root: Path) -> dict:
    """pyproject.toml, read afresh (it may change between the builds of one mkdocs serve)."""
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))


def front_matter(text: str) -> dict[str, tuple[str, int]]:
    """Each ``key: value`` line of a page's front matter: its value and its line number in the
    page (none: ``{}``). Standard library only, so not YAML: the build checks that the front
    matter parses as YAML (hooks/section_header.py)."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return {}
    return {
        field[1]: (field[2].strip("'\""), text.count("\n", 0, match.start(1) + field.start()) + 1)
        for field in _FIELD.finditer(match[1])
    }


def is_version(value: str) -> bool:
    """Whether ``value`` is a section's version: ``v`` and a date that exists, ``v2026.07.20``."""
    match = VERSION.fullmatch(value)
    try:
        return match is not None and bool(datetime.date(*map(int, match.groups())))
    except ValueError:  # v2026.02.30
        return False


def read_section(path: Path, docs: Path) -> Section | None:
    """The section whose page is ``path``, or None where its front matter has no
    ``section_id``; ``ValueError`` naming the page, the line and the field, where the section
    is not whole or a field is not in its form."""
    text = path.read_text(encoding="utf-8-sig")  # as MkDocs reads it: a BOM is not the text
    meta = front_matter(text)
    if "section_id" not in meta:
        return None
    page = f"docs/{path.relative_to(docs).as_posix()}"
    section_id, line = meta["section_id"]
    if not SECTION_ID.fullmatch(section_id):
        raise ValueError(
            f"{page}:{line}: section_id {section_id!r} is not a section ID; expected P, then "
            "ASCII digits joined by - and . (P5-9.1)"
        )
    if "version" not in meta:
        raise ValueError(f"{page}:{line}: front matter has section_id but no version")
    version, line = meta["version"]
    if not is_version(version):
        raise ValueError(
            f"{page}:{line}: version {version!r} is not a section version; expected v and the "
            "date of the section's content, vYYYY.MM.DD (v2026.07.20)"
        )
    title = _TITLE.search(text[_FRONT_MATTER.match(text).end() :])
    if title is None:
        raise ValueError(f"{page}: a section page needs a '# Title' line")
    return Section(section_id, version, title[1], page.removeprefix("docs/"))


def sections(root: Path = ROOT) -> list[Section]:
    """Every section of the course this project publishes, by ID: each page of ``docs/`` whose
    front matter has ``section_id``. ``ValueError`` where two pages claim one ID."""
    docs = root / "docs"
    found = [read_section(path, docs) for path in sorted(docs.glob("*.md"))]
    found = sorted((one for one in found if one is not None), key=lambda one: one.id)
    for first, second in itertools.pairwise(found):
        if first.id == second.id:
            raise ValueError(f"section {first.id}: two pages, {first.page} and {second.page}")
    return found


def section_of(page: str, root: Path = ROOT, known: list[Section] | None = None) -> Section | None:
    """The section ``page`` (relative to docs/) belongs to, or None (the home page, the glossary,
    the Build report). ``known``: the sections, where the caller has read them."""
    held = [one for one in (known if known is not None else sections(root)) if one.holds(page)]
    return max(held, key=lambda one: len(one.slug)) if held else None


def notebooks_of(one: Section, root: Path = ROOT) -> list[str]:
    """The notebooks of ``docs/notebooks/`` that belong to section ``one``, relative to docs/:
    jupytext ``.py``, ``.ipynb`` (but the pair Jupyter writes beside a ``.py``) and MyST ``.md``
    (``notebooks/formats.py``)."""
    from .notebooks.formats import myst_front_matter

    folder = root / "docs" / "notebooks"
    found = [
        path
        for path in sorted(folder.glob("*"))
        if path.suffix == ".py"
        or (path.suffix == ".ipynb" and not path.with_suffix(".py").is_file())
        or (path.suffix == ".md" and myst_front_matter(path) is not None)
    ]
    pages = [path.relative_to(root / "docs").as_posix() for path in found]
    known = sections(root)
    return [page for page in pages if section_of(page, known=known) == one]


def by_id(section_id: str, root: Path = ROOT) -> Section:
    """The section with ID ``section_id``; ``KeyError`` naming the known ones."""
    found = {one.id: one for one in sections(root)}
    if section_id not in found:
        raise KeyError(f"no section {section_id}; known: {', '.join(found) or 'none'}")
    return found[section_id]


def release(root: Path = ROOT) -> str:
    """This release of the site, as mike deploys it and the wheel carries it (``v2026.07.20``):
    ``[tool.course] release`` in pyproject.toml."""
    return _pyproject(root)["tool"]["course"]["release"]


version = release  # the version make publish deploys and the wheel carries: the release's


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
    match = _SITE_URL.search((root / "mkdocs.yml").read_text(encoding="utf-8"))
    if match is None:
        raise ValueError("no 'site_url:' in mkdocs.yml")
    return match[1].rstrip("/") + "/"


def distribution_name(root: Path = ROOT) -> str:
    """The wheel's distribution name: ``[project] name`` in pyproject.toml."""
    return _pyproject(root)["project"]["name"]


def gpu_extra(root: Path = ROOT) -> str:
    """The name of the wheel's extra for NVIDIA GPUs (``cuda12``): ``[tool.course] gpu-extra``."""
    return _pyproject(root)["tool"]["course"]["gpu-extra"]


if __name__ == "__main__":
    command = sys.argv[1:]
    try:
        if command == ["version"]:
            print(release(Path.cwd()))
        elif command == ["sections"]:
            for one in sections(Path.cwd()):
                print(f"{one.id} {one.version} docs/{one.page}")
        else:
            raise SystemExit("usage: python -m build_support.section version|sections")
    except (OSError, KeyError, ValueError) as error:
        raise SystemExit(f"build_support.section: {error!r}") from None
