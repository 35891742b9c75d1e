"""``make new-section ID=P5-9.2 TITLE="Batches And Tensors"``: everything a new section needs
before its author writes a word, so that the site builds and the tests pass as it is.

What the author types is checked first, each refusal one line naming the field and its form: the
ID in ASCII (``P5-9.2``: file names and links are made of it), the title one line of letters,
digits, spaces and plain punctuation (it is written into YAML, Markdown and Python), and the
module's name (``MODULE=``), which is otherwise the title spelled in ASCII: accents dropped and
a few letters spelled out (``Tensörs Und Größen``: ``tensors_und_grossen``); a title that cannot
be spelled so asks for one.

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

    python -m build_support.new_section P5-9.2 "Batches And Tensors" [module_name]
"""

from __future__ import annotations

import datetime
import json
import keyword
import re
import subprocess
import sys
import unicodedata
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
description: {description}
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
"""Live code for course section {id}, the page docs/{page}.

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


PUNCTUATION = " -,.:;'\"!?&()"
"""What a title may hold besides letters and digits (of any script): nothing that Markdown,
attribute lists, the install box's ``{{ }}`` or ARCHITECTURE's table would read as markup."""
SPELLED = str.maketrans(
    {"ß": "ss", "æ": "ae", "Æ": "Ae", "œ": "oe", "Œ": "Oe", "ø": "o", "Ø": "O", "ł": "l"}
    | {"Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th"}
)
"""Letters that Unicode's decomposition (NFKD) does not take to ASCII, spelled out."""
MODULE_NAME = re.compile(r"[a-z][a-z0-9_]*", re.ASCII)


class Refused(Exception):
    """Why the section cannot be added as asked; nothing was written."""


def title_slug(title: str) -> str | None:
    """The title spelled in ASCII, for file names: ``Tensörs Und Größen`` ->
    ``tensors-und-grossen``; None where a letter or digit has no such spelling (``Τανυστές``)."""
    spelled = unicodedata.normalize("NFKD", title.translate(SPELLED))
    spelled = "".join(char for char in spelled if not unicodedata.combining(char))
    if any(not char.isascii() and char.isalnum() for char in spelled):
        return None
    return re.sub(r"[^a-z0-9]+", "-", spelled.lower()).strip("-") or None


def check_id(section_id: str) -> None:
    """``Refused`` where ``section_id`` is not a section ID in ASCII."""
    if section.SECTION_ID.fullmatch(section_id):
        return
    other = [f"{char!r} (U+{ord(char):04X})" for char in section_id if not char.isascii()]
    why = f"{', '.join(other)} is not ASCII; " if other else ""
    raise Refused(
        f"ID={section_id!r}: {why}a section ID is P, then ASCII digits joined by - and . (P5-9.2)"
    )


def check_title(title: str, section_id: str) -> None:
    """``Refused`` where ``title`` is not one line of letters, digits and plain punctuation."""
    form = (
        "a title is one line of letters, digits, spaces and - , . : ; ' \" ! ? & ( ), without "
        'the ID, such as "Batches And Tensors"'
    )
    odd = [char for char in title if not (char.isalnum() or char in PUNCTUATION)]
    if odd:
        raise Refused(f"TITLE={title!r}: {odd[0]!r} is not allowed; {form}")
    if not any(char.isalnum() for char in title) or title.strip().startswith(section_id):
        raise Refused(f"TITLE={title!r}: {form}")


def module_name(title: str, module: str | None) -> str:
    """The module's name: ``module`` where the author gave one, else the title spelled in
    ASCII; ``Refused`` where neither makes a name Python can import."""
    if not module:
        slug = title_slug(title)
        if slug is None:
            why = "no module name can be spelled from it in ASCII"
        else:
            module = slug.replace("-", "_")
            if MODULE_NAME.fullmatch(module) and not keyword.iskeyword(module):
                return module
            why = f"its module name {module!r} is not one Python imports"
        raise Refused(f"TITLE={title!r}: {why}; name one, such as MODULE=batches_and_tensors")
    if not MODULE_NAME.fullmatch(module) or keyword.iskeyword(module):
        raise Refused(
            f"MODULE={module!r}: a module name is lowercase ASCII letters, digits and _, "
            "starting with a letter (batches_and_tensors)"
        )
    return module


def plan(
    root: Path, section_id: str, title: str, version: str, module: str | None = None
) -> dict[str, str]:
    """What the new section is called everywhere; ``Refused`` where it cannot be added."""
    check_id(section_id)
    check_title(title, section_id)
    module = module_name(title, module)
    known = section.sections(root)
    if any(one.id == section_id for one in known):
        raise Refused(
            f"section {section_id} exists already: {section.by_id(section_id, root).page}"
        )
    title = title.strip()
    names = {
        "id": section_id,
        "title": title,
        "version": version,
        "slug": section.slug(section_id),
        "module": module,
        "function": f"{module}_rows",
        "page": f"{section.slug(section_id)}-{title_slug(title) or module.replace('_', '-')}.md",
        # Written quoted: YAML reads a title's ": " or leading quote as its own syntax.
        "description": yaml_string(f"Section {section_id} of the deep-learning course, {title}."),
    }
    for path in (f"docs/{names['page']}", f"examples/{module}.py", f"tests/test_{module}.py"):
        if (root / path).exists():
            raise Refused(f"{path} exists already; nothing was written")
    return names


def yaml_string(text: str) -> str:
    """``text`` as a YAML string in double quotes (a JSON string is one)."""
    return json.dumps(text, ensure_ascii=False)


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
    lines.insert(at, f"  - {yaml_string(names['id'] + ' ' + names['title'])}: {names['page']}")
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


def add_section(
    root: Path, section_id: str, title: str, version: str | None = None, module: str | None = None
) -> list[str]:
    """Write the new section and its entries; the paths written, relative to ``root``."""
    version = version or datetime.datetime.now(datetime.UTC).strftime("v%Y.%m.%d")
    names = plan(root, section_id, title, version, module)
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
        written[path] = edit((root / path).read_text(encoding="utf-8"))
    for path, text in written.items():
        (root / path).write_text(text, encoding="utf-8")
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
    if len(arguments) not in (2, 3) or not all(arguments[:2]):
        print(
            'usage: make new-section ID=P5-9.2 TITLE="Batches And Tensors" [MODULE=name]',
            file=sys.stderr,
        )
        return 2
    section_id, title, module = [*arguments, ""][:3]
    try:
        written = add_section(ROOT, section_id, title, module=module or None)
    except Refused as why:
        print(f"new-section: {why}", file=sys.stderr)
        return 1
    print("new-section: wrote " + ", ".join(written))
    print("Next: write the section's text and blocks (ADDING-A-SECTION.md), then `make serve`.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
