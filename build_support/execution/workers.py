"""Where every executed block runs: a worker process per session, never the build's interpreter.

A block in the build's own process could reach the build: change JAX's settings for later
pages, patch a function the build calls, change the working folder, start threads and
processes that outlive it, cancel the build's timer, end the process. So each session (a block
with no session is a session of its own) runs in a ``Worker``, a process running
``block_worker.py`` in a process group of its own (``worker_start.py``); the build hands it one
block at a time and waits on its pipes, holding nothing (under ``mkdocs serve`` other pages
keep answering). A
worker never runs two sessions' code: the build kills its whole process group (its threads,
forks and subprocesses with it) when the session ends, and at the end of every build.

The limits are enforced while the block runs, by the build, where the block cannot reach them:

- time: past the block's limit its worker is asked where it is (``WHERE_SIGNAL``; a block that
  ignores it is not waited for), then its process group is killed;
- output: the worker stops itself once ``print`` passes ``MAX_OUTPUT_BYTES`` (it holds the
  output); the build bounds the replies and the stdout/stderr it forwards, so a worker that
  floods them is stopped too, and the build's own memory stays small;
- memory: the resident memory of the worker and its descendants, read every ``POLL_S``; past
  the ``memory_limit_gib`` setting the group is killed.

Any other way a worker ends (``os._exit``, a signal, an abort, a crash) is the block's failure,
named with its status. How a worker starts (forked warm from a template process, or spawned)
is ``worker_start.py``'s; a rebuild that runs no block starts none.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import process_tree
from .block_worker import HEADER_SIZE, WHERE_SIGNAL, frame_length, send
from .limits import OUTPUT_SAID, TIMEOUT_HINT
from .process_tree import resident_bytes

POLL_S = 0.1  # how often a running block's memory is read
WHERE_WAIT_S = 1.0  # past its time limit, how long a block's worker may take to say where it is
START_TIMEOUT_S = 300.0  # a worker that has not imported jax by then is stuck
REPLY_SLACK_BYTES = 1024 * 1024  # a reply's JSON beside the output it carries
_READ_SIZE = 65536


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
    memory_setting: str  # how the memory cap is set, for the failure that names it

    def memory_said(self) -> str:
        return memory_cap_said(self.memory_bytes, self.memory_setting)


def memory_cap_said(memory_bytes: float, setting: str) -> str:
    """How a failure names the memory cap, for a block's worker and a notebook's kernel."""
    return f"its memory cap of {memory_bytes / 2**30:g} GiB ({setting})"


def _signal_name(number: int) -> str:
    with contextlib.suppress(ValueError):
        return signal.Signals(number).name
    return f"signal {number}"


@dataclass
class Worker:
    """One worker process and its pipes, seen from the build (started by ``worker_start.py``)."""

    limits: Limits
    process: Any  # subprocess.Popen, or template_handle.Forked: pid, poll(), wait()
    requests: Any  # the pipe the build writes requests to
    replies: int  # the file descriptor the build reads replies from
    output: int  # the file descriptor the build reads the worker's stdout and stderr from
    buffer: bytearray = field(default_factory=bytearray)
    console: bytearray = field(default_factory=bytearray)  # stdout/stderr not yet forwarded
    console_size: int = 0
    ready: bool = False
    kept: bool = True  # its descendants stay below it (process_tree.keep_descendants)
    block_id: str = ""  # the last block it ran
    ended: str = ""  # why it can run no more blocks
    closed: bool = False
    memory_read_at: float = 0.0  # time.monotonic() when its memory was last read
    started_for: tuple = ()  # what a spare was started for (``worker_start.Workers``)
    closing: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def alive(self) -> bool:
        return not self.ended and self.process.poll() is None

    def wait_ready(self) -> None:
        """Until the worker has imported ahead and said so; ``BlockError`` if it cannot."""
        if not self.ready:
            said = self._wait("ready", time.monotonic() + START_TIMEOUT_S, None)
            self.ready, self.kept = True, said.get("kept", True)

    def run(self, code: str, block_id: str, timed: bool, seconds: float) -> dict[str, Any]:
        """Run one block; its reply (``done``), or ``BlockError`` saying why it failed."""
        if self.ended:
            raise BlockError(f"its session's worker had ended at an earlier block: {self.ended}")
        self.wait_ready()
        self.block_id = block_id
        try:
            send(self.requests, {"code": code, "id": block_id, "timed": timed})
        except OSError:
            self._wait("done", time.monotonic() + 1.0, seconds)  # says how it ended
        reply = self._wait("done", time.monotonic() + seconds, seconds)
        learned = reply.pop("untouched_said", None)  # ``untouched.py``
        if learned is not None and hasattr(self.process, "learn"):
            self.process.learn(learned)
        return reply

    def _wait(self, kind: str, deadline: float, seconds: float | None) -> dict[str, Any]:
        """The next reply, read while the block's limits are checked every ``POLL_S``."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.replies, selectors.EVENT_READ, "replies")
            selector.register(self.output, selectors.EVENT_READ, "console")
            while True:
                reply = self._next_reply()
                if reply is not None:
                    return self._answer(reply, kind)
                left = deadline - time.monotonic()
                if left <= 0:
                    self._time_is_up(selector, seconds)
                if "replies" in self._pump(selector, min(POLL_S, left)):
                    self._fail(self._how_it_ended())
                self._check_memory()

    def _pump(self, selector: selectors.BaseSelector, timeout: float) -> set[str]:
        """Read what the pipes hold within ``timeout``; the names of those that ended."""
        ended = set()
        for key, _ in selector.select(timeout):
            if not self._read(key.data):
                selector.unregister(key.fileobj)
                ended.add(key.data)
        return ended

    def _answer(self, reply: dict[str, Any], kind: str) -> dict[str, Any]:
        said = reply.get("kind")
        if said == kind:
            return reply
        if said == "failed":
            raise BlockError(reply["summary"], reply.get("where", ""), reply.get("trace", ()))
        if said == "output-limit":
            self._fail(
                f"its output passed the limit of {self.limits.max_output_bytes:,} bytes while "
                f"it ran ({OUTPUT_SAID}): stopped"
            )
        self._fail(f"its worker sent a reply the build does not know: {str(said)[:80]!r}")
        raise AssertionError  # unreachable: _fail raises

    def _read(self, which: str) -> bool:
        """Read what is there; False at the end of the pipe."""
        fd = self.replies if which == "replies" else self.output
        try:
            data = os.read(fd, _READ_SIZE)
        except BlockingIOError:
            return True
        if not data:
            return False
        if which == "replies":
            self.buffer += data
        else:
            self._forward(data)
        return True

    def _next_reply(self) -> dict[str, Any] | None:
        if len(self.buffer) < HEADER_SIZE:
            return None
        length = frame_length(bytes(self.buffer[:HEADER_SIZE]))
        if length > self.limits.max_output_bytes * 6 + REPLY_SLACK_BYTES:  # JSON-escaped
            self._fail(f"its worker sent a reply of {length:,} bytes, past any output limit")
        if len(self.buffer) < HEADER_SIZE + length:
            return None
        data = bytes(self.buffer[HEADER_SIZE : HEADER_SIZE + length])
        del self.buffer[: HEADER_SIZE + length]
        return json.loads(data)

    def _forward(self, data: bytes) -> None:
        """What the block wrote to stdout or stderr, on the build's stderr, bounded."""
        self.console_size += len(data)
        if self.console_size > self.limits.max_output_bytes:
            self._fail(
                f"it wrote more than {self.limits.max_output_bytes:,} bytes to stdout and "
                f"stderr ({OUTPUT_SAID}): stopped"
            )
        sys.stderr.write(data.decode("utf-8", "replace"))
        sys.stderr.flush()

    def _check_memory(self) -> None:
        # Every POLL_S, not after every read of its pipes: reading the memory of a process tree
        # scans every process of the machine, which, done for each of a block's writes, took a
        # cold 40-page build's run-ahead threads 1.8 s of the build's interpreter.
        now = time.monotonic()
        if now - self.memory_read_at < POLL_S:
            return
        self.memory_read_at = now
        used = resident_bytes(self.process.pid)  # subreaped: what it detached too
        if used > self.limits.memory_bytes:
            self._fail(f"it used {used / 2**30:.1f} GiB, past {self.limits.memory_said()}")

    def _time_is_up(self, selector: selectors.BaseSelector, seconds: float | None) -> None:
        if seconds is None:
            self._fail(f"its worker did not start within {START_TIMEOUT_S:g} s")
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
            name = _signal_name(-status)
            crash = " (an abort or a crash)" if -status in (signal.SIGABRT, signal.SIGSEGV) else ""
            return f"its worker process was ended by {name}{crash}"
        return (
            f"its worker process ended with status {status} while it ran (a block may not end "
            "its process: os._exit, or a crash)"
        )

    def _fail(self, summary: str) -> None:
        self.close()
        self.ended = summary
        raise BlockError(summary)

    def close(self) -> None:
        """Kill the worker's whole process group (threads, forks, subprocesses) and reap it.
        Once only: a descriptor closed twice may close another worker's, opened since."""
        with self.closing:  # the build's end may close it while a run-ahead thread does
            if self.closed:
                return
            self.closed = True
        process_tree.end_tree(self.process.pid)  # its group, and all it detached (setsid)
        if not self.kept and self.block_id:
            sys.stderr.write(
                f"WARNING -  block {self.block_id!r}: {process_tree.NOT_KEPT}; any it left "
                "running could not be ended\n"
            )
        if hasattr(self.process, "release"):  # forked: its parent, the template, reaps it
            self.process.release()
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
        with contextlib.suppress(OSError):
            self.requests.close()
        for fd in (self.replies, self.output):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.ended = self.ended or "its session's worker was closed"


class LazyWorker:
    """A session's worker, taken (``take``) only when one of its blocks must run: a session
    reused from the cache starts none. ``close`` ends it, if it was taken."""

    def __init__(self, take: Callable[[bool, str], Worker], timed: bool = False) -> None:
        self.take, self.timed, self.worker = take, timed, None

    def __call__(self, code: str = "") -> Worker:
        """The worker, taken for a session whose first block to run is ``code``."""
        if self.worker is None:
            self.worker = self.take(self.timed, code)
        return self.worker

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
