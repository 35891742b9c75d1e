"""One ``python exec`` block: reused from the cache or run (``python_exec``, under ``guard``'s
limits), wrapped, captioned, and recorded as a ``Run``.

A block in a markdown-exec session goes through ``session_runs.py`` instead, which runs its
blocks with ``execute`` below.
"""

from __future__ import annotations

import html
import re
import sys
import time
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from ..caching.cache import digest
from ..publishing.record import shown_output
from ..publishing.runs import Run
from ..section import PACKAGE
from . import guard, python_exec, reads
from .fence_options import block_id, is_timed, own_ingredients

if TYPE_CHECKING:
    from .state import BuildState

_HEADING = re.compile(r"<h[1-6][\s>]")
_IMPORTS_JAX = re.compile(rf"^\s*(?:from|import)\s+(?:jax|{PACKAGE})\b", re.MULTILINE)


def format_alone(build: BuildState, options: dict[str, Any]) -> tuple[str, Run]:
    """A block outside any session: its output (reused or run) and its run."""
    timed, identity = is_timed(options), f"{build.page} {block_id(options)}"
    ingredients = build.environment.ingredients(
        options["code"], rendered=True, **own_ingredients(options)
    )
    found = build.cache.look_up(ingredients, identity, build.stale_reads)
    if found.entry is not None:
        (stored,) = found.entry["blocks"]
        caption = measured_caption(found.entry.get("measured"), reused=True)
        return caption + stored["html"], run_record(build, options, False, [], stored, timed)
    with reads.recorded() as opened:
        block, failed = execute(build, options, timed)
    measured = measured_now() if timed and not failed else None
    if not failed and cacheable(block["html"]):
        files = reads.digests(opened, build.project_root)
        build.cache.keep(found, {"blocks": [block], "measured": measured, "reads": files})
    run = run_record(build, options, True, found.reasons, block, timed)
    run.seconds = block["seconds"]
    return measured_caption(measured, reused=False) + block["html"], run


def execute(
    build: BuildState,
    options: dict[str, Any],
    timed: bool,
    namespace: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], bool]:
    """Run one block in ``namespace`` (its session's globals; fresh ones by default), under
    guard's limits: a failure fails the build, or under ``mkdocs serve`` shows in the page in
    place of the output. A timed block waits for the notebooks' cells first: a timing gets the
    machine to itself."""
    if timed:
        build.notebooks.wait_for_cells()
    namespace = {} if namespace is None else namespace
    formatter = partial(python_exec.format_python, namespace)
    started = time.perf_counter()
    output, failed = guard.run(formatter, options, build.page, build.serving)
    seconds = time.perf_counter() - started
    return {
        "id": block_id(options),
        "html": output,
        "seconds": seconds,
        "ran_on": where_it_ran(options["code"]),
        "environment": _environment(),
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


def measured_now() -> dict[str, str]:
    """When and on what machine a timing was measured, for its caption."""
    from examples import machine_label  # already imported by the timed block itself

    return {"at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "label": machine_label()}


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


def where_it_ran(code: str) -> str:
    """A block that imports jax or the course package ran on JAX's default backend; any other
    block ran in plain Python / NumPy on the build machine's CPU."""
    if _IMPORTS_JAX.search(code):
        from examples import backend_report  # imported late: `mkdocs serve` reloads examples

        return backend_report().label()
    import platform

    import numpy

    return f"computed on cpu · numpy {numpy.__version__} · Python {platform.python_version()}"


def _environment() -> dict[str, str] | None:
    """The environment ``python -m examples verify`` compares with a reader's, once a block has
    imported jax (importing it here, for a block that does not, would cost a second)."""
    if "jax" not in sys.modules:
        return None
    from examples.verify import environment

    return environment()
