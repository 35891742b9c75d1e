"""Re-import the ``examples`` package on every build, so ``mkdocs serve`` shows edits to it.

The pages' code blocks run inside the MkDocs process, where Python caches imported modules:
without this hook an edit to ``examples/`` (watched by ``make serve``) rebuilds the site with
the old code until the server restarts.
"""

from __future__ import annotations

import sys

PACKAGE = "examples"


def drop_examples_modules() -> list[str]:
    """Forget ``examples`` and its submodules; the next import reads them from disk again."""
    names = [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]
    for name in names:
        del sys.modules[name]
    return names


def on_pre_build(config):
    drop_examples_modules()
