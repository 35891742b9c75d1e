"""Where every executed block runs, and how a session gets its worker (``LocalExecutor``): each
session (a block alone is a session of its own) in a ``Worker``, a process in a group of its own,
handed one block at a time and waited on holding nothing (under ``mkdocs serve`` other pages keep
answering), its whole group killed when its session ends.

The limits are enforced here, where the block cannot undo them: time (past it the worker is
asked where it is, ``WHERE_SIGNAL``, not waited for, then killed); output (the worker stops
itself once ``print`` passes ``MAX_OUTPUT_BYTES``; the build bounds the replies and the
stdout/stderr it forwards, so its own memory stays small); memory (the worker's and its
descendants', read every ``POLL_S``). Any other end of a worker (``os._exit``, a signal, a
crash) is the block's failure, named with its status.

On Linux a worker is forked from the template process (``template.py``): milliseconds, where an
interpreter importing JAX takes seconds. Elsewhere (forking a process that has loaded NumPy's or
JAX's libraries is unsafe on macOS), with ``COURSE_WORKER_START=spawn``, or where the template
cannot fork safely, each is a fresh interpreter (the log says why once), one spawned ahead of
need, the *spare* (``parallel_blocks.py --run forked --pages 1`` with spawn forced:
29.6 s with it, 46.0 s without, medians of 4 in turns on a loaded 2-core machine, 2026-12).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol

from .. import process_tree
from ..section import PACKAGE
from .template import Forked, Spawned, Template, Unusable, imports_package_first, variables
from .worker import HEADER_SIZE, START_TIMEOUT_S, WHERE_SIGNAL, frame_length, send

# The slowest block takes ~1.2 s (a fresh build of a 2-core machine), the largest output is
# ~20 KB of HTML: both limits leave room for a slower machine and a bigger chart.
DEFAULT_TIMEOUT_S = 60.0  # the same as a notebook cell's default (the setting cell_timeout_s)
MAX_OUTPUT_BYTES = 1024 * 1024
MEMORY_SETTING = "memory_limit_gib in mkdocs.yml's extra.build"
OUTPUT_SETTING = "MAX_OUTPUT_BYTES in build_support/execution/executor.py"
TIMEOUT_HINT = f'default {DEFAULT_TIMEOUT_S:g} s; the fence option timeout="120" sets another'
POLL_S = 0.1  # how often a running block's memory is read
WHERE_WAIT_S = 1.0  # past its time limit, how long a block's worker may take to say where it is
REPLY_SLACK_BYTES = 1024 * 1024  # a reply's JSON beside the output it carries
START_ENV = "COURSE_WORKER_START"  # "spawn": every worker a fresh interpreter (as on macOS)
_READ_SIZE = 65536
log = logging.getLogger("mkdocs.hooks.execution")


class BlockError(Exception):
    """A block failed in its worker: what ``guard.Failure`` says of it."""

    def __init__(self, summary: str, where: str = "", trace: tuple[str, ...] = ()) -> None:
        super().__init__(summary)
        self.summary, self.where, self.trace = summary, where, tuple(trace)


@dataclass(frozen=True)
class Limits:
    """What one worker may use: its block's seconds are per request."""

    max_output_bytes: int
    memory_bytes: int


def memory_cap_said(memory_bytes: float, setting: str) -> str:
    """How a failure names the memory cap, for a block's worker and a notebook's kernel."""
    return f"its memory cap of {memory_bytes / 2**30:g} GiB ({setting})"


class SessionWorker(Protocol):
    """A session's worker as its blocks see it."""

    def run(
        self, code: str, block_id: str, timed: bool, seconds: float, how: dict | None = None
    ) -> dict[str, Any]: ...

    def close(self) -> None: ...


@dataclass
class Worker:
    """One worker process and its pipes, seen from the build."""

    limits: Limits
    process: Spawned | Forked
    requests: BinaryIO  # the pipe the build writes requests to
    replies: int  # the descriptor the build reads replies from
    console: int  # the descriptor the build reads the worker's stdout and stderr from
    buffer: bytearray = field(default_factory=bytearray)
    console_size: int = 0
    subreaper: bool | None = None  # once ready: its descendants stay below it (process_tree)
    block_id: str = ""  # the last block it ran
    ended: str = ""  # why it can run no more blocks
    memory_read_at: float = 0.0  # time.monotonic() when its memory was last read
    # Held for good by its first ``close``: the build's end may close it while a run-ahead
    # thread does, and a descriptor closed twice may close another worker's, opened since.
    closed: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def run(
        self, code: str, block_id: str, timed: bool, seconds: float, how: dict | None = None
    ) -> dict[str, Any]:
        """Run one block (``how``: ``fences.to_run``'s); its reply (``done``), or ``BlockError``
        saying why it failed."""
        if self.ended:
            raise BlockError(f"its session's worker had ended at an earlier block: {self.ended}")
        if self.subreaper is None:  # until it has imported ahead
            self.subreaper = self._wait("ready", START_TIMEOUT_S, None).get("subreaper", True)
        self.block_id = block_id
        try:
            send(self.requests, {"code": code, "id": block_id, "timed": timed} | (how or {}))
        except OSError:  # it closed its end of the requests: ended, or ending
            raise self._failed(self._how_it_ended()) from None
        reply = self._wait("done", seconds, seconds)
        if (answer := reply.pop("untouched_answer", None)) is not None:  # worker.py's docstring
            self.process.keep_untouched_answer(answer)
        return reply

    def _wait(self, kind: str, within: float, seconds: float | None) -> dict[str, Any]:
        """The next reply, read while the block's limits are checked every ``POLL_S``."""
        deadline = time.monotonic() + within
        with selectors.DefaultSelector() as selector:
            selector.register(self.replies, selectors.EVENT_READ)
            selector.register(self.console, selectors.EVENT_READ)
            while (reply := self._next_reply()) is None:
                if self.closed.locked():  # by another thread: the build's end
                    raise BlockError(self.ended or "its session's worker was closed")
                left = deadline - time.monotonic()
                if left <= 0:
                    self._time_is_up(selector, seconds)
                if self.replies in self._pump(selector, min(POLL_S, left)):
                    raise self._failed(self._how_it_ended())
                self._check_memory()
        if reply.get("kind") == kind:
            return reply
        if reply.get("kind") == "failed":
            raise BlockError(reply["summary"], reply.get("where", ""), reply.get("trace", ()))
        if reply.get("kind") == "output-limit":
            raise self._failed(
                f"its output passed the limit of {self.limits.max_output_bytes:,} bytes while "
                f"it ran ({OUTPUT_SETTING}): stopped"
            )
        kind = str(reply.get("kind"))[:80]
        raise self._failed(f"its worker sent a reply the build does not know: {kind!r}")

    def _pump(self, selector: selectors.BaseSelector, timeout: float) -> set[int]:
        """Read what the pipes hold within ``timeout``, the replies kept, what the block wrote to
        stdout or stderr forwarded to the build's stderr, bounded; the pipes that ended."""
        ended = set()
        for key, _ in selector.select(timeout):
            try:
                data = os.read(key.fd, _READ_SIZE)
            except BlockingIOError:
                continue
            if not data:
                selector.unregister(key.fd)
                ended.add(key.fd)
            elif key.fd == self.replies:
                self.buffer += data
            else:
                self.console_size += len(data)
                if self.console_size > self.limits.max_output_bytes:
                    raise self._failed(
                        f"it wrote more than {self.limits.max_output_bytes:,} bytes to stdout and "
                        f"stderr ({OUTPUT_SETTING}): stopped"
                    )
                sys.stderr.write(data.decode("utf-8", "replace"))
                sys.stderr.flush()
        return ended

    def _next_reply(self) -> dict[str, Any] | None:
        if len(self.buffer) < HEADER_SIZE:
            return None
        length = frame_length(bytes(self.buffer[:HEADER_SIZE]))
        if length > self.limits.max_output_bytes * 6 + REPLY_SLACK_BYTES:  # JSON-escaped
            raise self._failed(
                f"its worker sent a reply of {length:,} bytes, past any output limit"
            )
        if len(self.buffer) < HEADER_SIZE + length:
            return None
        data = bytes(self.buffer[HEADER_SIZE : HEADER_SIZE + length])
        del self.buffer[: HEADER_SIZE + length]
        return json.loads(data)

    def _check_memory(self) -> None:
        # Every POLL_S, not after every read of its pipes: reading the memory of a process tree
        # scans every process of the machine, which, done for each of a block's writes, took a
        # cold 40-page build's run-ahead threads 1.8 s of the build's interpreter.
        now = time.monotonic()
        if now - self.memory_read_at < POLL_S:
            return
        self.memory_read_at = now
        used = process_tree.resident_bytes(self.process.pid)  # subreaped: what it detached too
        if used > self.limits.memory_bytes:
            cap = memory_cap_said(self.limits.memory_bytes, MEMORY_SETTING)
            raise self._failed(f"it used {used / 2**30:.1f} GiB, past {cap}")

    def _time_is_up(self, selector: selectors.BaseSelector, seconds: float | None) -> None:
        if seconds is None:
            raise self._failed(f"its worker did not start within {START_TIMEOUT_S:g} s")
        where: dict[str, Any] = {}
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, WHERE_SIGNAL)
            until = time.monotonic() + WHERE_WAIT_S
            while not where and time.monotonic() < until:
                self._pump(selector, POLL_S)
                while (reply := self._next_reply()) is not None and not where:
                    where = reply if reply.get("kind") == "where" else where
        self.close()
        self.ended = f"still running after its time limit of {seconds:g} s ({TIMEOUT_HINT})"
        raise BlockError(self.ended, where.get("where", ""), tuple(where.get("trace", ())))

    def _how_it_ended(self) -> str:
        try:
            status = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "its worker closed its pipe to the build (the block closed it?)"
        if status < 0:
            name = process_tree.signal_name(-status)
            crash = " (an abort or a crash)" if -status in (signal.SIGABRT, signal.SIGSEGV) else ""
            return f"its worker process was ended by {name}{crash}"
        return (
            f"its worker process ended with status {status} while it ran (a block may not end "
            "its process: os._exit, or a crash)"
        )

    def _failed(self, summary: str) -> BlockError:
        self.close()
        self.ended = summary
        return BlockError(summary)

    def close(self) -> None:
        """Kill the worker's whole process group (threads, forks, subprocesses) and reap it."""
        if not self.closed.acquire(blocking=False):
            return
        process_tree.end_tree(self.process.pid)  # its group, and all it detached (setsid)
        if self.subreaper is False and self.block_id:
            sys.stderr.write(
                f"WARNING -  block {self.block_id!r}: {process_tree.NOT_KEPT}; any it left "
                "running could not be ended\n"
            )
        self.process.reap()
        with contextlib.suppress(OSError):
            self.requests.close()
        for fd in (self.replies, self.console):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.ended = self.ended or "its session's worker was closed"


class LazyWorker:
    """A session's worker, taken (``take``, given the session's timing and its first block's
    code) only when one of its blocks must run: a session reused from the cache starts none."""

    def __init__(self, take: Callable[[bool, str], SessionWorker], timed: bool = False) -> None:
        self.take, self.timed = take, timed
        self.worker: SessionWorker | None = None

    def run(
        self, code: str, block_id: str, timed: bool, seconds: float, how: dict | None = None
    ) -> dict[str, Any]:
        if self.worker is None:
            self.worker = self.take(self.timed, code)
        return self.worker.run(code, block_id, timed, seconds, how)

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()


def start(limits: Limits, config: dict, template: Template | None, version: str = "") -> Worker:
    """A worker and its three pipes (requests, replies, console): forked from ``template``
    (for the package at ``version``), or, with None, spawned, importing ahead itself."""
    requests, replies, console = os.pipe(), os.pipe(), os.pipe()
    theirs = (requests[0], replies[1], console[1])
    ours = (requests[1], replies[0], console[0])
    try:
        if template is not None:
            process: Spawned | Forked = template.fork(config, theirs, version)
        else:
            fds = {"requests_fd": requests[0], "replies_fd": replies[1]}
            options = {"stdout": console[1], "stderr": subprocess.STDOUT}
            process = Spawned.start(config | fds, theirs[:2], **options)
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    for fd in ours[1:]:
        os.set_blocking(fd, False)
    return Worker(limits, process, os.fdopen(ours[0], "wb"), ours[1], ours[2])


@dataclass
class LocalExecutor:
    """The process's workers: those running sessions now, and how the next one starts; kept by
    ``state.PROCESS``, so that the template (or the spare) one serve rebuild started serves the
    next."""

    template: Template | None = None
    package_template: Template | None = None  # the template's child holding the package too
    package_checked: tuple[str, str] = ("", "")  # the package version tried, why it is unusable
    spare: tuple[Worker, tuple] | None = None  # spawned ahead, and its limits, cache, variables
    running: list[Worker] = field(default_factory=list)
    retired: list[Template] = field(default_factory=list)  # closed once their workers end
    started_with: tuple = ()  # the package folder and sys.path the template and spare had
    spawned_because: str = ""  # why workers are spawned, once said
    at_exit: bool = False  # its exit hook is registered
    exiting: bool = False  # the interpreter is ending: no worker starts any more
    lock: threading.RLock = field(default_factory=threading.RLock)  # sessions start side by side

    def take(
        self,
        limits: Limits,
        package_dir: str | None,
        cache: str | None,
        first_code: str = "",
        package_version: str = "",
    ) -> Worker:
        """Forked from the template (from the package template, for the package at
        ``package_version``, where ``first_code`` imports the package first), or spawned."""
        config = {"sys_path": sys.path, "cwd": os.getcwd(), "compile_cache": cache}
        config |= {"package": PACKAGE, "package_dir": package_dir}
        config |= {"max_output_bytes": limits.max_output_bytes}
        with self.lock:
            if self.exiting:
                raise BlockError("the build is stopping: no block starts")
            if not self.at_exit:  # an interrupted build too ends its workers, freeing the
                process_tree.before_threads_join(self._exit)  # run-ahead threads waiting on them
                self.at_exit = True
            # A template that imported with another path or variables, or read files since
            # changed, is not what a worker spawned now would be; nor is a spare spawned with
            # other limits or variables.
            wanted, now = (package_dir, tuple(sys.path)), variables()
            template = self.template
            if self.started_with != wanted or (
                template and (template.stale() or not template.fits(now))
            ):
                self._discard()
                self.started_with = wanted
            worker = self._forked(limits, config, first_code, package_version)
            if worker is None:
                spare_for = (limits, cache, tuple(sorted(now.items())))
                spare, spawned_for = self.spare or (None, ())
                if spare and (spawned_for != spare_for or spare.process.poll() is not None):
                    spare.close()
                    spare = None
                worker = spare or start(limits, config, None)
                self.spare = (start(limits, config, None), spare_for)  # the next starts warm
            self.running.append(worker)
            return worker

    def _forked(self, limits: Limits, config: dict, first_code: str, version: str) -> Worker | None:
        """A worker forked from the template; None where workers are spawned (said once)."""
        if self.spawned_because:
            return None
        package, package_dir = config["package"], config["package_dir"]
        try:
            if os.environ.get(START_ENV) == "spawn":
                raise Unusable(f"{START_ENV}=spawn")
            if sys.platform != "linux":
                raise Unusable(
                    f"forking a process that has loaded NumPy and JAX is unsafe on {sys.platform}"
                )
            if self.template is None or self.template.process.poll() is not None:
                self._discard()
                self.template = Template.start(package_dir)
            template = self.template
            if package_dir and imports_package_first(first_code, package, template.modules):
                template = self._with_package(package, package_dir, version) or template
            return start(limits, config, template, version)
        except Unusable as unusable:
            self.spawned_because, self.template = str(unusable), None
            log.info("Workers start as fresh interpreters, not forked warm: %s", unusable)
            return None

    def _with_package(self, package: str, package_dir: str, digest: str) -> Template | None:
        """The package template for the package at version ``digest`` (made again after any
        change to it); None where its import cannot be kept, said once in the log for each."""
        seen, why = self.package_checked
        current = self.package_template
        if current is not None and (seen != digest or current.process.poll() is not None):
            self.retired.append(current)  # its running workers keep it until their session ends
            self.package_template = current = None
        if current is None and not (seen == digest and why):
            assert self.template is not None
            try:
                self.package_template = self.template.package_template(package, package_dir)
                self.package_checked = (digest, "")
            except Unusable as unusable:
                self.package_checked = (digest, str(unusable))
                log.info("Workers import the course package themselves: %s", unusable)
        return self.package_template

    def _exit(self) -> None:
        with self.lock:
            self.exiting = True
        self.close()

    def close_sessions(self) -> None:
        with self.lock:
            running, self.running = self.running, []
            retired, self.retired = self.retired, []
        for worker in running:
            worker.close()
        for template in retired:
            template.close()

    def _discard(self) -> None:
        if self.spare is not None:
            self.spare[0].close()
            self.spare = None
        for template in (self.package_template, self.template):  # the package template's first
            if template is not None:
                self.retired.append(template)
        self.template = self.package_template = None
        self.package_checked = ("", "")

    def close(self) -> None:
        with self.lock:
            self._discard()
        self.close_sessions()
