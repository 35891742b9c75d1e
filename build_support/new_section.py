"""``make new-section ID=P5-9.2 TITLE="Batches And Tensors"``: everything a new section needs
before its author writes a word, so that the site builds and the tests pass as it is.

It writes (ADDING-A-SECTION.md lists what the author writes next, and what the build derives):

- the page, ``docs/<slug>-<title>.md``: front matter (``section_id``, ``version``: today's date,
  ``description``), the ``# `` title, the install box, and one executed block that calls the
  module stub (``build_support/section.py`` then counts it as a section);
- the module stub ``examples/<title>.py``, one function with its argument check, re-exported by
  ``examples/__init__.py``, and its test ``tests/test_<title>.py``;
- the entries: the nav (``mkdocs.yml``, after the last section's pages), the course map (its
  heading named, with the ``{{ course.status ID }}`` line), the home page's list of sections,
  and ARCHITECTURE.md's row for the module.

Nothing is overwritten: an existing page, module or test, or an ID already taken, stops it
before it writes anything. Standard library only, but for ruff, which sorts the imports it adds.

    python -m build_support.new_section P5-9.2 "Batches And Tensors"
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

from . import section
from .section import ROOT

INSTALL_BOX = """\
!!! tip install-box "Run this section's code on your machine"
    Needs Python {{ install.python }}. One command, in a fresh virtual environment, installs \
the code behind every block on this page, pinned to this section's version \
({{ install.version }}): the course's `examples` package and what it needs (`jax`, `numpy`, \
the newest pair your Python supports). The line carries the package's SHA-256: pip checks it \
and refuses any other file. With an NVIDIA GPU, on Linux, take the line in the second tab: the \
same package and `jax`, plus JAX's CUDA 12 plugin at that very `jax` version.

    === "CPU"

        ```sh
        {{ install.command }}
        ```

    === "NVIDIA GPU (Linux, CUDA 12)"

        ```sh
        {{ install.gpu_command }}
        ```

    Every Python block on this page then runs as copied, and `python -m examples verify` runs \
each one that shows its output and says whether your machine prints the same. The package: \
[{{ install.wheel }}]({{ install.wheel }}).
"""

PAGE = """\
---
section_id: {id}
version: {version}
description: Section {id} of the deep-learning course, {title}.
---

# {id} {title}

{install_box}
This section's text comes here; each output below is computed when the site is built.

```python exec="on" source="above" result="text" id="{slug}-first-rows"
from examples import {function}

print({function}(2))
```
"""

MODULE = '''\
"""Live code for course section {id} "{title}".

Made by ``make new-section``: a starting point, to be replaced by the section's own code.
"""

from __future__ import annotations

from .arguments import as_count
from .data import BATCH


def {function}(count: int) -> list[list[float]]:
    """The first ``count`` rows of the manuscript's batch, taken in turn."""
    count = as_count("count", count)
    return [list(BATCH[row % len(BATCH)]) for row in range(count)]
'''

TEST = '''\
"""Section {id}'s live code (examples/{module}.py)."""

from __future__ import annotations

import pytest

from examples import BATCH, {function}


def test_{function}_takes_the_batchs_rows_in_turn():
    rows = {function}(len(BATCH) + 1)
    assert rows[: len(BATCH)] == [list(row) for row in BATCH]
    assert rows[-1] == list(BATCH[0])


def test_{function}_refuses_a_count_that_is_not_one():
    with pytest.raises(TypeError, match="count must be a non-negative integer"):
        {function}("two")
'''


class Refused(Exception):
    """Why the section cannot be added as asked; nothing was written."""


def title_slug(title: str) -> str:
    """``Batches And Tensors`` -> ``batches-and-tensors``."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def plan(root: Path, section_id: str, title: str, version: str) -> dict[str, str]:
    """What the new section is called everywhere; ``Refused`` where it cannot be added."""
    if not re.fullmatch(r"P\d+(?:-\d+)*(?:\.\d+)*", section_id):
        raise Refused(f"ID={section_id!r}: a section ID looks like P5-9.2")
    if not title_slug(title) or title.startswith(section_id):
        raise Refused(f'TITLE={title!r}: the title without its ID, such as "Batches And Tensors"')
    known = section.sections(root)
    if any(one.id == section_id for one in known):
        raise Refused(
            f"section {section_id} exists already: {section.by_id(section_id, root).page}"
        )
    module = title_slug(title).replace("-", "_")
    if not module.isidentifier() or module[0].isdigit():
        raise Refused(f"TITLE={title!r}: it must start with a letter (it names the module)")
    names = {
        "id": section_id,
        "title": title.strip(),
        "version": version,
        "slug": section.slug(section_id),
        "module": module,
        "function": f"{module}_rows",
        "page": f"{section.slug(section_id)}-{title_slug(title)}.md",
    }
    for path in (f"docs/{names['page']}", f"examples/{module}.py", f"tests/test_{module}.py"):
        if (root / path).exists():
            raise Refused(f"{path} exists already; nothing was written")
    return names


def with_nav_entry(config: str, names: dict[str, str], root: Path) -> str:
    """mkdocs.yml with the page in its nav, after the last page of a section (else first)."""
    lines = config.split("\n")
    start = lines.index("nav:")
    entries = [n for n in range(start + 1, len(lines)) if lines[n].startswith("  - ")]
    entries = entries[: next((i for i, n in enumerate(entries) if n - entries[0] != i), None)]
    known = section.sections(root)
    of_sections = [
        n for n in entries if section.section_of(lines[n].rsplit(": ", 1)[-1], known=known)
    ]
    at = (of_sections[-1] if of_sections else entries[0]) + 1
    lines.insert(at, f'  - "{names["id"]} {names["title"]}": {names["page"]}')
    return "\n".join(lines)


def with_course_map_entry(text: str, names: dict[str, str]) -> str:
    """The course map with the section's heading named and its status line (a new entry at
    the end where it had none)."""
    status = f"{{{{ course.status {names['id']} }}}}"
    heading = re.compile(
        rf"^(#+) {re.escape(names['id'])}(?: [^{{\n]*)? \{{ #{names['slug']} \}}$", re.M
    )
    match = heading.search(text)
    if match is None:
        entry = f"#### {names['id']} {names['title']} {{ #{names['slug']} }}\n\n{status}\n"
        return text.rstrip("\n") + "\n\n" + entry
    named = f"{match[1]} {names['id']} {names['title']} {{ #{names['slug']} }}"
    text = text[: match.start()] + named + text[match.end() :]
    after = match.start() + len(named)
    following = text.find("\n#", after)
    if status not in text[after : following if following != -1 else len(text)]:
        paragraph = text.index("\n\n", after) + 2
        text = text[:paragraph] + status + " " + text[paragraph:]
    return text


def with_home_entry(text: str, names: dict[str, str]) -> str:
    """The home page with the section at the end of its list of sections."""
    start = text.index("## Sections\n")
    end = text.find("\n## ", start)
    end = len(text) if end == -1 else end
    listing = text[start:end].rstrip("\n")
    item = f"- [{names['id']} {names['title']}]({names['page']})"
    return text[:start] + listing + "\n" + item + "\n" + text[end:]


def with_module_row(text: str, names: dict[str, str]) -> str:
    """ARCHITECTURE.md with the module's row, before the package's ``__main__.py`` row."""
    row = (
        f"| `{names['module']}.py` | section {names['id']}'s live code: `{names['function']}` "
        "(made by `make new-section`) | page |\n"
    )
    at = text.index("| `__main__.py` |")
    return text[:at] + row + text[at:]


def with_export(text: str, names: dict[str, str]) -> str:
    """examples/__init__.py with the function re-exported (ruff sorts both lists after)."""
    function = names["function"]
    imports = text.index("\n__all__ = [")
    text = text[:imports] + f"\nfrom .{names['module']} import {function}" + text[imports:]
    return text.replace("\n__all__ = [\n", f'\n__all__ = [\n    "{function}",\n', 1)


def add_section(root: Path, section_id: str, title: str, version: str | None = None) -> list[str]:
    """Write the new section and its entries; the paths written, relative to ``root``."""
    version = version or datetime.datetime.now(datetime.UTC).strftime("v%Y.%m.%d")
    names = plan(root, section_id, title, version)
    written = {
        f"docs/{names['page']}": PAGE.format(install_box=INSTALL_BOX, **names),
        f"examples/{names['module']}.py": MODULE.format(**names),
        f"tests/test_{names['module']}.py": TEST.format(**names),
    }
    edits = {
        "mkdocs.yml": lambda text: with_nav_entry(text, names, root),
        "docs/course-map.md": lambda text: with_course_map_entry(text, names),
        "docs/index.md": lambda text: with_home_entry(text, names),
        "ARCHITECTURE.md": lambda text: with_module_row(text, names),
        "examples/__init__.py": lambda text: with_export(text, names),
    }
    for path, edit in edits.items():
        written[path] = edit((root / path).read_text())
    for path, text in written.items():
        (root / path).write_text(text)
    python = [
        f"examples/{names['module']}.py",
        "examples/__init__.py",
        f"tests/test_{names['module']}.py",
    ]
    ruff = Path(sys.executable).with_name("ruff")
    if ruff.exists():  # the imports and __all__ sorted as `make lint` wants them
        subprocess.run([str(ruff), "check", "--fix", "--quiet", *python], cwd=root, check=False)
        subprocess.run([str(ruff), "format", "--quiet", *python], cwd=root, check=False)
    return list(written)


def main(arguments: list[str]) -> int:
    if len(arguments) != 2 or not all(arguments):
        print('usage: make new-section ID=P5-9.2 TITLE="Batches And Tensors"', file=sys.stderr)
        return 2
    try:
        written = add_section(ROOT, *arguments)
    except Refused as why:
        print(f"new-section: {why}", file=sys.stderr)
        return 1
    print("new-section: wrote " + ", ".join(written))
    print("Next: write the section's text and blocks (ADDING-A-SECTION.md), then `make serve`.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
