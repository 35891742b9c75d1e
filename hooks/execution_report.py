"""Time every executed block and notebook, say where each ran, and publish the totals.

- markdown-exec looks its formatters up in the public ``markdown_exec.formatters`` dict for
  every block, so wrapping the ``python`` entry sees each block run: page, id, seconds.
- Each block's HTML is wrapped in ``<div class="exec-block" data-exec-id=...>``: the wrapper
  pairs a displayed source with its output (the copy-fidelity test reads it). A block that
  shows its source and a text result gets a caption under the output saying where it ran.
- mkdocs-jupyter executes a notebook while its page renders: timed from markdown to content.
- The summary is logged at the end of the build and published as ``build-report.md``.
"""

from __future__ import annotations

import html
import logging
import platform
import re
import time
from dataclasses import dataclass

import markdown_exec
from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.execution_report")

REPORT_PAGE = "build-report.md"
_TABLE_SLOT = '<div class="build-report-slot"></div>'
_REPORT_MARKDOWN = f"""\
---
search:
  exclude: true
---

# Build report

What the last build executed: every `python exec` block and every notebook, with its page,
its `id`, the seconds it took and where it ran. This page is written by
`hooks/execution_report.py` at build time, after every other page. Notebooks run in the
background, beside the pages' blocks (`hooks/background_notebooks.py`): their seconds overlap
the blocks' seconds, so the total below is the work done, not how long the build took.

{_TABLE_SLOT}
"""

# A block that imports jax or the course package (built on JAX) ran on JAX's default backend;
# any other block ran in plain Python / NumPy on the build machine's CPU.
_USES_JAX = re.compile(r"^\s*(?:from|import)\s+(?:jax|examples)\b", re.MULTILINE)
# The label examples.backend_report() prints, as a notebook's output shows it.
_PRINTED_LABEL = re.compile(r"computed on [^<\n]+")


@dataclass(frozen=True)
class Run:
    page: str
    block_id: str
    seconds: float
    ran_on: str
    kind: str  # "block" or "notebook"


_runs: list[Run] = []


@dataclass
class _CurrentPage:
    """The page whose markdown is being rendered: blocks run during that render."""

    src_uri: str = "?"


_current = _CurrentPage()


def where_it_ran(code: str) -> str:
    if _USES_JAX.search(code):
        from examples import backend_report  # imported late: `mkdocs serve` reloads examples

        return backend_report().label()
    import numpy

    return f"computed on cpu · numpy {numpy.__version__} · Python {platform.python_version()}"


def _timed(formatter):
    def run_and_record(**options):
        started = time.perf_counter()
        output = formatter(**options)
        seconds = time.perf_counter() - started
        ran_on = where_it_ran(options["code"])
        block_id = options.get("id") or "(no id)"
        _runs.append(Run(_current.src_uri, block_id, seconds, ran_on, "block"))
        source, result = options.get("source", ""), options.get("result", "")
        caption = f'<p class="run-label">{html.escape(ran_on)}</p>' if source and result else ""
        return (
            f'<div class="exec-block" data-exec-id="{html.escape(block_id)}" '
            f'data-source="{html.escape(source)}" data-result="{html.escape(result)}">\n'
            f"{output}\n{caption}</div>"
        )

    run_and_record.__wrapped__ = formatter
    return run_and_record


def on_config(config):
    # `mkdocs serve` re-imports the hooks on every rebuild: wrap the original, never a wrapper
    # (this hook's or a later hook's, such as hooks/background_notebooks.py's).
    for language in ("python", "py"):
        original = markdown_exec.formatters[language]
        while hasattr(original, "__wrapped__"):
            original = original.__wrapped__
        markdown_exec.formatters[language] = _timed(original)
    return config


def on_pre_build(config):
    _runs.clear()


def on_files(files, config):
    files.append(File.generated(config, REPORT_PAGE, content=_REPORT_MARKDOWN))
    return files


def on_page_markdown(markdown, page, config, files):
    _current.src_uri = page.file.src_uri
    return markdown


def on_page_content(content, page, config, files):
    if getattr(page, "nb_url", None):  # set by mkdocs-jupyter on the pages it renders
        # Executed in the background by hooks/background_notebooks.py, which times the run.
        seconds = page.notebook_execution_s
        printed = _PRINTED_LABEL.search(content)
        ran_on = html.unescape(printed.group(0)) if printed else "kernel did not print its backend"
        _runs.append(Run(page.file.src_uri, page.file.src_uri, seconds, ran_on, "notebook"))
    return content


def totals() -> str:
    blocks = sum(run.kind == "block" for run in _runs)
    notebooks = sum(run.kind == "notebook" for run in _runs)
    seconds = sum(run.seconds for run in _runs)
    notebooks_word = "notebook" if notebooks == 1 else "notebooks"
    return f"{blocks} blocks and {notebooks} {notebooks_word} executed in {seconds:.2f} s"


def _table() -> str:
    rows = "\n".join(
        f"<tr><td>{html.escape(run.page)}</td><td><code>{html.escape(run.block_id)}</code></td>"
        f'<td class="seconds">{run.seconds:.2f}</td><td>{html.escape(run.ran_on)}</td></tr>'
        for run in _runs
    )
    return (
        f'<p class="build-report-totals">{totals()}.</p>\n'
        '<table class="build-report">\n'
        "<thead><tr><th>Page</th><th>Block id</th><th>Seconds</th><th>Ran on</th></tr></thead>\n"
        f"<tbody>\n{rows}\n</tbody>\n</table>"
    )


def on_post_page(output, page, config):
    # Pages are written after every page has been rendered, so all runs are recorded by now.
    if page.file.src_uri == REPORT_PAGE:
        return output.replace(_TABLE_SLOT, _table())
    return output


def on_post_build(config):
    for run in _runs:
        log.info("Executed %s %s: %.2f s, %s", run.page, run.block_id, run.seconds, run.ran_on)
    log.info("Execution report: %s", totals())
