"""mkdocs-jupyter's converter and jupytext are imported on first use, not with the plugin
(build_support/imports_on_use.py, imported while mkdocs.yml is read)."""

from __future__ import annotations

import subprocess
import sys

from testkit.project import ROOT

PROBE = """
import sys
from mkdocs.config.base import load_config
config = load_config("mkdocs.yml")  # reads the tag, then loads the plugins
loaded = lambda: sorted(name for name in ("nbconvert", "jupytext.formats") if name in sys.modules)
print("after the config:", loaded())
import mkdocs_jupyter.convert, jupytext
print("names:", callable(mkdocs_jupyter.convert.nb2html), callable(jupytext.read))
print("after a use:", loaded())
kinds = [type(sys.modules[name]).__name__ for name in ("jupytext", "mkdocs_jupyter.convert")]
print("real:", *kinds)
"""


def test_the_plugin_loads_without_them_and_the_first_use_imports_them():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == [
        "after the config: []",
        "names: True True",
        "after a use: ['jupytext.formats', 'nbconvert']",
        "real: module module",
    ]
