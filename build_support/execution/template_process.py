"""The template process (a zygote): every session's worker is forked from it, warm.

Started once by the build (``worker_start.Template``) as ``python -c BOOT CONFIG``, in a
process group of its own, it imports ahead what every worker would import (``PREIMPORT``:
``numpy``, ``jax``, ``matplotlib.pyplot``; never ``examples``, whose reach is in each block's
key) and records what that import read, initialises no JAX backend, then waits on one Unix
socket to the build. For each request it forks a worker: the child leaves for a session and
process group of its own, takes the three pipes the build sent with the request (requests,
replies, stdout/stderr) and serves blocks (``block_worker.serve``); the template says the
child's pid. It never runs a block itself, so nothing a block does reaches it or a later worker.

Why a fork from it is safe: it is single-threaded when it forks (checked before every fork in
``/proc/self/task``; OpenBLAS's thread pool, the one thread NumPy starts on import, is kept at
one thread here by ``OPENBLAS_NUM_THREADS=1`` and given back its usual size in each child), it
holds no lock another thread could hold, no backend (no device, no XLA thread pool), no file a
block may write. Python's ``random`` re-seeds itself in a child; NumPy's global generator is
re-seeded here, as a fresh process seeds it.

A request may also ask for a *package template* (``package_template.py``): a child that
imports the course package as a worker's first block would (``import_package``), and then
serves fork requests of its own on a socket the build sent, exactly as this process does. It
says why, and ends, where that import cannot be kept (it raised, printed, warned, or started a
thread or a process). This process itself never imports the package: it lives as long as the
build's variables and ``sys.path``, and an edited module must not reach a worker through it.

It says when a child ends (its status, as ``subprocess`` says one: a code, or ``-signal``) but
reaps it only when the build releases it, after killing its process group: until then the
child's pid cannot be reused, so the build's ``killpg`` reaches only the worker's own group.
When the build goes (its end of the socket closes), it kills every worker's group and ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import io
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import time
import warnings
from typing import Any

from . import block_worker, process_tree, reads

BOOT = (
    "import json, sys; config = json.loads(sys.argv[1]); sys.path[:] = config['sys_path']; "
    "from build_support.execution.template_process import main; main(config)"
)
BLAS_THREADS = "OPENBLAS_NUM_THREADS"
_HEADER = ">I"
_MAX_FDS = 3
_POLL_S = 0.05  # how often ended children are looked for


def send(sock: socket.socket, message: dict[str, Any], fds: tuple[int, ...] = ()) -> None:
    """One framed JSON message on the socket, with file descriptors beside it (``SCM_RIGHTS``)."""
    data = json.dumps(message).encode()
    frame = struct.pack(_HEADER, len(data)) + data
    sent = socket.send_fds(sock, [frame], list(fds)) if fds else sock.send(frame)
    if sent != len(frame):
        sock.sendall(frame[sent:])


def receive(sock: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """The next message and the descriptors that came with it; None at the end of the socket."""
    size = struct.calcsize(_HEADER)
    head, fds, _, _ = socket.recv_fds(sock, size, _MAX_FDS)
    while head and len(head) < size:
        head += sock.recv(size - len(head))
    if len(head) < size:
        return None
    (length,) = struct.unpack(_HEADER, head)
    data = b""
    while len(data) < length:
        part = sock.recv(length - len(data))
        if not part:
            return None
        data += part
    return json.loads(data), fds


def threads() -> int:
    """How many threads this process runs (Linux)."""
    return len(os.listdir("/proc/self/task"))


def blas_threads_wanted(original: dict[str, str | None]) -> int | None:
    """The OpenBLAS thread count a fresh worker gets, by OpenBLAS's own rule: the first of
    these variables set above 0, else None (OpenBLAS's default: one a processor)."""
    for name in (BLAS_THREADS, "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        with contextlib.suppress(TypeError, ValueError):
            if int(original.get(name) or "") > 0:
                return int(original[name])
    return None


def _openblas() -> Any:
    """NumPy's OpenBLAS (its ``set_num_threads`` and ``get_num_procs``), if it is loaded."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        paths = {line.split()[-1] for line in maps if "openblas" in line and "/" in line}
    for path in sorted(paths):
        library = ctypes.CDLL(path)
        for prefix, suffix in (
            ("scipy_openblas_", "64_"),
            ("scipy_openblas_", ""),
            ("openblas_", ""),
        ):
            setter = getattr(library, f"{prefix}set_num_threads{suffix}", None)
            procs = getattr(library, f"{prefix}get_num_procs{suffix}", None)
            if setter is not None and procs is not None:
                return setter, procs
    return None


def _become_worker(
    request: dict[str, Any], fds: list[int], sock: socket.socket, read_ahead: set[str]
) -> None:
    """In the child: a worker of its own group, with the build's pipes; never returns."""
    try:
        os.setsid()  # a session and process group of its own: the build kills it whole
        requests_fd, replies_fd, console_fd = fds
        sock.close()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(console_fd, 1)
        os.dup2(console_fd, 2)
        for fd in (null, console_fd):
            os.close(fd)
        config = request["config"]
        original = config["blas_environment"]
        for name, value in original.items():  # the environment a spawned worker would have
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        blas = _openblas()
        if blas is not None:
            setter, procs = blas
            setter(blas_threads_wanted(original) or procs())
        random.seed()
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        os.chdir(config["cwd"])
        sys.path[:] = config["sys_path"]
        block_worker.serve(config, requests_fd, replies_fd, read_ahead)
    finally:
        os._exit(70)  # serve ends the process itself; anything else is a failure to start


def _become_package_template(
    request: dict[str, Any], fds: list[int], parent: socket.socket, read_ahead: set[str]
) -> None:
    """In the child: the package template (module docstring), serving forks on the socket the
    build sent; never returns. If the package cannot be imported as a block's first line would
    (it raised, printed, warned, started a thread or a process) it says why and ends."""
    try:
        os.setsid()  # a group of its own: a worker's group killed never reaches it
        parent.close()
        sock = socket.socket(fileno=fds[0])
        os.chdir(request["cwd"])  # where, and with which path, a worker imports it
        sys.path[:] = request["sys_path"]
        why, read = import_package(request["package"], request["package_dir"])
        said = {"pid": os.getpid(), "threads": threads(), "read_ahead": sorted(read_ahead | read)}
        send(sock, {"kind": "ready", "unusable": why} | said)
        if not why:
            _fork_on_request(sock, read_ahead | read)
    finally:
        os._exit(0)


def import_package(package: str, package_dir: str | None) -> tuple[str, set[str]]:
    """Import the course package as a worker's first block would; why it cannot be kept for
    the workers forked from here ("" if it can), and the files it read (``reads``)."""
    said = io.StringIO()
    with (
        reads.recorded(package_dir) as opened,
        warnings.catch_warnings(record=True) as warned,  # the filters a worker has
        contextlib.redirect_stdout(said),
        contextlib.redirect_stderr(said),
    ):
        try:
            importlib.import_module(package)
        except BaseException as error:  # SystemExit too: the block that imports it will say
            return f"importing it raised {block_worker.summary(error)}", set()
    if warned:
        return f"importing it warned: {str(warned[0].message)[:200]}", set()
    if said.getvalue():
        return f"importing it printed {said.getvalue()[:200]!r}", set()
    if threads() != 1:
        return f"importing it started threads (it runs {threads()})", set()
    if process_tree.descendants(os.getpid()):
        return "importing it started a process", set()
    return "", opened.inputs()


def _ended(children: dict[int, bool], sock: socket.socket) -> None:
    """Say the status of every child that ended, once; reaped only on ``release``."""
    flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
    for pid, said in list(children.items()):
        if said:
            continue
        try:
            found = os.waitid(os.P_PID, pid, flags)
        except ChildProcessError:
            found = None
        if found is None:
            continue
        killed = found.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
        status = -found.si_status if killed else found.si_status
        children[pid] = True
        send(sock, {"kind": "ended", "pid": pid, "status": status})


def _until_its_own_group(pid: int) -> None:
    """Wait (microseconds) until the child leads a group of its own: the build kills the group
    by its pid, and a group not made yet would not be found."""
    with contextlib.suppress(ProcessLookupError):
        while os.getpgid(pid) != pid:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return  # it ended first: said by ``_ended``
            time.sleep(0.0005)


def _release(pid: int, children: dict[int, bool]) -> None:
    # Not reaped yet: the pid is still this child's. What a block detached (setsid) is below it
    # (a child subreaper) and goes first, then its group: once it is gone they are out of reach.
    process_tree.end_tree(pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    children.pop(pid, None)


def main(config: dict[str, Any]) -> None:
    """Import ahead, say ready, then fork a worker for each request until the build goes."""
    sock = socket.socket(fileno=config["socket_fd"])
    read_ahead = block_worker.import_ahead(config["package_dir"])  # digested with every block's
    said = {"pid": os.getpid(), "threads": threads(), "read_ahead": sorted(read_ahead)}
    said |= {"modules": sorted(sys.modules), "environment": dict(os.environ)}
    send(sock, {"kind": "ready"} | said)
    _fork_on_request(sock, read_ahead)


def _fork_on_request(sock: socket.socket, read_ahead: set[str]) -> None:
    """Fork a worker (or a package template) for each request until the build goes; never
    returns."""
    children: dict[int, bool] = {}  # pid -> its end said
    try:
        while True:
            ready, _, _ = select.select([sock], [], [], _POLL_S)
            _ended(children, sock)
            if not ready:
                continue
            received = receive(sock)
            if received is None:
                return
            request, fds = received
            if request["kind"] == "release":
                _release(request["pid"], children)
                continue
            running = threads()
            if running != 1:
                for fd in fds:
                    os.close(fd)
                send(sock, {"kind": "refused", "why": f"it runs {running} threads, not one"})
                continue
            # A worker's collections then leave what the template allocated alone: the collector
            # writes into every object it visits, which would copy the template's pages.
            gc.freeze()
            pid = os.fork()
            if pid == 0 and request["kind"] == "package-template":
                _become_package_template(request, fds, sock, read_ahead)
            if pid == 0:
                _become_worker(request, fds, sock, read_ahead)
            gc.unfreeze()  # the template itself collects as before
            for fd in fds:
                os.close(fd)
            children[pid] = False
            _until_its_own_group(pid)
            send(sock, {"kind": "forked", "pid": pid})
    finally:
        for pid in list(children):
            _release(pid, children)
        os._exit(0)
