"""Where a build is, in a file of its own that its driver (``build_support/site_swap.py``) reads
once MkDocs has returned: a build that did not finish is never swapped into ``site/``, and the
way it ended names the step it was in.

MkDocs' own exit status cannot say it: a process killed by a signal ends naming nothing, and
one that calls ``os._exit(0)`` (a hook, a plugin: a block's own ends only its worker) ends with
status 0 before a page is written. So the build writes the step it is in (``STARTING``; each
page; each block it runs, ``page x.md, block 'id'``; ``the wheel``), and at its end
``FINISHED``. Each build has its own file (``site.builds/<build>.progress``, named in
``COURSE_BUILD_PROGRESS``): two builds never read each other's. Written only where that variable
names a file. Standard library only, a module of its own: the driver reads it without importing
the build (``guard`` and the rest import MkDocs, ~0.6 s).
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


def step(path: Path) -> str:
    """The step the build that writes ``path`` was in last (``FINISHED`` at its end)."""
    try:
        return path.read_text(encoding="utf-8") or STARTING
    except OSError:
        return STARTING
