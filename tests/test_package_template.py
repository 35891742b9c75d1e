"""The package template (build_support/execution/template.py):
a session whose first block imports the course package first is forked from a child of the
template that has imported it already; any other session from the template itself; a package
whose import cannot be kept (it prints, warns, raises, starts a thread) is imported by each
worker, and the log says so once; an edited package gets a new package template."""

from __future__ import annotations

import json
import logging
import os
import sys

import pytest

from build_support.execution import executor, state
from build_support.execution.template import imports_package_first
from testkit.build import with_own_workers

LOADED = frozenset({"numpy", "jax", "jax.numpy", "os", "__future__"})


@pytest.mark.parametrize(
    "code",
    [
        "from examples import BATCH\nprint(BATCH)",
        "import examples.timing",
        "import numpy as np\nfrom examples import BATCH",
        "import jax, examples",
        '"""A docstring."""\nfrom __future__ import annotations\nimport examples',
        "from jax import numpy as jnp\nfrom examples.scoring import score_batch",
    ],
)
def test_a_block_that_imports_the_package_before_anything_runs_may_start_with_it(code):
    assert imports_package_first(code, "examples", LOADED)


@pytest.mark.parametrize(
    "code",
    [
        "x = 1\nfrom examples import BATCH",  # code runs first
        "import jax\njax.config.update('jax_enable_x64', True)\nimport examples",
        "from numpy import array\nimport examples",  # `array` may be a module to import
        "import matplotlib\nimport examples",  # not loaded yet: its import runs code
        "from . import examples",
        "print(1)",
        "import numpy",  # never imports the package
        "from examples import (",  # a syntax error: the block will say so
        "",
    ],
)
def test_a_block_where_anything_may_run_before_the_package_starts_without_it(code):
    assert not imports_package_first(code, "examples", LOADED)


LOOK = """
import json, os, sys
print(json.dumps({"parent": os.getppid(), "group": os.getpgid(0), "loaded": "%s" in sys.modules}))
"""


@pytest.fixture
def build(tmp_path, monkeypatch):
    yield from with_own_workers(tmp_path, monkeypatch)


def run(build, first: str, then: str = "", package: str = "examples", version: str = "v1"):
    """A session of ``first`` (then ``then``) for ``package`` at ``version``: what it printed
    last, as JSON, and its last reply."""
    limits = executor.Limits(2**20, 2**32)
    package_dir = os.path.dirname(sys.modules[package].__file__)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(executor, "PACKAGE", package)
        worker = state.PROCESS.executor.take(limits, package_dir, None, first, version)
    try:
        reply = worker.run(first, "first", False, 60)
        if then:
            reply = worker.run(then, "then", False, 60)
    finally:
        worker.close()
    return json.loads(reply["output"].splitlines()[-1]), reply


def test_a_session_that_imports_the_package_first_is_forked_from_the_package_template(build):
    __import__("examples")
    seen, _ = run(build, "from examples import BATCH", LOOK % "examples")
    held = state.PROCESS.executor
    assert held.package_template is not None and held.template is not None
    assert seen["parent"] == held.package_template.process.pid != held.template.process.pid
    assert seen["group"] != held.package_template.process.pid  # a group of its own
    before, _ = run(build, LOOK % "examples")  # its first block imports no package
    assert before["parent"] == held.template.process.pid and not before["loaded"]
    again, _ = run(build, "import examples", LOOK % "examples")
    assert again["parent"] == seen["parent"]  # the same package template, while unchanged


def test_a_new_version_of_the_package_gets_a_new_package_template(build):
    __import__("examples")
    first, _ = run(build, "import examples", LOOK % "examples", version="v1")
    second, _ = run(build, "import examples", LOOK % "examples", version="v2")
    assert first["parent"] != second["parent"]
    assert second["parent"] == state.PROCESS.executor.package_template.process.pid


def plant(tmp_path, monkeypatch, name: str, source: str) -> None:
    package = tmp_path / "planted" / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(source)
    (package / "data.txt").write_text("read at import")
    (package / "verify.py").write_text("def environment():\n    return None\n")  # the build's
    monkeypatch.syspath_prepend(str(tmp_path / "planted"))
    __import__(name)


READS = """from pathlib import Path
TEXT = (Path(__file__).parent / "data.txt").read_text()


class Report:  # what the build asks of the package, for "computed on"
    def label(self):
        return "planted"


def backend_report():
    return Report()
"""


def test_what_the_package_read_at_import_is_among_each_blocks_reads(build, tmp_path, monkeypatch):
    plant(tmp_path, monkeypatch, "reads_at_import", READS)
    seen, reply = run(build, "import reads_at_import", LOOK % "reads_at_import", "reads_at_import")
    assert seen["parent"] == state.PROCESS.executor.package_template.process.pid
    assert str(tmp_path / "planted" / "reads_at_import" / "data.txt") in reply["read"]


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("print('hello')", "importing it printed 'hello\\n'"),
        ("import warnings\nwarnings.warn('careful')", "importing it warned: careful"),
        ("raise ValueError('broken')", "importing it raised ValueError: broken"),
        (
            "import threading, time\n"
            "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()",
            "importing it started threads (it runs 2)",
        ),
    ],
    ids=["prints", "warns", "raises", "starts a thread"],
)
def test_a_package_whose_import_cannot_be_kept_is_imported_by_each_worker_said_once(
    build, tmp_path, monkeypatch, caplog, source, why
):
    name = "planted_" + why.split()[1]
    plant(tmp_path, monkeypatch, name, "")  # found by the build, then its import planted:
    (tmp_path / "planted" / name / "__init__.py").write_text(source)
    limits = executor.Limits(2**20, 2**32)
    package_dir = str(tmp_path / "planted" / name)
    monkeypatch.setattr(executor, "PACKAGE", name)
    held = state.PROCESS.executor
    with caplog.at_level(logging.INFO, logger="mkdocs.hooks.execution"):
        for _ in range(2):
            worker = held.take(limits, package_dir, None, f"import {name}", "v1")
            try:
                assert worker.process.template is held.template  # not the package template
                if "raise" in source:  # the block that imports it says so
                    with pytest.raises(executor.BlockError, match="ValueError: broken"):
                        worker.run(f"import {name}", "first", False, 60)
            finally:
                worker.close()
    logged = [r.getMessage() for r in caplog.records if "course package" in r.getMessage()]
    assert logged == [f"Workers import the course package themselves: {why}"]
