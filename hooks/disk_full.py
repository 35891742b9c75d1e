"""A build that runs out of disk space ends with one line naming the disk, the path and the
step (``build_support/disk_space.py``), not a traceback. After every other hook, so that each
of theirs has run its own ``on_build_error`` first (workers ended, serve's lock released)."""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
from pathlib import Path

if importlib.util.find_spec("build_support") is None:  # not installed with the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mkdocs.exceptions import Abort

from build_support import disk_space, progress

log = logging.getLogger("mkdocs.hooks.disk_full")


def on_build_error(error):
    if not disk_space.full(error):
        return
    noted = os.environ.get(progress.PROGRESS_ENV)
    step = progress.step(Path(noted)) if noted else "the build"
    line = disk_space.no_space_line(disk_space.filename_of(error, os.getcwd()), step)
    log.error(line)
    raise Abort(line) from None
