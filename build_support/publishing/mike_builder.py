"""mike with the builder the Makefile chose: mike runs ``properdocs`` whenever ProperDocs is
installed (``mike/mkdocs_utils.py`` decides once, at import), and ``uv.lock`` installs it beside
MkDocs. ``make publish`` runs mike through this, so that ``BUILDER`` (default ``mkdocs``) decides.

    python -m build_support.publishing.mike_builder mkdocs|properdocs MIKE-ARGUMENTS...
"""

from __future__ import annotations

import sys
from importlib import metadata

from mike import driver, mkdocs_utils

BUILDERS = {"mkdocs": "MkDocs", "properdocs": "ProperDocs"}
"""The builders the site builds with: the command (and distribution) and its name."""


def choose(builder: str) -> None:
    """Make mike build with ``builder`` and name it in its gh-pages commits."""
    if builder not in BUILDERS:
        raise SystemExit(f"builder {builder!r}: one of {', '.join(BUILDERS)}")
    mkdocs_utils._program_name = builder
    mkdocs_utils._brand = BUILDERS[builder]
    mkdocs_utils._version = metadata.version(builder)


if __name__ == "__main__":
    choose(sys.argv[1])
    sys.argv = ["mike", *sys.argv[2:]]
    sys.exit(driver.main())
