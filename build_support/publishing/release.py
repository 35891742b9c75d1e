"""The course's release: the version of the whole site, which mike deploys as a folder and the
readers' wheel carries, in a form of its own, so that it is never a section's version.

A section's version is ``v`` and the date of its content, ``v2026.07.20``
(``build_support/section.py``). A release is ``v``, the date it was made and its number on that
day, from 1: ``v2026.12.05.1`` (a second release that day: ``v2026.12.05.2``). Four numbers
against a section's three, the last never 0: no release is a section's version, neither as
written nor as PEP 440 compares them (``2026.12.5.1`` is not ``2026.12.5``), whatever the
sections' dates. Releases still sort by when they were made, after the folders published when
the release took its one section's version (``v2026.07.20``), by PEP 440 order
(``aliases.py``) and by mike's own.

hatch_build.py loads this file by its path (hatchling's build cannot import the project):
standard library only.

    python -m build_support.publishing.release   # the release, checked: v2026.12.05.1
"""

from __future__ import annotations

import datetime
import re
import tomllib
from pathlib import Path

FORM = re.compile(r"v(\d{4})\.(\d{2})\.(\d{2})\.([1-9]\d*)", re.ASCII)
EXAMPLE = "v2026.12.05.1"


def is_release(value: str) -> bool:
    """Whether ``value`` is in the release's form, with a date that exists."""
    match = FORM.fullmatch(value)
    try:
        return match is not None and bool(datetime.date(*map(int, match.groups()[:3])))
    except ValueError:  # v2026.02.30.1
        return False


def checked(value: str) -> str:
    """``value``, where it is a release; ``ValueError`` saying the form otherwise."""
    if not is_release(value):
        raise ValueError(
            f"pyproject.toml: [tool.course] release {value!r} is not a release; expected v, the "
            f"date the release is made and its number that day, vYYYY.MM.DD.N ({EXAMPLE}): a "
            "section's version (vYYYY.MM.DD) is never the course's"
        )
    return value


def release(root: Path) -> str:
    """``[tool.course] release`` in ``root``'s pyproject.toml, checked."""
    text = (root / "pyproject.toml").read_text(encoding="utf-8")
    return checked(tomllib.loads(text)["tool"]["course"]["release"])


if __name__ == "__main__":
    try:
        print(release(Path.cwd()))
    except (OSError, KeyError, ValueError) as error:
        raise SystemExit(f"build_support.publishing.release: {error}") from None
