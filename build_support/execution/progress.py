"""Where a build is, in a file the Makefile reads once MkDocs has returned: a build whose
process ended before its end (a signal, an abort, a crash of the build's own code) is a failure
naming the block it was running, never a swap of the staging folder into ``site/``.

MkDocs' own exit status cannot say it: a process killed by a signal ends naming nothing, and
one that calls ``os._exit(0)`` ends with status 0 before a page is written (a block's own
``os._exit`` ends only its worker now: ``workers.py``; this file is the line behind that). So
before each block the build writes which one it runs, and at the end of the build
``finished``; the Makefile (``make build``, ``make publish``) checks the file with ``python3 -m
build_support.execution.progress check FILE``. Written only where ``COURSE_BUILD_PROGRESS``
names the file. Standard library only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PROGRESS_ENV = "COURSE_BUILD_PROGRESS"
FINISHED = "finished"


def note(what: str) -> None:
    """Say, where asked, what the build runs now (``page x.md, block 'id'``) or ``FINISHED``."""
    path = os.environ.get(PROGRESS_ENV)
    if path:
        Path(path).write_text(what, encoding="utf-8")


def check(path: Path) -> str | None:
    """Why the build that wrote ``path`` did not finish, or None where it did."""
    try:
        said = path.read_text(encoding="utf-8")
    except OSError:
        return "the build ended before its first block (it wrote no progress)"
    if said == FINISHED:
        return None
    return f"the build process ended while running {said}, before the build finished"


if __name__ == "__main__":
    if sys.argv[1:2] != ["check"] or len(sys.argv) != 3:
        raise SystemExit("usage: python3 -m build_support.execution.progress check FILE")
    progress = Path(sys.argv[2])
    failed = check(progress)
    progress.unlink(missing_ok=True)
    if failed:
        raise SystemExit(f"make: {failed}; site/ is left as it was")
