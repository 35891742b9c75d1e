"""The one hook for execution: maps MkDocs' events onto ``build_support`` (runner, cache,
notebooks, record, report). Every ``python exec`` block and every notebook is run or reused by
``build_support.execution.runner``'s ``Build``; nothing else wraps markdown-exec's formatters.

Hook order matters, and mkdocs.yml keeps it: this hook comes right after settings.py
(which validates the settings it reads), so that its ``on_page_content`` writes each session's
outputs into the page before the hooks after it read the page's HTML (line_anchors numbers the
listings' lines, notebook_trim and wheel rewrite it); its ``on_pre_page`` runs after
mkdocs-jupyter's, as every hook runs after the plugins; and ``wheel`` comes after
``notebook_download``, whose ``.ipynb`` it fills in on_post_page.
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
import sys
import tempfile
from pathlib import Path

if importlib.util.find_spec("build_support") is None:  # not installed with the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from build_support import settings
from build_support.execution import guard, runner
from build_support.publishing import record, report

log = logging.getLogger("mkdocs.hooks.execution")

_state: dict[str, object] = {"drift": None, "scratch": None}


def on_startup(command, dirty):
    # Called once per process: `mkdocs serve` shows a failing block in its page and goes on;
    # `mkdocs build` (make build, mike under make publish, CI) fails on it.
    guard.set_serving(command == "serve")


def on_config(config):
    jupyter = config.plugins["mkdocs-jupyter"]
    if jupyter.config["execute"]:
        raise PluginError(
            "set mkdocs-jupyter's execute to false: hooks/execution.py runs notebooks"
        )
    runner.install_formatters()  # once per process: a serve rebuild finds them in place
    _state["drift"] = None
    runner.start_build(Path(config.config_file_path).parent, config)
    return config


def on_pre_build(config):
    runner.drop_examples_modules()  # `mkdocs serve`: the next import reads examples/ afresh


def on_files(files, config):
    files.append(File.generated(config, report.REPORT_PAGE, content=report.REPORT_MARKDOWN))
    jupyter = config.plugins["mkdocs-jupyter"]
    pages = [
        (file.src_uri, Path(file.abs_src_path))
        for file in files.documentation_pages()
        if jupyter.should_include(file)
    ]
    _state["scratch"] = Path(tempfile.mkdtemp(prefix="notebooks-"))
    runner.current_build().start_notebooks(pages, jupyter.config["kernel_name"])
    return files


def on_page_markdown(markdown, page, config, files):
    build = runner.current_build()
    build.page = page.file.src_uri
    build.read_sessions(page.file.src_uri, markdown)
    return markdown


def on_pre_page(page, config, files):
    # After mkdocs-jupyter's on_pre_page (hooks run after plugins), which set page.render:
    # mkdocs-jupyter renders the executed copy instead of the source.
    build = runner.current_build()
    if page.file.src_uri not in build.notebook_runs:
        return page
    render = page.render

    def render_executed(config, files):
        build.render_notebook_page(page, render, config, files, _state["scratch"])

    page.render = render_executed
    return page


def on_page_content(content, page, config, files):
    build = runner.current_build()
    content = build.fill_sessions(page.file.src_uri, content)  # each session from one run
    if page.file.src_uri in build.notebook_runs:
        build.record_notebook(page.file.src_uri, content)
    return content


def on_post_page(output, page, config):
    # Pages are written after every page has been rendered: every run is recorded by now.
    if page.file.src_uri != report.REPORT_PAGE:
        return output
    build = runner.current_build()
    _state["drift"] = _drift(build, Path(config.config_file_path).parent)
    tables = report.table(build.runs, _state["drift"]) + report.key_html(build.environment, config)
    return output.replace(report.TABLE_SLOT, tables)


def _drift(build, project_root: Path):
    version = settings.deployed_version()
    if not version:
        return None  # only `make publish` compares with the previous version
    previous, outputs = record.previous_outputs(project_root, version)
    return record.compare(outputs, build.outputs(), previous)


def on_post_build(config):
    build = runner.current_build()
    _finish(build)
    drift = _state["drift"] or record.Drift(None)
    record.write(
        Path(config.site_dir),
        settings.deployed_version() or "",
        build.outputs(),
        drift,
    )
    for run in build.runs:
        outcome = "ran" if run.ran else "reused"
        why = f" ({'; '.join(run.reasons)})" if run.ran else ""
        log.info(
            "Executed %s %s: %s%s, %.2f s, %s",
            run.page,
            run.block_id,
            outcome,
            why,
            run.seconds,
            run.ran_on,
        )
    if _state["drift"] is not None:
        for line in drift.lines():
            log.info(line)
    log.info("Execution report: %s", report.totals(build.runs))


def on_build_error(error):
    try:
        build = runner.current_build()
    except RuntimeError:
        return  # failed before the build started
    _finish(build)


def _finish(build):
    build.finish_notebooks()
    if _state["scratch"] is not None:
        shutil.rmtree(_state["scratch"], ignore_errors=True)
        _state["scratch"] = None
