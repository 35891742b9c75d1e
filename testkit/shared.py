"""A session fixture made once per test run, not once per pytest-xdist process: the site's
fresh build and its published tree take minutes of CPU each, and every process reads the same.

The first process to ask makes it in a folder beside the processes' own temporary folders,
holding an ``fcntl.flock`` lock; the others wait on the lock, then find it done. A failure is
recorded, so that each process fails the same way rather than making it again.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable
from pathlib import Path

import pytest

DONE, FAILED = ".done", ".failed"


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory,
    worker_id: str,
    name: str,
    make: Callable[[Path], None],
) -> Path:
    """The folder ``name`` after ``make(folder)`` has run once in this test run."""
    if worker_id == "master":  # not distributed: the process's own folder
        folder = tmp_path_factory.mktemp(name, numbered=False)
        make(folder)
        return folder
    root = tmp_path_factory.getbasetemp().parent  # shared by every process of the run
    folder = root / name
    with open(root / f"{name}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process ends
        if (folder / FAILED).exists():
            pytest.fail(f"{name}: {(folder / FAILED).read_text(encoding='utf-8')}")
        if not (folder / DONE).exists():
            folder.mkdir(exist_ok=True)
            try:
                make(folder)
            except BaseException as error:
                (folder / FAILED).write_text(
                    f"made by another process, which failed: {error}", encoding="utf-8"
                )
                raise
            (folder / DONE).touch()
    return folder
