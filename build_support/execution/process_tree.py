"""Nothing a block starts outlives its build: the process tree below a worker, kept and ended.

A worker's process group is not enough: a block can leave it on purpose (``setsid``, a daemon's
double fork), and a worker whose build died was once orphaned, still running past its limit.
Three small calls, Linux's ``prctl`` through ``ctypes`` (no root, no cgroups):

- ``keep_descendants`` (the worker, at its start): the worker becomes a child subreaper
  (``PR_SET_CHILD_SUBREAPER``), so every process a block starts stays below it, however it
  detaches: its memory is counted (``resident_bytes``) and it is ended with the worker.
- ``end_with_build`` (the worker, at its start): a thread that watches the worker's request pipe;
  when the build's end of it closes (the build died, however: the kernel closes its pipes), the
  worker ends every descendant, then itself, even while a block runs. A pipe, not the parent:
  a worker forked by a warm zygote has the zygote as its parent, not the build.
  ``die_with_parent`` (``PR_SET_PDEATHSIG``) is for a process whose parent is the build's
  driver (``build_support/site_swap.py``'s builder).
- ``end_tree`` (the build, when a session ends): every descendant, then the worker's group.

A notebook's kernel is kept the same way (``kernel_limits.py``): it starts through this file run
as a script, ``python -I process_tree.py KERNEL_COMMAND...``, which makes itself a child
subreaper and execs the kernel (the setting survives ``exec``); the build ends the kernel's tree
before the kernel shuts down.

Where ``prctl`` is missing (not Linux) ``keep_descendants`` says so, and the build names the
block whose detached processes it could not end (``workers.py``). Standard library only, but
for psutil in ``resident_bytes`` (imported there): the kernel's launcher runs isolated (``-I``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import threading

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


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """Be sent ``signum`` when the parent ends (for ``Popen(preexec_fn=...)``); nothing where
    the system has no ``prctl``, or where the parent is already gone."""
    parent = os.getppid()
    _prctl(PR_SET_PDEATHSIG, signum)
    if os.getppid() != parent:  # it ended before the call: no signal would come
        os.kill(os.getpid(), signum)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children first, then theirs), from ``/proc``."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as file:
                    stat = file.read()
            except OSError:
                continue
            parent = int(stat[stat.rindex(b")") + 2 :].split()[1])  # the field after state
            children.setdefault(parent, []).append(int(name))
    found, queue = [], [pid]
    while queue:
        below = children.get(queue.pop(0), [])
        found += below
        queue += below
    return found


def end_tree(pid: int, group: bool = True) -> None:
    """SIGKILL every descendant of ``pid`` (stopped first, so none forks past the count), then
    ``pid``'s process group (or ``pid`` alone). Descendants go first: once ``pid`` is gone they
    would belong to init, out of reach."""
    for _ in range(5):  # a fork between the listing and the stop is caught by the next pass
        below = descendants(pid)
        if not below:
            break
        for child in below:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGSTOP)
        for child in descendants(pid):
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
    with contextlib.suppress(OSError):
        if group:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)


def end_with_build(requests_fd: int) -> threading.Thread:
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

    thread = threading.Thread(target=watch, name="end-with-build", daemon=True)
    thread.start()
    return thread


def resident_bytes(pid: int) -> int:
    """Resident memory of process ``pid`` and every process it started (0 once it is gone)."""
    import psutil

    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            total += process.memory_info().rss
    return total


if __name__ == "__main__":
    # The kernel's launcher (see the module's notes): a subreaper, replaced by the kernel.
    keep_descendants()
    os.execvp(sys.argv[1], sys.argv[1:])
