"""Check what authors type in the pages' front matter, then write each section's ID and version
under its title.

MkDocs reads a front matter that is not YAML as the page's text (a ``description: [unclosed``
becomes a heading in the page and its ToC) and takes any ``version:`` it is given. So, before any
other hook reads the pages (``on_config``): every page's front matter must parse as YAML, and
each section's ID and version must be in the course's form (``build_support/section.py``, which
every other reader of the course model uses too). Either fails the build in one line naming the
page, the line and the field. The header then comes from that same course model, so it is never
typed by hand in a second place and shows the version the install box names.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

if importlib.util.find_spec("build_support") is None:  # not installed with the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml
from mkdocs.exceptions import Abort
from mkdocs.utils.meta import YAML_RE

from build_support import section

_TITLE = re.compile(r"^# .+$", re.MULTILINE)
_FIELD = re.compile(r"^([\w-]+):", re.MULTILINE)
_sections: dict[str, section.Section] = {}  # by page, relative to docs/


def front_matter_problem(text: str, where: str) -> str | None:
    """Why the front matter of page ``text`` (``where``: its path) is not YAML, in one line
    naming the line and the field; None where it parses as fields, or the page has none."""
    match = YAML_RE.match(text)  # what MkDocs takes for front matter
    if match is None:
        return None
    try:
        fields = yaml.safe_load(match[1])
    except yaml.YAMLError as error:
        # A flow left open (``[unclosed``) is found at the end; its context marks where it began.
        mark = getattr(error, "context_mark", None) or getattr(error, "problem_mark", None)
        at = mark.line if mark else 0
        starts = [_FIELD.match(line) for line in match[1].split("\n")[: at + 1]]
        field = next((start[1] for start in reversed(starts) if start), None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        named = f"field {field!r}" if field else "front matter"
        return (
            f"{where}:{at + 2}: {named} is not YAML ({problem}); expected one 'name: value' a "
            "line, the value in quotes where it starts with [ { & * ! | > ' \" % @ ` or holds ': '"
        )
    if not isinstance(fields, dict):  # MkDocs shows it as text too
        return f"{where}:2: front matter is not fields; expected one 'name: value' a line"
    return None


def check_pages(config) -> dict[str, section.Section]:
    """Every page's front matter checked, and the sections read (by page); ``Abort`` with one
    line where a page's front matter is not YAML or a section's field is not in its form."""
    docs = Path(config.docs_dir)
    excluded = config.exclude_docs
    for path in sorted(docs.rglob("*.md")):
        page = path.relative_to(docs).as_posix()
        if excluded is not None and excluded.match_file(page):
            continue
        where = Path(docs.name, page).as_posix()
        problem = front_matter_problem(path.read_text(encoding="utf-8-sig"), where)
        if problem:
            raise Abort(problem)
    try:
        known = section.sections(Path(config.config_file_path).parent)
    except ValueError as error:
        raise Abort(str(error)) from None
    return {one.page: one for one in known}


def on_config(config):
    global _sections
    _sections = check_pages(config)
    return config


def on_page_markdown(markdown, page, config, files):
    one = _sections.get(page.file.src_uri)
    if one is None:
        if "section_id" in page.meta:  # YAML's reading, where section.py found no section
            raise Abort(
                f"docs/{page.file.src_uri}: section_id, but not a section; a section's page is "
                "docs/<name>.md, its front matter lines 'section_id: P5-9.1', 'version: "
                "v2026.07.20'"
            )
        return markdown
    title = _TITLE.search(markdown)
    if title is None:
        raise Abort(f"docs/{page.file.src_uri}: a section page needs a '# Title' line")
    header = (
        f'\n\n<p class="section-meta">Section ID: <strong>{one.id}</strong> '
        f"Version: <strong>{one.version}</strong></p>\n"
    )
    return markdown[: title.end()] + header + markdown[title.end() :]
