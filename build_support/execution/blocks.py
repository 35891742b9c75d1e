"""One ``python exec`` block: reused from the cache or run (``python_exec``, in a worker of its
own, under ``guard``), wrapped, captioned, and recorded as a ``Run``.

A block in a markdown-exec session goes through ``session_runs.py`` instead, which runs its
blocks with ``execute`` below.
"""

from __future__ import annotations

import contextlib
import html
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..caching.cache import digest
from ..publishing.record import shown_output
from ..publishing.runs import Run
from . import guard, python_exec, reads
from .fence_options import block_id, is_timed, own_ingredients
from .workers import LazyWorker

if TYPE_CHECKING:
    from .state import BuildState
    from .workers import Worker

_HEADING = re.compile(r"<h[1-6][\s>]")


def format_alone(build: BuildState, options: dict[str, Any]) -> tuple[str, Run]:
    """A block outside any session: its output (reused or run) and its run."""
    timed, identity = is_timed(options), f"{build.page} {block_id(options)}"
    ingredients = build.environment.ingredients(
        options["code"], rendered=True, **own_ingredients(options)
    )
    found = build.look_up(ingredients, identity, build.stale_reads)
    if found.entry is not None:
        (stored,) = found.entry["blocks"]
        caption = measured_caption(found.entry.get("measured"), reused=True)
        return caption + stored["html"], run_record(build, options, False, [], stored, timed)
    # A session of its own: its worker ends with it (or ended with its run ahead).
    worker = build.ahead.claim_alone(build.page, options) or LazyWorker(build.take_worker, timed)
    try:
        block, failed = execute(build, options, timed, worker)
    finally:
        worker.close()
    measured = block.pop("measured")
    files = block.pop("reads")
    if not failed and cacheable(block["html"]):
        build.cache.keep(found, {"blocks": [block], "measured": measured, "reads": files})
    run = run_record(build, options, True, found.reasons, block, timed)
    run.seconds = block["seconds"]
    return measured_caption(measured, reused=False) + block["html"], run


def execute(
    build: BuildState,
    options: dict[str, Any],
    timed: bool,
    worker: Callable[[], Worker],
) -> tuple[dict[str, Any], bool]:
    """Run one block in ``worker`` (its session's), under guard: a failure fails the build, or
    under ``mkdocs serve`` shows in the page in place of the output. A timed block waits for the
    notebooks' cells and the blocks running ahead (``ahead.py``): a timing gets the machine to
    itself. The block's ``reads`` and
    ``measured`` (a timing's caption) come with it, from the worker's reply."""
    if timed:
        build.notebooks.wait_for_cells()
    execution = python_exec.Execution(worker, timed)
    started = time.perf_counter()
    with build.ahead.quiet() if timed else contextlib.nullcontext():
        output, failed = guard.run(execution, options, build.page, build.serving)
    reply = execution.reply or {}
    seconds = reply.get("ran_ahead_s", time.perf_counter() - started)
    files = reads.digests(reply.get("read", ()), reply.get("written", ()), build.project_root)
    machine = reply.get("machine") if timed and not failed else None
    return {
        "id": block_id(options),
        "html": output,
        "seconds": seconds,
        "ran_on": reply.get("ran_on", ""),
        "environment": reply.get("environment"),
        "measured": measured_now(machine) if machine else None,
        "reads": files,
    }, failed


def run_record(
    build: BuildState,
    options: dict[str, Any],
    ran: bool,
    reasons: list[str],
    block: dict[str, Any],
    timed: bool,
) -> Run:
    """The block's run (its seconds 0 until set: none when reused)."""
    return Run(
        page=build.page,
        block_id=block_id(options),
        ran=ran,
        reasons=list(reasons),
        seconds=0.0,
        ran_on=block["ran_on"],
        kind="block",
        output_digest=digest(block["html"]),
        expected_to_change=timed,
        environment=block.get("environment"),  # absent from entries cached before it was
    )


def note_shown(run: Run, options: dict[str, Any], output: str) -> None:
    """What ``python -m examples verify`` compares: a block shown with a text output."""
    run.shown = shown_output(options, output)
    if run.shown is not None:
        run.source = options["code"]


def cacheable(output: str) -> bool:
    # A heading in an output joins the page's table of contents only when markdown-exec
    # renders it: such a block always runs.
    return _HEADING.search(output) is None


def measured_now(machine: str) -> dict[str, str]:
    """When and on what machine (its worker's ``machine_label``) a timing was measured."""
    return {"at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "label": machine}


def measured_caption(measured: dict[str, str] | None, reused: bool) -> str:
    if not measured:
        return ""
    label = html.escape(measured["label"])
    if reused:
        text = (
            f"Measured on {html.escape(measured['at'])} on the machine that built it then: "
            f"{label}. Reused by this build: nothing it depends on has changed since."
        )
    else:
        text = f"Measured on this build: {label}"
    return f'<p class="measured-label"><em>{text}</em></p>\n'


def wrapped(options: dict[str, Any], output: str, run: Run) -> str:
    # The wrapper pairs a displayed source with its output (tests/test_copy_fidelity.py reads
    # it); a block that shows its source and a text result gets a caption: where it ran.
    source, result = options.get("source", ""), options.get("result", "")
    caption = f'<p class="run-label">{html.escape(run.ran_on)}</p>' if source and result else ""
    return (
        f'<div class="exec-block" data-exec-id="{html.escape(block_id(options))}" '
        f'data-source="{html.escape(source)}" data-result="{html.escape(result)}">\n'
        f"{output}\n{caption}</div>"
    )
