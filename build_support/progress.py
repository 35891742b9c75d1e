"""Where a build is, in a file of its own (``site.builds/<build>.progress``, named in
``COURSE_BUILD_PROGRESS``) that its driver (``build_support/site_swap.py``) reads once MkDocs has
returned: a build that did not finish is never swapped into ``site/``, and the step it was in is
named. MkDocs' exit status cannot say it: a process killed by a signal names nothing, and one that
calls ``os._exit(0)`` ends with status 0 before a page is written. Standard library only: the
driver reads it without importing the build (MkDocs costs ~0.6 s).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PROGRESS_ENV = "COURSE_BUILD_PROGRESS"
FINISHED = "finished"
STARTING = "its start (before its first page)"


def note(what: str) -> None:
    """Say, where asked, what the build runs now (``page x.md, block 'id'``) or ``FINISHED``."""
    path = os.environ.get(PROGRESS_ENV)
    if path:
        with contextlib.suppress(OSError):  # a full disk: the build says it (hooks/disk_full.py)
            Path(path).write_text(what, encoding="utf-8")


def at_block(page: str, block_id: str) -> None:
    """Say the build runs (or waits for) this block now."""
    note(f"page {page}, block {block_id!r}")


def step(path: Path) -> str:
    """The step the build that writes ``path`` was in last (``FINISHED`` at its end)."""
    try:
        return path.read_text(encoding="utf-8") or STARTING
    except OSError:
        return STARTING
