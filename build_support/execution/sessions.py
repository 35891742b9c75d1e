"""A block's life on its page, from markdown-exec's formatter (``formatter``) on: looked up (ahead
of its page too: ``plan_ahead``), reused or run, wrapped, captioned, and recorded as a ``Run``.
Every block runs in a session, one cache entry run in one worker, whose globals its blocks share
(a block outside any markdown-exec session is a session of its own, keyed on its code and
options); a page's sessions fill their slots at its end, so each output, caption and timing comes
from one run. A block runs through markdown-exec's ``base_format`` with ``WorkerCall`` as its
``run``: a failure leaves it as ``BlockError``, which ``base_format`` neither logs nor catches.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from markdown_exec import MarkdownConverter, base_format, formatters

from ..caching.cache import Lookup, digest, key_of
from ..publishing.record import shown_output
from ..publishing.runs import Run
from . import fences, guard, headings, reads
from .executor import DEFAULT_TIMEOUT_S, BlockError, LazyWorker
from .fences import TIMEOUT_OPTION, block_id, is_timed, own_digest
from .plan import Job, RanAheadWorker, needs_gpu, request_of
from .state import Session

if TYPE_CHECKING:
    from pathlib import Path

    from .executor import SessionWorker
    from .state import BuildState

NOT_READ = "session not read from the page's Markdown"
PRINTS_HEADINGS = (
    "its session prints a heading holding raw HTML, which a later build cannot put in the table "
    "of contents: it runs every build"
)


# ---------------------------------------------------------------- a session's blocks


def read_sessions(build: BuildState, page: str, markdown: str, source: str = "") -> None:
    """Read the page's sessions before it renders: a session is one cache entry. A fence of a
    kind the site refuses fails the build, named (``fences.REFUSED``). Its blocks are named by
    their lines in ``source``, the page's file (``markdown`` is without its front matter)."""
    if "pyodide" in markdown and (refused := next(fences.refused(markdown), None)):
        from mkdocs.exceptions import PluginError

        language, line = refused
        raise PluginError(f"{page}, line {line}: a {language} fence: {fences.REFUSED[language]}")
    at = source.find(markdown) if markdown else -1
    first_line = 1 + source.count("\n", 0, at) if at > 0 else 1
    on_page = fences.on_page(markdown, build.config, page, first_line)
    build.unnamed[page] = list(on_page)
    for name, found, alone in fences.by_session(on_page):
        if not alone:
            build.sessions.setdefault((page, name), Session(name=name)).fences.extend(found)


def plan_ahead(build: BuildState, pages: list[tuple[str, Path]]) -> None:
    """Before any page renders, look up every session of ``pages`` as its page will, and run
    ahead what the cache cannot serve (``plan.RunAhead``), page by page (a page's jobs run while
    the next pages are read)."""
    for page, path in pages:
        markdown = path.read_text(encoding="utf-8-sig")
        if "exec=" not in markdown:
            continue
        gpu = needs_gpu(page, markdown)  # its front matter: execution: {gpu: true}
        if gpu:
            build.ahead.gpu_pages.add(page)
        for name, session, alone in fences.by_session(fences.on_page(markdown, build.config, page)):
            requests = [found for fence in session if (found := request_of(fence.options))]
            if len(requests) < len(session):
                continue  # a timing runs in its page's turn; a wrong option fails there
            if look_up(build, page, name, session, alone, plan=True).entry is None:
                build.ahead.add(Job(page, requests, gpu=gpu), name)


def look_up(
    build: BuildState,
    page: str,
    name: str,
    session: list[fences.Fence],
    alone: bool,
    plan: bool = False,
) -> Lookup:
    """A session's look-up in the cache (``plan``: ahead of its page; the page's own look-up
    reuses it), keyed on all its code and its fences' headers as the page's Markdown shows them;
    a block ``alone`` (its session named by its own digest) on its code and options."""
    codes = [fence.code for fence in session]
    # A GPU page's output is not a CPU's: keyed apart (only there, so no other key changes).
    device = {"device": "a GPU (execution: {gpu: true})"} if page in build.ahead.gpu_pages else {}
    if alone:
        options = session[0].options
        own = fences.own_ingredients(options)
        ingredients = build.environment.ingredients(options["code"], rendered=True, **own, **device)
        identity = f"{page} {fences.block_id(options)}"
    else:
        all_code, headers = "\n".join(codes), "\n".join(fence.header for fence in session)
        ingredients = build.environment.ingredients(
            all_code, rendered=True, session=digest(headers + "\n" + all_code), **device
        )
        identity = f"{page} session {name}"
    shell = alone and fences.is_shell(session[0].options)  # what it read is unknown
    if shell or not codes:  # never stored
        key, reasons = key_of(ingredients), [fences.SHELL_RUNS if shell else NOT_READ]
        return Lookup(key, ingredients=ingredients, identity=identity, reasons=reasons)

    def objections(payload: dict[str, Any]) -> list[str]:
        blocks = len(payload.get("blocks", []))
        shape = [] if blocks == len(codes) else [f"its entry holds {blocks} blocks"]
        return reads.changed(payload.get("reads"), build.project_root) or shape

    return build.look_up(ingredients, identity, objections, plan=plan)


def fill_sessions(build: BuildState, page: str, content: str) -> str:
    """The page's HTML with its sessions' outputs, each session's from one run. A block's
    output may hold another's slot (a block that prints executed fences): each pass fills the
    slots whose tokens the page holds, until none is left to fill."""
    slots = []
    for (session_page, _), session in build.sessions.items():
        if session_page == page:
            session.close()  # every block of it has run: its worker ends
            slots += zip(session.slots, session.options_seen, strict=False)
    for slot, options in slots:
        slot.run.ran_on = slot.ran_on
        note_shown(slot.run, options, slot.html)
    while found := [slot for slot, _ in slots if slot.output_token in content]:
        for slot in found:
            content = content.replace(slot.output_token, slot.html)
            content = content.replace(slot.ran_on_token, html.escape(slot.ran_on))
        slots = [(slot, options) for slot, options in slots if slot not in found]
    return content


def formatter(build: BuildState, language: str) -> Callable[..., str]:
    """markdown-exec's formatter for a block of ``language`` (``fences.RUNS_AS``) in ``build``:
    a fault of the build's own handling of a block fails that block, named
    (``guard.handling_failed``)."""
    language = "python" if language == "py" else language  # as ``fences.read`` names it

    def format_fence(**options: Any) -> str:
        options["language"] = language
        options[fences.BLOCK_NAME] = _name(build, options)
        try:
            return format_block(build, options)
        except (guard.BlockFailed, KeyboardInterrupt):
            raise  # Ctrl-C by the author stops the build (a block's own is guard's)
        except BaseException as error:  # any fault in the build's own handling
            return guard.handling_failed(build.page, block_id(options), error, build.failing)

    return format_fence


def _name(build: BuildState, options: dict[str, Any]) -> str:
    """The block's name (``fences.named``): that of the first fence of its page's Markdown with
    its code and options not yet formatted; "" for a block the Markdown does not show."""
    unnamed, own = build.unnamed.get(build.page, []), own_digest(options)
    for at, fence in enumerate(unnamed):
        if own_digest(fence.options) == own:
            return str(unnamed.pop(at).options[fences.BLOCK_NAME])
    return ""


def install_formatters(build: BuildState) -> None:
    """``build``'s formatter in markdown-exec's exported registry, for each language it runs (a
    ``mkdocs serve`` rebuild puts its own build's in place)."""
    for language in fences.LANGUAGES:
        formatters[language] = formatter(build, language)


def format_block(build: BuildState, options: dict[str, Any]) -> str:
    """The block's output in the page, wrapped, reused or run in its session, and its run
    recorded; in a page's session a slot for the output (``fill_sessions`` writes it in)."""
    name = options.get("session")
    if name:
        session = build.sessions.setdefault((build.page, name), Session(name=name))
    else:  # a session of its own, named by its own digest (its run ahead's name too)
        session = Session([fences.Fence(options, "")], own_digest(options))
    if not session.options_seen:  # the whole session is looked up at its first block
        session.found = look_up(build, build.page, session.name, session.fences, not name)
        session.entry, session.reasons = session.found.entry, session.found.reasons
    position = len(session.options_seen)
    stored_blocks = session.entry["blocks"] if session.entry is not None else []
    stored = stored_blocks[position] if position < len(stored_blocks) else None
    if position >= len(session.fences):  # a block the page's Markdown did not show
        session.failed = True  # never stored: the entry would not match the page
        session.reasons = session.reasons or [NOT_READ]
    rendered = None  # markdown-exec's HTML for the block, where it ran in this build
    printed: list[Any] = []  # the headings of a reused block
    if stored is not None and stored["own"] == own_digest(options):
        measured = session.entry.get("measured") if is_timed(options) else None
        slot = session.new_slot(run_record(build, session, options, stored, ran=False))
        slot.first_conversion = now = MarkdownConverter.counter
        shown = renumbered(stored["html"], stored, now)
        slot.html = measured_caption(measured, reused=True) + shown
        printed = json.loads(renumbered(json.dumps(stored["headings"]), stored, now))
        MarkdownConverter.counter += stored["conversions"][1]  # the numbers its run took
        slot.ran_on = stored["ran_on"]
    else:
        if session.entry is not None:  # earlier blocks were reused from the stored run
            session.entry = None
            session.reasons = ["its session's blocks did not match the cache entry"]
            _run_from_start(build, session)
        try:
            block, shown = _run_in_session(build, session, options)
        except BaseException:
            session.failed = True  # no slot: its failure is shown in its place, never stored
            raise
        finally:
            if not name:
                session.close()
        slot = session.new_slot(run_record(build, session, options, block, ran=True))
        slot.html, slot.ran_on, rendered = shown, block["ran_on"], block["html"]
        slot.first_conversion = block["conversions"][0]
    session.options_seen.append(options)  # with its slot: ``fill_sessions`` pairs them
    ran = len(session.blocks) == len(session.fences) == len(session.slots)  # all, in this build
    fresh = session.entry is None and not session.failed and ran and not fences.is_shell(options)
    if fresh and all(block["headings"] is not None for block in session.blocks):
        entry = {"blocks": session.blocks, "measured": session.measured, "reads": session.reads}
        build.cache.keep(session.found, entry)
    elif fresh:  # the reason it ran, said truly: it never had an entry to miss
        for each in session.slots:
            each.run.reasons = [PRINTS_HEADINGS]
    if name:
        output, slot.run.ran_on = slot.output_token, slot.ran_on_token  # filled in together
    else:
        output, slot.run.ran_on = slot.html, slot.ran_on
        note_shown(slot.run, options, output)
    build.runs.append(slot.run)
    returned = wrapped(options, output, slot.run)
    if rendered is not None:
        headings.follow(options.get("md"), rendered, returned)
    else:
        headings.file(options.get("md"), returned, printed)
    return returned


def _run_from_start(build: BuildState, session: Session) -> None:
    """Run the session's blocks so far again, in a new worker: after a stored run, or a run
    ahead, that the page's next block does not match."""
    session.close()  # a new worker, with no block run yet
    session.blocks, session.measured, session.reads = [], None, {}  # the new run's alone
    counter = MarkdownConverter.counter
    for earlier, slot in zip(session.options_seen, session.slots, strict=True):
        MarkdownConverter.counter = slot.first_conversion  # its ids as its first rendering's
        block, slot.html = _run_in_session(build, session, earlier)
        slot.ran_on = block["ran_on"]
        # The record already in ``build.runs`` becomes the new run's.
        vars(slot.run).update(vars(run_record(build, session, earlier, block, ran=True)))
    MarkdownConverter.counter = counter


def _run_in_session(
    build: BuildState, session: Session, options: dict[str, Any]
) -> tuple[dict[str, Any], str]:
    """Run the block in its session's worker: the block as its entry stores it, and its HTML in
    the page (a timing's caption above its output)."""
    if session.worker is None and not session.blocks:  # its run ahead, if there was one
        session.worker = build.ahead.claim(build.page, session.name)
    if isinstance(session.worker, RanAheadWorker) and not session.worker.ran_next(options):
        _run_from_start(build, session)  # the page asked for other than ran ahead
    if session.worker is None:
        session.worker = LazyWorker(build.take_worker, session.timed)
    block, failed = execute(build, options, is_timed(options), session.worker)
    block["headings"] = headings.kept(options.get("md"), block["html"])
    session.reads |= block.pop("reads")
    measured = block.pop("measured")
    block["own"] = own_digest(options)
    session.failed |= failed
    session.blocks.append(block)
    session.measured = measured or session.measured
    return block, measured_caption(measured, reused=False) + block["html"]


# ---------------------------------------------------------------- running one block


@dataclass
class WorkerCall:
    """markdown-exec's ``run`` for one block: hands it to its session's worker and keeps the
    worker's reply (a failure raises ``BlockError``)."""

    worker: SessionWorker
    name: str  # fences.block_id's
    timed: bool = False
    seconds: float = DEFAULT_TIMEOUT_S
    reply: dict[str, Any] | None = None
    how: dict[str, Any] | None = None  # fences.to_run's

    def __call__(self, code: str, *, id: str = "", **_: Any) -> str:
        # markdown-exec passes ``returncode`` and ``session`` too: ``how`` and the worker's own.
        self.reply = self.worker.run(code, self.name, self.timed, self.seconds, self.how)
        return str(self.reply["output"])


def execute(
    build: BuildState, options: dict[str, Any], timed: bool, worker: SessionWorker
) -> tuple[dict[str, Any], bool]:
    """Run one block in ``worker`` (its session's), under ``guard``; a timed block once the
    notebooks' cells and the blocks running ahead are done: a timing gets the machine to itself.
    With it, from the worker's reply: the files it read and a timing's ``measured``."""
    if timed:
        build.notebooks.wait_for_cells()
    call = WorkerCall(worker, block_id(options), timed)
    extra = dict(options.get("extra") or {})
    extra.pop(TIMEOUT_OPTION, None)  # the build's option, not markdown-exec's
    started = time.perf_counter()
    with (
        build.ahead.paused() if timed else contextlib.nullcontext(),
        guard.failures(build.page, block_id(options), build.failing) as outcome,
    ):
        seconds = fences.timeout(options)
        if isinstance(seconds, str):
            raise BlockError(seconds)
        if wrong := fences.unknown_options(options):
            raise BlockError(wrong)
        call.seconds, call.how = seconds, fences.to_run(options)[1]
        first = MarkdownConverter.counter
        try:
            outcome.html = render(call, **options | {"extra": extra})
        except BlockError as error:
            raise _per_page(build, options, error) from None
    reply = call.reply or {}
    seconds = reply.get("ran_ahead_s", time.perf_counter() - started)
    files = reads.digests(reply.get("read", ()), reply.get("written", ()), build.project_root)
    machine = reply.get("machine") if timed and not outcome.failed else None
    at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")  # when a timing was measured
    return {
        "id": options.get("id") or "",  # its own, as in its key (never its name: its line)
        "html": outcome.html,
        "seconds": seconds,
        "ran_on": reply.get("ran_on", ""),
        "environment": reply.get("environment"),
        "measured": {"at": at, "label": machine} if machine else None,
        "reads": files,
        "conversions": [first, MarkdownConverter.counter - first],  # ``renumbered``
    }, outcome.failed


def _per_page(build: BuildState, options: dict[str, Any], error: BlockError) -> BlockError:
    """A session block's ``NameError`` where an earlier page has a session of the same name:
    said so, since markdown-exec shares a session across pages and this build does not."""
    name = options.get("session")
    earlier = sorted({page for page, session in build.sessions if session == name} - {build.page})
    if not (name and earlier and error.summary.startswith("NameError")):
        return error
    said = (
        f"{error.summary} (session {name!r} is also on {', '.join(earlier)}: here a session is "
        f"its page's own, so a name from another page's is not defined on {build.page}; "
        "define it on this page, or import it from the course package)"
    )
    return BlockError(said, error.where, error.trace)


def renumbered(text: str, stored: dict[str, Any], now: int) -> str:
    """A stored block's HTML (or headings) as a run in this build would render it, its first
    conversion numbered ``now + 1``: markdown-exec numbers its conversions in the build
    (``MarkdownConverter.counter``) and prefixes the ids of an output without ``id`` or
    ``idprefix`` with the number (``exec-3--``), so a cached build's ids are a fresh build's."""
    first, used = stored["conversions"]
    if not used or now == first:
        return text

    def moved(number: re.Match[str]) -> str:
        taken = int(number[1])
        return f"exec-{taken - first + now}--" if first < taken <= first + used else number[0]

    return re.sub(r"\bexec-(\d+)--", moved, text)


def render(call: WorkerCall, /, **options: Any) -> str:
    """The block's HTML: markdown-exec's rendering of what its worker printed, as its formatter
    for the block's language renders it (its ``workdir`` and ``width`` are the worker's: never
    this process's, where base_format would apply them)."""
    language = options.pop("language", "python")
    left_out = ("workdir", "width", fences.BLOCK_NAME)
    options = {name: value for name, value in options.items() if name not in left_out}
    if language in fences.PROMPT_LINES:
        options["transform_source"] = fences.PROMPT_LINES[language]
    return str(base_format(language=language, run=call, **options))


# ---------------------------------------------------------------- what the page shows of it


def run_record(
    build: BuildState, session: Session, options: dict[str, Any], block: dict[str, Any], ran: bool
) -> Run:
    """The block's run, from its block as run or stored (its seconds: none when reused)."""
    return Run(
        page=build.page,
        block_id=block_id(options),
        ran=ran,
        reasons=list(session.reasons) if ran else [],
        seconds=block["seconds"] if ran else 0.0,
        ran_on=block["ran_on"],
        kind="block",
        output_digest=digest(block["html"]),
        # A timing, or an output marked varying: never compared by ``verify`` as a fixed text.
        expected_to_change=session.timed or fences.is_varying(options),
        environment=block.get("environment"),
    )


def note_shown(run: Run, options: dict[str, Any], output: str) -> None:
    """What ``python -m examples verify`` compares: a block shown with a text output."""
    run.shown = shown_output(options, output)
    if run.shown is not None:
        run.source = options["code"]


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
