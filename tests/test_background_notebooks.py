"""hooks/background_notebooks.py: notebooks run beside the build; timed blocks wait for them."""

from __future__ import annotations

import importlib.util
import threading
from concurrent.futures import Future

import pytest

from .helpers import ROOT

_spec = importlib.util.spec_from_file_location(
    "background_notebooks", ROOT / "hooks/background_notebooks.py"
)
background_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(background_notebooks)


@pytest.fixture
def a_notebook_still_running(monkeypatch):
    running = Future()
    monkeypatch.setattr(background_notebooks, "_runs", {"notebooks/a.py": running})
    yield running
    if not running.done():
        running.set_result(None)


def test_a_quiet_block_waits_for_the_notebooks_and_others_do_not(a_notebook_still_running):
    ran = []
    formatter = background_notebooks._quiet(lambda **options: ran.append(options["id"]))

    formatter(id="plain", extra={})
    assert ran == ["plain"]  # ran at once, beside the notebook

    quiet = threading.Thread(target=formatter, kwargs={"id": "timed", "extra": {"quiet": "yes"}})
    quiet.start()
    quiet.join(timeout=0.3)
    assert quiet.is_alive() and ran == ["plain"]  # still waiting for the notebook

    a_notebook_still_running.set_result(None)
    quiet.join(timeout=10)
    assert ran == ["plain", "timed"]


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
