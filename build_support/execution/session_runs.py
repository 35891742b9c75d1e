"""How a build runs markdown-exec sessions (their data: ``sessions.py``): one cache entry per
session, and every output on the page from one run of it.

Before the page renders, ``read_sessions`` reads its session blocks from the Markdown (the key
holds all their code). While it renders, each block gets a slot (``format_in_session``): reused
from the stored run while every block matches it; otherwise run, the whole session again from
its first block when an earlier block's output came from the stored run. ``fill_sessions``
writes the slots into the page's HTML once the session is known.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..caching.cache import digest
from ..caching.ingredients import expand_snippets
from ..publishing.runs import Run
from .ahead import Replies
from .blocks import cacheable, execute, measured_caption, note_shown, run_record
from .fence_options import is_timed, own_digest
from .sessions import NOT_READ, Session, Slot, fences, session_lookup
from .workers import LazyWorker

if TYPE_CHECKING:
    from .state import BuildState


def read_sessions(build: BuildState, page: str, markdown: str) -> None:
    """Find the page's session blocks before it renders (a session is one cache entry), with
    their snippets expanded as the page will show them: an edit to a snippet is in the key."""
    if build.config is not None and "--8<--" in markdown:
        markdown = expand_snippets(markdown, build.config)
    for name, header, code in fences(markdown):
        session = build.sessions.setdefault((page, name), Session([], []))
        session.headers.append(header)
        session.codes.append(code)


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
    session = build.sessions.setdefault((build.page, name), Session([], []))
    if session.position == 0:
        _open(build, session, name)
    position = session.position
    session.position += 1
    session.options_seen.append(options)
    slot = session.new_slot()
    stored = session.stored(position)
    if position >= len(session.codes):  # a block the page's Markdown did not show
        session.failed = True  # never stored: the entry would not match the page
        session.reasons = session.reasons or [NOT_READ]
    if stored is not None and stored["own"] == own_digest(options):
        measured = session.entry.get("measured") if is_timed(options) else None
        slot.html = measured_caption(measured, reused=True) + stored["html"]
        slot.ran_on = stored["ran_on"]
        slot.run = run_record(build, options, False, [], stored, session.timed)
    else:
        _run_block(build, session, options, slot)
    _keep_if_complete(build, session)
    run, slot.run.ran_on = slot.run, slot.ran_on_token  # the label goes in its slot too
    return slot.output_token, run


def _run_block(
    build: BuildState,
    session: Session,
    options: dict[str, Any],
    slot: Slot,
) -> None:
    """Run this block; first the earlier ones again, when their outputs were reused."""
    if session.entry is not None:  # earlier blocks were reused from the stored run
        session.entry = None
        session.reasons = ["its session's blocks did not match the cache entry"]
        _run_from_start(build, session)
    pending = {"html": "", "ran_on": ""}  # completed by _run_in_session
    slot.run = run_record(build, options, True, session.reasons, pending, session.timed)
    _run_in_session(build, session, options, slot)


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
    timed = is_timed(options)
    if session.worker is None and not session.blocks:  # its run ahead, if there was one
        session.worker = build.ahead.claim_session(build.page, session.name)
    if isinstance(session.worker, Replies) and not session.worker.matches(options):
        _run_from_start(build, session)  # the page asked for other than ran ahead
    if session.worker is None:
        session.worker = LazyWorker(build.take_worker, session.timed)
    block, failed = execute(build, options, timed, session.worker)
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


def _open(build: BuildState, session: Session, name: str) -> None:
    """Look the whole session up, at its first block."""
    session.name = name
    session.found = session_lookup(build, build.page, name, session.headers, session.codes)
    session.entry, session.reasons = session.found.entry, session.found.reasons
