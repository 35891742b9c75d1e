"""Copy fidelity: every Python block the site displays runs as copied and prints what is shown.

Read from the built HTML, not the Markdown. build_support/execution/sessions.py wraps each
executed block in ``div.exec-block``: inside it, markdown-exec's source block and its output
block. A block is taken as Material's copy button takes it (the ``code`` element's text,
annotations left out, trailing whitespace trimmed), run in a fresh interpreter whose only import
from this repository is the ``examples`` package, and its stdout is compared with the output
block. Notebook pages are checked cell by cell, in order, by tests/test_notebook_*.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testkit.project import ROOT
from testkit.shown_blocks import copy_failures, shown_blocks

# The editable install puts the repository root on sys.path; keep only the package from it.
RUNNER = """\
import os, runpy, sys
root, shim, script = sys.argv[1:4]
sys.path[:] = [shim] + [p for p in sys.path if p and os.path.abspath(p) != root]
sys.argv = [script]
runpy.run_path(script, run_name="__main__")
"""


def run_as_copied(source: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    shim = workdir / "shim"
    shim.mkdir()
    (shim / "examples").symlink_to(ROOT / "examples")
    script = workdir / "copied.py"
    script.write_text(source + "\n")
    return subprocess.run(
        [sys.executable, "-I", "-c", RUNNER, str(ROOT), str(shim), str(script)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_every_displayed_python_block_is_paired_with_its_output(built_site):
    blocks, unpaired = shown_blocks(built_site)
    assert not unpaired
    assert blocks, "no displayed Python block found: the pairing convention is broken"


def test_every_displayed_python_block_runs_as_copied_and_prints_what_is_shown(built_site, tmp_path):
    blocks, _ = shown_blocks(built_site)

    def run_block(block, number):
        workdir = tmp_path / f"block-{number}"
        workdir.mkdir()
        return run_as_copied(block.source, workdir)

    failures = copy_failures(blocks, run_block, "as copied")
    assert not failures, "\n\n".join(failures)
    print(f"copy fidelity: {len(blocks)} displayed Python blocks ran as copied")


def test_the_runner_keeps_the_repository_out_of_reach(tmp_path):
    # Anything but the examples package, e.g. the tests, must not import in a copied block.
    run = run_as_copied("import testkit", tmp_path)
    assert run.returncode != 0
    assert "ModuleNotFoundError" in run.stderr


def test_no_hidden_setup_lines_in_the_docs():
    hiding = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "docs").rglob("*")
        if path.suffix in {".md", ".py"} and "markdown-exec: hide" in path.read_text()
    ]
    assert not hiding, f"hidden lines make a copied block differ from what runs: {hiding}"


def test_pairing_finds_a_mismatch(tmp_path):
    """The comparison is real: a page showing an output its source does not print is caught."""
    page = tmp_path / "page" / "index.html"
    page.parent.mkdir()
    page.write_text(
        '<div class="exec-block" data-exec-id="x" data-source="above" data-result="text">'
        '<div class="highlight"><pre><code>print("shown")</code></pre></div>'
        '<div class="highlight"><pre><code>not what it prints\n</code></pre></div></div>'
        '<div class="language-python highlight"><pre><code>print(1)</code></pre></div>'
    )
    blocks, unpaired = shown_blocks(tmp_path)
    assert [b.output for b in blocks] == ["not what it prints\n"]
    assert len(unpaired) == 1
    workdir = tmp_path / "run"
    workdir.mkdir()
    assert run_as_copied(blocks[0].source, workdir).stdout == "shown\n"
