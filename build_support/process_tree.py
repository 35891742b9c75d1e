"""Nothing the build starts outlives it: the process trees below a block's worker and a
notebook's kernel, kept, measured and ended, the death signal of the build's driver and of the
tests' processes, and signal names; with Linux's ``prctl`` (through ``ctypes``: no root, no
cgroups) and psutil for the walk.

A process group is not enough: a block can leave it (``setsid``, a daemon's double fork). So a
worker is a child subreaper (``keep_descendants``): all a block starts stays below it, counted
for memory (``resident_bytes``) and ended with it (``end_tree``). It also watches its request
pipe (``end_with_build``), not its parent (a forked worker's is the template): once the build's
end closes, it ends its tree and itself, even mid-block. ``die_with_parent`` is for a process
whose parent is its reason to run (the build's driver, a test's supervised process).

A notebook's kernel starts through this file as a script (``python -I process_tree.py
KERNEL_COMMAND...``: a subreaper that execs the kernel, which keeps the setting), so it imports
nothing of the package. Without ``prctl``, a warning says what may be left (``NOT_KEPT``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import threading
from collections.abc import Callable

import psutil

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
NOT_KEPT = "this system has no child subreaper (Linux's prctl): a process a block detaches "
NOT_KEPT += "(setsid, a double fork) is neither counted for memory nor ended with its session"


def _prctl(option: int, value: int) -> bool:
    """``prctl(option, value)``; False where the system has none or refuses."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def keep_descendants() -> bool:
    """Make this process a child subreaper: orphans below it are re-parented to it, not init."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(signum: int = signal.SIGTERM, parent: int | None = None) -> None:
    """Be sent ``signum`` when the parent ends (usable as ``Popen(preexec_fn=...)``; nothing
    without ``prctl``), or at once where ``parent`` (the id of the process that started this
    one, passed down; default: the parent now) has ended already and no signal would come."""
    parent = os.getppid() if parent is None else parent
    _prctl(PR_SET_PDEATHSIG, signum)
    if os.getppid() != parent:
        os.kill(os.getpid(), signum)


def before_threads_join(stop: Callable[[], None]) -> None:
    """``stop`` at the interpreter's exit, before it joins concurrent.futures' threads (a
    private hook of threading's, where concurrent.futures registers its join; atexit runs after
    it): a thread waiting on a worker or a kernel is freed by its end, not by its time limit."""
    threading._register_atexit(stop)  # type: ignore[attr-defined]


def signal_name(number: int) -> str:
    """``SIGTERM`` for 15; ``signal 99`` for a number no signal has."""
    with contextlib.suppress(ValueError):
        return signal.Signals(number).name
    return f"signal {number}"


def descendants(pid: int) -> list[psutil.Process]:
    """Every process below ``pid``, children first (none once ``pid`` is gone)."""
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def end_tree(pid: int, group: bool = True) -> None:
    """SIGKILL every descendant of ``pid`` (stopped first, so none forks past the count), then
    ``pid``'s process group (or ``pid`` alone). Descendants go first: once ``pid`` is gone they
    would belong to init, out of reach."""
    for _ in range(5):  # a fork between the listing and the stop is caught by the next pass
        below = descendants(pid)
        if not below:
            break
        for child in below:
            with contextlib.suppress(psutil.Error):
                child.suspend()
        for child in descendants(pid):
            with contextlib.suppress(psutil.Error):
                child.kill()
    with contextlib.suppress(OSError):
        if group:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)


def end_with_build(requests_fd: int) -> None:
    """Watch the build's end of the request pipe (without reading from it): once it is closed,
    end every descendant, then this process, whatever the block is doing."""

    def watch() -> None:
        poller = select.poll()
        poller.register(requests_fd, select.POLLHUP | select.POLLERR)
        ended = select.POLLHUP | select.POLLERR | select.POLLNVAL
        while not any(event & ended for _, event in poller.poll()):
            pass
        end_tree(os.getpid(), group=False)
        os._exit(1)

    threading.Thread(target=watch, name="end-with-build", daemon=True).start()


def resident_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` and every process it started (0 once it is gone)."""
    total = 0
    with contextlib.suppress(psutil.Error):
        for process in [psutil.Process(pid), *descendants(pid)]:
            with contextlib.suppress(psutil.Error):
                total += process.memory_info().rss
    return total


if __name__ == "__main__":
    # The kernel's launcher (see the module's notes): a subreaper, replaced by the kernel.
    keep_descendants()
    os.execvp(sys.argv[1], sys.argv[1:])
