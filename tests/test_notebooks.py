"""Notebooks run beside the build (build_support.notebooks.kernels); timed blocks wait for
them."""

from __future__ import annotations

import os
import re
import threading

import pytest

from build_support import settings
from build_support.execution import executor, sessions, state
from build_support.notebooks import kernels
from testkit.project import MEASURED_PAGE, ROOT, SECTION_PAGE

TIMEOUT_S = settings.read(ROOT).cell_timeout_s


def limits() -> kernels.KernelLimits:
    """A kernel's limits, as a build sets them (each run its own: they keep what it used)."""
    return kernels.KernelLimits(settings.read(ROOT).memory_limit_gib * 2**30)


@pytest.fixture
def a_build(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    return state.start(ROOT)


@pytest.fixture
def a_notebook_still_running(a_build, monkeypatch):
    run = kernels.NotebookRun("notebooks/a.py")
    a_build.notebooks.runs["notebooks/a.py"] = run
    ran = []
    monkeypatch.setattr(
        sessions, "render", lambda execution, **options: ran.append(options["id"]) or ""
    )
    yield a_build, run.cells_done, ran
    run.cells_done.set()


def test_a_timed_block_waits_for_the_notebooks_and_others_do_not(a_notebook_still_running):
    build, cells_done, ran = a_notebook_still_running
    options = {"code": "x = 1", "id": "plain", "extra": {}}
    sessions.execute(build, options, False, executor.LazyWorker(build.take_worker))
    assert ran == ["plain"]  # ran at once, beside the notebook

    timed = {"code": "x = 1", "id": "timed", "extra": {"timed": "yes"}}
    worker = executor.LazyWorker(build.take_worker, True)
    waiting = threading.Thread(target=sessions.execute, args=(build, timed, True, worker))
    waiting.start()
    waiting.join(timeout=0.3)
    assert waiting.is_alive() and ran == ["plain"]  # still waiting for the notebook's cells

    cells_done.set()  # the last cell has run; the kernel may still be stopping
    waiting.join(timeout=10)
    assert ran == ["plain", "timed"]


def test_cells_done_is_set_after_the_last_cell_and_also_when_a_cell_fails(tmp_path):
    good = tmp_path / "good.py"
    good.write_text("# %%\nx = 1\n\n# %% [markdown]\n# text\n\n# %%\nprint(x + 1)\n")
    run = kernels.NotebookRun("good.py", kernel=limits())
    notebook, seconds = kernels.execute_notebook(good, "", run, TIMEOUT_S)
    assert run.cells_done.is_set() and seconds > 0
    assert notebook.cells[-1].outputs[0]["text"] == "2\n"

    bad = tmp_path / "bad.py"
    bad.write_text("# %%\nx = 1\n\n# %%\nraise ValueError('broken cell')\n")
    run = kernels.NotebookRun("bad.py", kernel=limits())
    with pytest.raises(kernels.NotebookError, match=r"bad.py: cell 2 \(raise ValueError"):
        kernels.execute_notebook(bad, "", run, TIMEOUT_S)
    assert run.cells_done.is_set()


def test_the_kernel_is_reached_over_unix_sockets_removed_after_the_run(tmp_path, capfd):
    """Not TCP ports another local user could connect to; and no warning of them in the log."""
    notebook = tmp_path / "where.py"
    notebook.write_text(
        "# %%\nimport json\nfrom ipykernel import get_connection_info\n"
        "info = json.loads(get_connection_info())\nprint(info['transport'], info['ip'])\n"
    )
    where = kernels.NotebookRun("where.py", kernel=limits())
    ran, _ = kernels.execute_notebook(notebook, "", where, TIMEOUT_S)
    transport, ip = ran.cells[0].outputs[0]["text"].split()
    assert transport == "ipc" and os.path.isabs(ip)
    assert not os.path.exists(os.path.dirname(ip))  # the sockets' folder, gone with the kernel
    assert "without encryption" not in capfd.readouterr().err


def test_a_hanging_cell_fails_naming_the_notebook_and_the_cell(tmp_path):
    hangs = tmp_path / "hangs.py"
    hangs.write_text("# %%\nx = 1\n\n# %%\nimport time\ntime.sleep(600)\n")
    with pytest.raises(kernels.NotebookError) as error:
        kernels.execute_notebook(hangs, "", kernels.NotebookRun("hangs.py", kernel=limits()), 2)
    assert "hangs.py: cell 2 (import time) did not finish within 2 s" in str(error.value)


def test_the_cell_timeout_is_far_below_the_tests_build_timeout():
    assert settings.read(ROOT).cell_timeout_s * 5 <= 600  # tests' mkdocs_build timeout


def test_the_notebook_runs_in_the_hook_not_in_mkdocs_jupyter():
    config = (ROOT / "mkdocs.yml").read_text()
    assert "execute: false" in config
    # One owner: no hook but execution.py (through build_support) touches the formatters.
    for hook in (ROOT / "hooks").glob("*.py"):
        assert "formatters[" not in hook.read_text(), hook


def test_the_blocks_that_time_are_the_timed_blocks():
    pages = [ROOT / "docs" / f"{SECTION_PAGE}.md", ROOT / "docs" / f"{MEASURED_PAGE}.md"]
    timed = [line for p in pages for line in p.read_text().splitlines() if 'timed="yes"' in line]
    ids = {re.search(r'\bid="([^"]+)"', line)[1] for line in timed}
    assert ids == {"p5-9-1-turnaround-table", "p5-9-1-settings-sweep"}


def test_the_hooks_run_in_the_order_hooks_execution_py_names():
    """site_safety.py first (a build run without make is handed to make's driver before any
    other hook does work), then settings.py (it validates the settings the others read), then
    execution.py (its
    sessions' outputs are in the page before any other hook reads it); wheel after
    notebook_download (it fills in the .ipynb that one writes)."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = config.split("\nhooks:\n", 1)[1].split("\n\n", 1)[0]
    hooks = re.findall(r"^  - hooks/(\w+)\.py", listed, re.MULTILINE)
    assert hooks[:3] == ["site_safety", "settings", "execution"]
    assert hooks.index("notebook_download") < hooks.index("wheel")
