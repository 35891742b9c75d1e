"""A time limit on one executed block, which runs inside the MkDocs process.

Three layers, because a block can ignore the first two:

1. ``SIGALRM`` (``setitimer``) when the block runs in the main thread, as it does under
   ``mkdocs build`` and under ``mkdocs serve`` (mkdocs 1.6's serve rebuilds in the main thread:
   ``LiveReloadServer._build_loop``; only the HTTP server has threads of its own);
2. otherwise an asynchronous exception raised in the block's thread
   (``PyThreadState_SetAsyncExc``), delivered at its next Python instruction;
3. a watchdog for a block stuck in C code that neither reaches: ``GRACE_S`` after the limit it
   names the block on the terminal and ends the process with status 1, since nothing can
   unwind that thread (the half-written site is never swapped in: see the Makefile).

Ctrl-C while a block runs stays the author's: it stops the build instead of counting as the
block's failure.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

GRACE_S = 5.0  # past its limit, a block stuck in C code ends the process after this long


class BlockTimeout(BaseException):
    """Raised in a block that ran past its time limit. A ``BaseException``: a block's
    ``except Exception`` cannot swallow it."""


@dataclass
class Limit:
    """One block's time limit while it runs; what ended it, if anything did."""

    seconds: float
    label: str  # names the page and the block
    timed_out: bool = False
    interrupted: bool = False  # Ctrl-C by the author, not the block's doing
    active: bool = True
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextlib.contextmanager
def time_limit(limit: Limit) -> Iterator[None]:
    """Raise ``BlockTimeout`` in the running code after ``limit.seconds``; see the module's
    notes. ``limit`` tells afterwards whether it fired or the author pressed Ctrl-C."""
    watchdog = threading.Timer(limit.seconds + GRACE_S, _give_up, args=(limit,))
    watchdog.daemon = True
    watchdog.start()
    in_main = threading.current_thread() is threading.main_thread()
    layer = _alarm if in_main and hasattr(signal, "setitimer") else _async_raise
    try:
        with layer(limit):
            yield
    finally:
        with limit.lock:
            limit.active = False
        watchdog.cancel()


@contextlib.contextmanager
def _alarm(limit: Limit) -> Iterator[None]:
    def on_alarm(signum, frame):
        limit.timed_out = True
        raise BlockTimeout(f"past its time limit of {limit.seconds:g} s")

    def on_interrupt(signum, frame):
        limit.interrupted = True
        raise KeyboardInterrupt

    previous_alarm = signal.signal(signal.SIGALRM, on_alarm)
    previous_interrupt = signal.signal(signal.SIGINT, on_interrupt)
    signal.setitimer(signal.ITIMER_REAL, limit.seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_alarm)
        signal.signal(signal.SIGINT, previous_interrupt)


@contextlib.contextmanager
def _async_raise(limit: Limit) -> Iterator[None]:
    thread_id = threading.get_ident()

    def fire():
        with limit.lock:
            if limit.active:
                limit.timed_out = True
                _set_async_exc(thread_id, BlockTimeout)

    timer = threading.Timer(limit.seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with limit.lock:
            limit.active = False
            if limit.timed_out:
                _set_async_exc(thread_id, None)  # one not yet delivered is dropped


def _set_async_exc(thread_id: int, exception: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None
    )


def _give_up(limit: Limit) -> None:
    with limit.lock:
        if not limit.active:
            return
        terminal_error(
            f"{limit.label} is still running {GRACE_S:g} s past its time limit of "
            f"{limit.seconds:g} s and does not answer the interruption (stuck in C code?): "
            "ending the build with status 1"
        )
        os._exit(1)


def terminal_error(message: str) -> None:
    """An error line in MkDocs' own layout, on stderr, outside its strict-mode warning count
    (used where the build goes on, or cannot report it itself)."""
    first, *rest = message.splitlines()
    continued = "".join(f"{' ' * 11}{line}\n" for line in rest)  # as mkdocs indents them
    sys.stderr.write(f"{'ERROR':<8}-  {first}\n{continued}")
    sys.stderr.flush()
