"""What the Makefile reads from Python when it starts, in one run: every ``make`` command waits
for it before any rule, so it is one interpreter, not one a variable (five, plus pyenv's shim,
cost ``make -n build`` 0.4 s of a no-change build's 1.6 s).

    python3 -m build_support.make_vars [--python PYTHON] FOLDER...
    # PYTHON := /root/.pyenv/versions/3.13.0/bin/python3.13@@NEWLINE@@PYTHON_MINOR := 3.13...

Printed as Make assignments joined by ``@@NEWLINE@@``, since ``$(shell)`` turns newlines into
spaces: the Makefile puts newlines back (``$(subst)``) and ``$(eval)``s them. A value is
left out where it cannot be read (the tests' bare copies of the Makefile have no
``build_support``): the Makefile's fallbacks stand. Standard library only: the Makefile runs it
with ``.venv``'s Python where that runs, else the machine's ``python3``.

- ``PYTHON``, ``PYTHON_MINOR``: the newest CPython of the support matrix on the machine
  (``pythons.py``), or the one ``--python`` names (the user's ``make PYTHON=…``), and its
  version;
- ``UNWRITABLE``: the first of ``FOLDER``s this user cannot write, said with the fix
  (``writable.py``);
- ``export NAME := VALUE``: the switches every build runs with (``build_command.BUILD_ENV``);
- ``BUILDER_FOUND``: the builder the project builds with (``build_command.BUILDER``);
- ``SECTIONS_NOW``: each section's ID, version and page (``section.sections``), one line of
  ``.venv/.synced``'s form.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from . import pythons, writable

NEWLINE = "@@NEWLINE@@"


def _escaped(value: str) -> str:
    """``value`` as Make reads it back after ``$(eval)``: no ``$`` expanded, no line broken."""
    return value.replace("$", "$$").replace("\n", " ").replace("#", "\\#")


def _minor(python: str) -> str | None:
    try:
        result = subprocess.run(
            [python, "-c", 'import sys; print("%d.%d" % sys.version_info[:2])'],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip()


def assignments(python: str | None, folders: list[str]) -> list[str]:
    """The Makefile's start-up values, one assignment each (those that could be read)."""
    from . import build_command, section  # after pythons: a missing file costs only its values

    said: list[str] = []
    found = ((version, pythons.find(version)) for version in pythons.matrix()[::-1])
    newest, minor = (
        (python, _minor(python))
        if python
        else next(((path, version) for version, path in found if path), (None, None))
    )
    if newest:
        said.append(f"PYTHON := {_escaped(newest)}")
    if minor:
        said.append(f"PYTHON_MINOR := {minor}")
    problem = next(filter(None, (writable.problem(Path(folder)) for folder in folders)), "")
    said.append(f"UNWRITABLE := {_escaped(problem)}")
    said += [
        f"export {name} := {_escaped(value)}" for name, value in build_command.BUILD_ENV.items()
    ]
    said.append(f"BUILDER_FOUND := {_escaped(build_command.BUILDER)}")
    try:
        sections = section.sections(Path.cwd())
    except (OSError, KeyError, ValueError):
        sections = []  # the build names the page, the line and the field
    said.append(
        "SECTIONS_NOW := "
        + _escaped(" ".join(f"{one.id} {one.version} docs/{one.page}" for one in sections))
    )
    return said


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m build_support.make_vars")
    parser.add_argument("--python", help="the Python the user chose (make PYTHON=...)")
    parser.add_argument("folders", nargs="*", help="the folders make keeps in the checkout")
    options = parser.parse_args(argv)
    print(NEWLINE.join(assignments(options.python, options.folders)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
