"""The one hook for execution: maps MkDocs' events onto ``build_support`` (sessions, cache,
notebooks, record, report). Every ``python exec`` block and every notebook is run or reused
through the build's one state object (``build_support.execution.state``), which this hook
starts for each build and passes on; nothing else wraps markdown-exec's formatters. The hook
holds no state of its own.

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
import sys
from pathlib import Path

if importlib.util.find_spec("build_support") is None:  # not installed with the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from build_support import progress, serve_staging, settings
from build_support.cluster import shards
from build_support.execution import sessions, state
from build_support.notebooks import formats as notebook_formats
from build_support.notebooks import page as notebook_page
from build_support.publishing import record, report

log = logging.getLogger("mkdocs.hooks.execution")


def on_startup(command, dirty):
    # Called once per process: `mkdocs serve` shows a failing block in its page and goes on;
    # `mkdocs build` (make build, mike under make publish, CI) fails on it.
    state.PROCESS.serving = command == "serve"
    if command == "serve":  # a notebook still running when a rebuild ends asks for another
        state.PROCESS.rebuild = serve_staging.rebuild_soon


def on_config(config):
    jupyter = config.plugins["mkdocs-jupyter"]
    if jupyter.config["execute"]:
        raise PluginError(
            "set mkdocs-jupyter's execute to false: hooks/execution.py runs notebooks"
        )
    build = state.start(Path(config.config_file_path).parent, config)
    sessions.install_formatters(build)  # a serve rebuild puts its own build's in place
    return config


def on_pre_build(config):
    state.drop_examples_modules()  # `mkdocs serve`: the next import reads examples/ afresh


def on_files(files, config):
    files.append(File.generated(config, report.REPORT_PAGE, content=report.REPORT_MARKDOWN))
    jupyter = config.plugins["mkdocs-jupyter"]
    files, kinds = notebook_formats.claim(files, config)  # .ipynb and MyST notebooks as pages
    pages = [
        (uri, Path(files.get_file_from_path(uri).abs_src_path), kind) for uri, kind in kinds.items()
    ]
    notebook_page.start_notebooks(state.current(), pages, jupyter.config["kernel_name"])
    markdown_pages = [
        (file.src_uri, Path(file.abs_src_path))
        for file in files.documentation_pages()
        if file.src_uri.endswith(".md") and file.abs_src_path and file.src_uri not in kinds
    ]
    sessions.plan_ahead(state.current(), markdown_pages)  # side by side, ahead of the pages
    shards.planned(state.current())  # RENDER_ONLY=1, SHARD=k/n: what this build runs
    return files


def on_nav(nav, config, files):
    notebook_formats.check_nav(nav)  # a nav entry the build cannot render fails it, named
    return nav


def on_page_markdown(markdown, page, config, files):
    build = state.current()
    build.page = page.file.src_uri
    kind = "notebook" if build.page in build.notebooks.runs else "page"
    progress.note(f"{kind} {build.page}")
    source = page.file.content_string if page.file.abs_src_path else ""  # for its lines
    sessions.read_sessions(build, page.file.src_uri, markdown, source)
    return markdown


def on_env(env, config, files):
    shards.pages_rendered(state.current())  # SHARD=k/n: the other slices' blocks forgiven
    state.current().failing.fail_if_any()  # `mkdocs build`: every failed block, named
    progress.note("writing the pages")  # every page's blocks ran (hooks/wheel.py: the wheel next)
    return env


def on_pre_page(page, config, files):
    # After mkdocs-jupyter's on_pre_page (hooks run after plugins), which set page.render:
    # mkdocs-jupyter renders the executed copy instead of the source.
    build = state.current()
    if page.file.src_uri not in build.notebooks.runs:
        return page
    render = page.render

    def render_executed(config, files):
        notebook_page.render_notebook_page(build, page, render, config, files)

    page.render = render_executed
    return page


def on_page_content(content, page, config, files):
    build = state.current()
    content = sessions.fill_sessions(build, page.file.src_uri, content)  # one run each
    if page.file.src_uri in build.notebooks.runs:
        notebook_page.record_notebook(build, page.file.src_uri, content)
    return content


def on_post_page(output, page, config):
    # Pages are written after every page has been rendered: every run is recorded by now.
    if page.file.src_uri != report.REPORT_PAGE:
        return output
    build = state.current()
    build.drift = _drift(build, Path(config.config_file_path).parent)
    tables = report.table(build.runs, build.drift) + report.key_html(build.environment, config)
    return output.replace(report.TABLE_SLOT, tables)


def _drift(build, project_root: Path):
    version = settings.deployed_version()
    if not version:
        return None  # only `make publish` compares with the previous version
    previous, outputs = record.previous_outputs(project_root, version)
    return record.compare(outputs, build.outputs(), previous)


def on_post_build(config):
    build = state.current()
    state.end()  # the hooks after this one ask for no worker (they say so)
    drift = build.drift or record.Drift(None)
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
    if build.drift is not None:
        for line in drift.lines():
            log.info(line)
    log.info("Execution report: %s", report.totals(build.runs))
    for job in build.ahead.unclaimed():
        blocks = ", ".join(request.block_id for request in job.requests)
        log.info("Ran ahead for nothing (its page asked otherwise): %s %s", job.page, blocks)
    if build.ahead.ran_ahead:
        log.info(
            "Ran ahead of their pages, %d side by side: %d blocks",
            build.ahead.threads,
            build.ahead.ran_ahead,
        )
    progress.note(progress.FINISHED)  # every block ran: the Makefile may swap the site in


def on_build_error(error):
    state.end()
