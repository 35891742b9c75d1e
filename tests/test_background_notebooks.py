"""hooks/background_notebooks.py: notebooks run beside the build; timed blocks wait for them."""

from __future__ import annotations

import importlib.util
import sys
import threading
from concurrent.futures import Future

import pytest

from .helpers import ROOT

_spec = importlib.util.spec_from_file_location(
    "background_notebooks", ROOT / "hooks/background_notebooks.py"
)
background_notebooks = importlib.util.module_from_spec(_spec)
sys.modules["background_notebooks"] = background_notebooks  # as MkDocs loads a hook
_spec.loader.exec_module(background_notebooks)


@pytest.fixture
def a_notebook_still_running(monkeypatch):
    cells_done = threading.Event()
    run = background_notebooks._Run(Future(), cells_done)
    monkeypatch.setattr(background_notebooks, "_runs", {"notebooks/a.py": run})
    yield cells_done
    cells_done.set()


def test_a_quiet_block_waits_for_the_notebooks_and_others_do_not(a_notebook_still_running):
    ran = []
    formatter = background_notebooks._quiet(lambda **options: ran.append(options["id"]))

    formatter(id="plain", extra={})
    assert ran == ["plain"]  # ran at once, beside the notebook

    quiet = threading.Thread(target=formatter, kwargs={"id": "timed", "extra": {"quiet": "yes"}})
    quiet.start()
    quiet.join(timeout=0.3)
    assert quiet.is_alive() and ran == ["plain"]  # still waiting for the notebook's cells

    a_notebook_still_running.set()  # the last cell has run; the kernel may still be stopping
    quiet.join(timeout=10)
    assert ran == ["plain", "timed"]


def test_cells_done_is_set_after_the_last_cell_and_also_when_a_cell_fails(tmp_path):
    good = tmp_path / "good.py"
    good.write_text("# %%\nx = 1\n\n# %% [markdown]\n# text\n\n# %%\nprint(x + 1)\n")
    cells_done = threading.Event()
    notebook, seconds = background_notebooks.execute_notebook(good, "", cells_done)
    assert cells_done.is_set() and seconds > 0
    assert notebook.cells[-1].outputs[0]["text"] == "2\n"

    bad = tmp_path / "bad.py"
    bad.write_text("# %%\nraise ValueError('broken cell')\n")
    cells_done = threading.Event()
    with pytest.raises(Exception, match="broken cell"):
        background_notebooks.execute_notebook(bad, "", cells_done)
    assert cells_done.is_set()


def test_the_wrapper_leads_back_to_the_formatter_it_wraps():
    def formatter(**options):
        return options

    assert background_notebooks._quiet(formatter).__wrapped__ is formatter


def test_the_notebook_runs_in_the_hook_not_in_mkdocs_jupyter():
    config = (ROOT / "mkdocs.yml").read_text()
    assert "execute: false" in config
    hooks = [line.strip() for line in config.splitlines() if line.strip().startswith("- hooks/")]
    names = [line.split()[1] for line in hooks]
    # After execution_report.py, which unwraps every formatter wrapper before wrapping its own.
    assert names.index("hooks/background_notebooks.py") > names.index("hooks/execution_report.py")


def test_the_turnaround_table_is_the_quiet_block():
    page = (ROOT / "docs/p5-9-1-gpus-and-parallel-processing.md").read_text()
    quiet = [line for line in page.splitlines() if 'quiet="yes"' in line]
    assert len(quiet) == 1 and 'id="p5-9-1-turnaround-table"' in quiet[0]
