"""A block's life on its page: looked up, reused or run, wrapped, captioned, and recorded as a
``Run``; alone (``format_alone``) or in a markdown-exec session (``format_in_session``).

A block alone is its own cache entry, and runs in a worker of its own. Blocks of a session share
their globals, so a session is one cache entry, keyed on all of its code (``read_sessions`` reads
its fences from the page's Markdown before it renders, snippets expanded as the page will show
them, through ``fences.read`` as the plan does). While the page renders, each block of a session
is given a slot, not its output: reused from the stored run while every block matches it;
otherwise run, the whole session again from its first block when an earlier block's output came
from the stored run. ``fill_sessions`` writes the slots into the page's HTML
(``on_page_content``), so every output, caption and timing on the page comes from one run.

A block's code runs through markdown-exec's exported ``base_format`` with a ``run`` of ours
(``render``): ``base_format`` reads the fence's options (source, result, tabs, width, ...) and
renders the output as markdown-exec does, while ``run`` hands the code to the worker of the
block's session (``Session.worker``, taken only when code must run: a cached block starts none),
a block run ahead of its page (``plan.RanAheadWorker``) replying for it where one did. A block's
failure leaves ``run`` as ``BlockError``: ``base_format`` handles only its own
``ExecutionError``, so nothing is logged and nothing caught; ``guard`` says where it failed.
"""

from __future__ import annotations

import contextlib
import html
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from ..caching.cache import digest
from ..caching.ingredients import expand_snippets
from ..publishing.record import shown_output
from ..publishing.runs import Run
from . import fences, guard, reads
from .executor import DEFAULT_TIMEOUT_S, TIMEOUT_OPTION, BlockError, LazyWorker
from .fences import block_id, is_timed, own_digest
from .plan import NOT_READ, RanAheadWorker, alone_lookup, session_lookup
from .state import Session, Slot

if TYPE_CHECKING:
    from .executor import SessionWorker
    from .state import BuildState

_HEADING = re.compile(r"<h[1-6][\s>]")


# ---------------------------------------------------------------- a block alone


def format_alone(build: BuildState, options: dict[str, Any]) -> tuple[str, Run]:
    """A block outside any session: its output (reused or run) and its run."""
    timed = is_timed(options)
    found = alone_lookup(build, build.page, options)
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


# ---------------------------------------------------------------- a session's blocks


def read_sessions(build: BuildState, page: str, markdown: str) -> None:
    """Find the page's session blocks before it renders (a session is one cache entry), with
    their snippets expanded as the page will show them: an edit to a snippet is in the key."""
    if build.config is not None and "--8<--" in markdown:
        markdown = expand_snippets(markdown, build.config)
    for fence in fences.read(markdown, build.languages):
        if fence.options["session"]:
            session = build.sessions.setdefault((page, fence.options["session"]), Session())
            session.fences.append(fence)


def fill_sessions(build: BuildState, page: str, content: str) -> str:
    """The page's HTML with its sessions' outputs, each session's from one run."""
    for (session_page, _), session in build.sessions.items():
        if session_page == page:
            content = session.fill(content)
            session.close()  # every block of it has run: its worker ends
            for slot, options in zip(session.slots, session.options_seen, strict=False):
                note_shown(slot.run, options, slot.html)
    return content


def format_in_session(build: BuildState, options: dict[str, Any]) -> tuple[str, Run]:
    """A slot for the block's output (``Session.fill`` writes it in), and the block's run."""
    name = options["session"]
    session = build.sessions.setdefault((build.page, name), Session())
    if session.position == 0:  # the whole session is looked up at its first block
        session.name = name
        session.found = session_lookup(build, build.page, name, session.fences)
        session.entry, session.reasons = session.found.entry, session.found.reasons
    position = session.position
    session.position += 1
    session.options_seen.append(options)
    stored = session.stored(position)
    if position >= len(session.fences):  # a block the page's Markdown did not show
        session.failed = True  # never stored: the entry would not match the page
        session.reasons = session.reasons or [NOT_READ]
    if stored is not None and stored["own"] == own_digest(options):
        measured = session.entry.get("measured") if is_timed(options) else None
        slot = session.new_slot(run_record(build, options, False, [], stored, session.timed))
        slot.html = measured_caption(measured, reused=True) + stored["html"]
        slot.ran_on = stored["ran_on"]
    else:
        if session.entry is not None:  # earlier blocks were reused from the stored run
            session.entry = None
            session.reasons = ["its session's blocks did not match the cache entry"]
            _run_from_start(build, session)
        pending = {"html": "", "ran_on": ""}  # completed by _run_in_session
        run = run_record(build, options, True, session.reasons, pending, session.timed)
        slot = session.new_slot(run)
        _run_in_session(build, session, options, slot)
    _keep_if_complete(build, session)
    run, slot.run.ran_on = slot.run, slot.ran_on_token  # the label goes in its slot too
    return slot.output_token, run


def _run_from_start(build: BuildState, session: Session) -> None:
    """Run the session's blocks so far again, in a new worker: after a stored run, or a run
    ahead, that the page's next block does not match."""
    session.run_afresh()
    for earlier, slot in zip(session.options_seen[:-1], session.slots, strict=False):
        slot.run.ran, slot.run.reasons = True, list(session.reasons)
        _run_in_session(build, session, earlier, slot)


def _run_in_session(
    build: BuildState, session: Session, options: dict[str, Any], slot: Slot
) -> None:
    if session.worker is None and not session.blocks:  # its run ahead, if there was one
        session.worker = build.ahead.claim_session(build.page, session.name)
    if isinstance(session.worker, RanAheadWorker) and not session.worker.ran_next(options):
        _run_from_start(build, session)  # the page asked for other than ran ahead
    if session.worker is None:
        session.worker = LazyWorker(build.take_worker, session.timed)
    block, failed = execute(build, options, is_timed(options), session.worker)
    session.reads |= block.pop("reads")
    measured = block.pop("measured")
    block["own"] = own_digest(options)
    session.failed |= failed
    session.blocks.append(block)
    if measured:
        session.measured = measured
    slot.html = measured_caption(measured, reused=False) + block["html"]
    slot.ran_on = block["ran_on"]
    slot.run.seconds = block["seconds"]
    slot.run.output_digest = digest(block["html"])


def _keep_if_complete(build: BuildState, session: Session) -> None:
    if session.entry is not None or not session.complete():
        return
    if all(cacheable(block["html"]) for block in session.blocks):
        stored = {"blocks": session.blocks, "measured": session.measured}
        build.cache.keep(session.found, stored | {"reads": session.reads})


# ---------------------------------------------------------------- running one block


@dataclass
class Execution:
    """One block handed to its session's worker: its time limit, and the reply once it ran."""

    worker: SessionWorker
    timed: bool = False
    seconds: float = DEFAULT_TIMEOUT_S
    reply: dict[str, Any] | None = None


def execute(
    build: BuildState, options: dict[str, Any], timed: bool, worker: SessionWorker
) -> tuple[dict[str, Any], bool]:
    """Run one block in ``worker`` (its session's), under ``guard``: a failure fails the build,
    or under ``mkdocs serve`` shows in the page in place of the output. A timed block waits for
    the notebooks' cells and the blocks running ahead (``plan.py``): a timing gets the machine
    to itself. The block's ``reads`` and ``measured`` (a timing's caption) come with it, from the
    worker's reply."""
    if timed:
        build.notebooks.wait_for_cells()
    execution = Execution(worker, timed)
    extra = dict(options.get("extra") or {})
    extra.pop(TIMEOUT_OPTION, None)  # the build's option, not markdown-exec's
    started = time.perf_counter()
    with (
        build.ahead.paused() if timed else contextlib.nullcontext(),
        guard.failures(build.page, block_id(options), build.serving) as outcome,
    ):
        seconds = fences.timeout(options)
        if isinstance(seconds, str):
            raise BlockError(seconds)
        execution.seconds = seconds
        outcome.html = render(execution, **options | {"extra": extra})
    reply = execution.reply or {}
    seconds = reply.get("ran_ahead_s", time.perf_counter() - started)
    files = reads.digests(reply.get("read", ()), reply.get("written", ()), build.project_root)
    machine = reply.get("machine") if timed and not outcome.failed else None
    return {
        "id": block_id(options),
        "html": outcome.html,
        "seconds": seconds,
        "ran_on": reply.get("ran_on", ""),
        "environment": reply.get("environment"),
        "measured": measured_now(machine) if machine else None,
        "reads": files,
    }, outcome.failed


def render(execution: Execution, /, **options: Any) -> str:
    """The block's HTML: markdown-exec's rendering of what its worker printed."""
    from markdown_exec import base_format  # imported on use: a cached build needs none of it

    # "python" for `py` fences too, as markdown-exec's own python formatter renders them.
    return str(base_format(language="python", run=partial(_run, execution=execution), **options))


def _run(
    code: str,
    *,
    execution: Execution,
    returncode: int | None = None,  # a shell's exit code; Python has none to check
    session: str | None = None,  # its worker is ``execution.worker``
    id: str = "",
    **extra: Any,
) -> str:
    """Run ``code`` in the block's worker; what it printed. A failure raises ``BlockError``."""
    reply = execution.worker.run(code, block_id({"id": id}), execution.timed, execution.seconds)
    execution.reply = reply
    return str(reply["output"])


# ---------------------------------------------------------------- what the page shows of it


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
        environment=block.get("environment"),  # absent from entries stored without it
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
