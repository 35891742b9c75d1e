"""A notebook keeps every limit a block keeps, while it runs (build_support/notebooks/
kernels.py): output past the limit in any cell, the last included, fails the
build naming that cell; a cell past its time fails it with one line, no kernel traceback before
it; nothing a cell detaches outlives the build (the kernel is a child subreaper, its tree ended).

The builds are of a one-page site with one notebook that loads the project's execution hook, as
in test_block_guard.py: what is tested is the hook, not the course's pages.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from build_support.notebooks.kernels import KernelLimits
from testkit.build import mkdocs_build
from testkit.small_site import site_config

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="prctl and /proc are Linux's")

CONFIG = site_config("notebook limits test", "cell_timeout_s: 2")

OUTPUT_LIMIT = "printed more than 1,048,576 bytes of output"
FAILED = "notebook notebooks/nb.py failed to execute: notebooks/nb.py: "


def build(site: Path, *cells: str) -> subprocess.CompletedProcess[str]:
    """Build a site whose one notebook has ``cells`` (jupytext's percent format)."""
    (site / "docs" / "notebooks").mkdir(parents=True, exist_ok=True)
    (site / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    (site / "docs" / "index.md").write_text("# A page\n", encoding="utf-8")
    notebook = "".join(f"# %%\n{cell}\n\n" for cell in cells)
    (site / "docs" / "notebooks" / "nb.py").write_text(notebook, encoding="utf-8")
    return mkdocs_build(site / "mkdocs.yml", site / "site", cache_dir=site / "cache", timeout=120)


def test_the_last_cell_printing_past_the_output_limit_fails_the_build_naming_it(tmp_path):
    result = build(tmp_path, "x = 1", "import jax", "print('x' * 10_000_000)")
    assert result.returncode == 1, result.stderr
    assert FAILED + f"cell 3 (print('x' * 10_000_000)) {OUTPUT_LIMIT}" in result.stderr
    assert not (tmp_path / "site" / "notebooks" / "nb" / "index.html").exists()


def test_a_cell_mid_notebook_printing_past_the_limit_is_the_cell_named(tmp_path):
    """The kernel ends the cell, and starts the next, before the build has read its outputs:
    the cell named is the one whose output passed the limit, not the one running then."""
    cells = ("x = 1", "y = 2", "print('x' * 10_000_000)", "import jax", "print(jax.numpy.ones(2))")
    result = build(tmp_path, *cells)
    assert result.returncode == 1, result.stderr
    assert FAILED + f"cell 3 (print('x' * 10_000_000)) {OUTPUT_LIMIT}" in result.stderr
    assert "cell 4" not in result.stderr


def _gone(pid: int) -> bool:
    """No such process, or only its exit status left (a zombie nobody has reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def test_a_process_a_cell_detaches_does_not_outlive_the_build(tmp_path):
    pid_file = tmp_path / "detached.txt"
    cell = (
        "import pathlib, subprocess\n"
        "sleeper = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        f"pathlib.Path({str(pid_file)!r}).write_text(str(sleeper.pid), encoding='utf-8')"
    )
    try:
        # A sleeper left running would also hold the build's output pipes open: mkdocs_build
        # would time out waiting for their end, failing the test that way.
        result = build(tmp_path, cell)
        assert result.returncode == 0, result.stderr
        pid = int(pid_file.read_text(encoding="utf-8"))
        # SIGKILL was sent before the build ended; the wait is for the system to carry it out.
        until = time.monotonic() + 10
        while not _gone(pid) and time.monotonic() < until:
            time.sleep(0.1)
        assert _gone(pid)
    finally:
        with contextlib.suppress(OSError, ValueError):  # what a failed test left running
            os.kill(int(pid_file.read_text(encoding="utf-8")), signal.SIGKILL)


def test_a_cell_past_its_time_fails_with_one_line_and_no_kernel_traceback(tmp_path):
    result = build(tmp_path, "x = 1", "import time\ntime.sleep(600)")
    assert result.returncode == 1, result.stderr
    assert FAILED + "cell 2 (import time) did not finish within 2 s" in result.stderr
    for noise in ("Traceback", "ZMQError", "IPKernelApp"):
        assert noise not in result.stderr, result.stderr


def test_a_kernel_ended_while_it_started_is_ended_once_up():
    """Under ``mkdocs serve`` an edit stops a run whose kernel may be still starting
    (``NotebookRun.cancel``): the kernel is ended as soon as it is up, not left to run its cells."""
    kernel = subprocess.Popen(["sleep", "300"], start_new_session=True)  # a kernel, as started
    try:
        limits = KernelLimits(memory_bytes=2**40)
        limits.end()
        limits.started(kernel.pid)
        assert kernel.wait(timeout=30) == -signal.SIGKILL
    finally:
        kernel.kill()
        kernel.wait()
