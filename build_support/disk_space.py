"""A full disk, named in one line: the disk (its mount point), the path written, the step.

A raw ``OSError: [Errno 28]`` traceback names neither the disk nor the step, and the wheel's
build with a full ``TMPDIR`` fails with a word of neither disk nor space. ``full`` tells a full
disk or quota from any other error; ``no_space_line`` is the line the build prints instead.
Standard library only.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
NO_SPACE_WORDS = ("No space left on device", "Disk quota exceeded")


def full(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is a full disk or an exceeded quota."""
    while error is not None:
        if isinstance(error, OSError) and error.errno in NO_SPACE:
            return True
        error = error.__cause__ or error.__context__
    return False


def mount_of(path: str | os.PathLike) -> Path:
    """The mount point of the disk that holds ``path`` (or would: its nearest existing folder)."""
    here = Path(os.path.abspath(path))
    while not here.exists() and here != here.parent:
        here = here.parent
    while not os.path.ismount(here) and here != here.parent:
        here = here.parent
    return here


def no_space_line(path: str | os.PathLike, step: str) -> str:
    """One line: no space on the disk that holds ``path``, at ``step`` of the build."""
    return f"no space left on the disk mounted at {mount_of(path)} (writing {path}) at {step}"


def filename_of(error: BaseException, fallback: str | os.PathLike) -> str | os.PathLike:
    """The path written when ``error`` came: a copy's destination, else its file."""
    while error is not None:
        if isinstance(error, OSError) and (error.filename2 or error.filename):
            return error.filename2 or error.filename
        error = error.__cause__ or error.__context__
    return fallback
