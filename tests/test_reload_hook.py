"""Re-importing ``examples`` at each build: after it, an edit to the package shows at the next
import (``mkdocs serve``). Done by hooks/execution.py with ``build_support.execution.state``."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

from build_support.execution import state
from testkit.hooks import load_hook
from testkit.project import ROOT

execution_hook = load_hook("execution")


@pytest.fixture
def real_package_restored():
    """Put the real ``examples`` modules back after the test, whatever it imported."""
    saved = {
        name: module
        for name, module in sys.modules.items()
        if name == "examples" or name.startswith("examples.")
    }
    yield
    state.drop_examples_modules()
    sys.modules.update(saved)


@pytest.fixture
def edited_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_package_restored):
    """An ``examples`` package in a temporary folder that shadows the real one."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no stale .pyc between two edits
    monkeypatch.syspath_prepend(str(tmp_path))
    package = tmp_path / "examples"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "scoring.py").write_text("VERSION = 'before the edit'\n")
    state.drop_examples_modules()
    importlib.invalidate_caches()
    return package


def test_an_edit_shows_only_after_the_hook(edited_package):
    assert importlib.import_module("examples.scoring").VERSION == "before the edit"
    (edited_package / "scoring.py").write_text("VERSION = 'after the edit'\n")
    assert importlib.import_module("examples.scoring").VERSION == "before the edit"  # cached

    execution_hook.on_pre_build(config={})
    assert importlib.import_module("examples.scoring").VERSION == "after the edit"


def test_the_hook_drops_the_package_and_its_submodules_only(real_package_restored):
    importlib.import_module("examples.scoring")
    dropped = state.drop_examples_modules()
    assert "examples" in dropped
    assert "examples.scoring" in dropped
    assert all(name == "examples" or name.startswith("examples.") for name in dropped)
    assert "examples" not in sys.modules
    assert "jax" in sys.modules  # the expensive imports stay cached


def test_mkdocs_runs_the_hook():
    config = (ROOT / "mkdocs.yml").read_text()
    assert "- hooks/execution.py" in config
