"""The template process (a zygote) every session's worker is forked from, warm, and the build's
handle on it (``Template``; its children are ``Forked``, the processes the build starts
``Spawned``). Started once (``python -c BOOT CONFIG``), it imports ahead what every worker would
(``worker.PREIMPORT``), records what that read, starts no JAX backend, and forks a worker for
each request on its socket to the build, which serves blocks on the pipes sent with the request
(``worker.serve``). It runs no block, so nothing a block does reaches a later worker.

A fork from it is safe: it is single-threaded when it forks (checked before every fork;
OpenBLAS's thread pool, the one thread NumPy starts, is held at one thread by
``OPENBLAS_NUM_THREADS=1`` and given back its usual size in each child), it holds no lock
another thread could hold, no backend, no file a block may write. Python's ``random`` re-seeds
itself in a child; NumPy's global generator is re-seeded here, as a fresh process seeds it.

The *package template*, its child that has imported the course package too (the template never
does: a block's reach of the package is in its key), forks the workers of sessions whose first
block imports the package before anything else can run (``imports_package_first``): they skip
that import and run as a fresh worker would (``parallel_blocks.py --run forked --pages 10``, a
worker a block: 23.5 s with it, 36.2 s without; medians of 5 and 4 in turns, a loaded 2-core
machine, 2026-12). Used only where the import can be kept (it did not raise, print, warn, or
start a thread or a process; else the log says why once); a changed package gets a new one.

A template says when a child ends but reaps it only once the build has killed its group (until
then its pid cannot be reused: the build's ``killpg`` reaches only that worker). When the build
goes (its end of the socket closes), it kills every worker's group and ends.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import gc
import importlib
import io
import itertools
import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from .. import process_tree
from . import reads, worker
from .worker import START_TIMEOUT_S, receive_on_socket, send_on_socket

BOOT = (
    "import json, sys; config = json.loads(sys.argv[1]); sys.path[:] = config['sys_path']; "
    "from build_support.execution.template import main; main(config)"
)
"""The command line of a process the build starts (``python -c BOOT CONFIG``), with the build's
own ``sys.path``, so a block imports what it would have imported in the build."""
BLAS_THREADS = "OPENBLAS_NUM_THREADS"
_PYTEST = "PYTEST_CURRENT_TEST"  # pytest's note of the running test: changes every test
_FUTURE = "__future__"  # a compiler directive: its module is always loaded
_POLL_S = 0.05  # how often the template looks for ended children
_OPENBLAS_NAMES = (("scipy_openblas_", "64_"), ("scipy_openblas_", ""), ("openblas_", ""))


class Unusable(Exception):
    """The template process cannot fork a worker safely: why."""


class Spawned(subprocess.Popen):
    """A process the build started itself: the template, or a worker where forking is unsafe."""

    @classmethod
    def start(cls, config: dict[str, Any], fds: tuple[int, ...], **options: Any) -> Spawned:
        """``python -c BOOT CONFIG`` with ``fds``, in a process group of its own: killed whole."""
        options |= {"pass_fds": fds, "stdin": subprocess.DEVNULL, "start_new_session": True}
        return cls([sys.executable, "-c", BOOT, json.dumps(config)], **options)

    def reap(self) -> None:
        """Reaped, killed first if it has not ended."""
        if self.poll() is None:
            self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.wait(timeout=10)

    def keep_untouched_answer(self, answer: dict[str, Any]) -> None:
        """Not kept: no template holds a spawned worker's starting state (``worker.py``)."""


class Forked:
    """A process forked by a template: its status comes from the template, which reaps it
    only on ``reap``, once the build has killed its group."""

    def __init__(self, pid: int, template: Template, package_version: str = "") -> None:
        self.pid, self.template, self.package_version = pid, template, package_version

    def poll(self) -> int | None:
        return self.template.status(self.pid, 0)

    def wait(self, timeout: float) -> int:
        status = self.template.status(self.pid, timeout)
        if status is None:
            raise subprocess.TimeoutExpired("worker", timeout)
        return status

    def reap(self) -> None:
        """The template reaps it, killed first if it has not ended (``_release``)."""
        with self.template.lock, contextlib.suppress(OSError):
            send_on_socket(self.template.socket, {"kind": "release", "pid": self.pid})
            self.template.ended.pop(self.pid, None)

    def keep_untouched_answer(self, answer: dict[str, Any]) -> None:
        """Where a block ran, as this worker answered untouched by its block (``worker.py``):
        handed to the next workers of its template for that package version."""
        self.template.untouched_answers.setdefault(self.package_version, answer)


class Template:
    """The build's side of a template process (or a package template): its socket, and how its
    workers ended."""

    def __init__(self, start: Callable[[int], Spawned | Forked], blas: dict) -> None:
        """The template ``start`` starts, given its end of the socket, once it is ready;
        ``Unusable`` if it cannot fork safely."""
        self.started_with = variables()  # the build's when it started
        self.socket, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.process = start(theirs.fileno())
        except BaseException:
            self.socket.close()
            raise
        finally:
            theirs.close()
        self.blas_environment, self.ended = blas, {}  # pid -> status, of its ended workers
        self.closed_by_template = False  # the template's end of the socket closed
        self.lock = threading.RLock()  # one conversation at a time: workers start side by side
        ready = self._next("ready", START_TIMEOUT_S)
        # Python's own files left out (``reads``: keyed by uv.lock and the Python version)
        found_read = [path for path in ready["read_ahead"] if not reads.excluded(path)]
        self.read_ahead = {path: _signature(path) for path in found_read}
        self.modules = frozenset(ready.get("modules", ()))  # what its imports loaded
        self.untouched_answers: dict[str, dict] = {}  # package version -> where blocks ran
        found = dict(ready.get("environment", {}), **blas)  # as a worker's
        self.environment = {k: v for k, v in found.items() if v is not None and k != _PYTEST}
        threads, why = ready.get("threads"), ready.get("unusable")  # a package template's
        if why or threads != 1:
            self.close()
            raise Unusable(why or f"the template process runs {threads} threads, not one")

    @classmethod
    def start(cls, package_dir: str | None) -> Template:
        """The template, started by the build with OpenBLAS starting no thread pool."""
        blas = {BLAS_THREADS: os.environ.get(BLAS_THREADS)}
        config = {"sys_path": sys.path, "package_dir": package_dir}
        env = os.environ | {BLAS_THREADS: "1"}
        return cls(lambda fd: Spawned.start(config | {"socket_fd": fd}, (fd,), env=env), blas)

    def fits(self, variables: dict[str, str]) -> bool:
        """A worker spawned now with the build's ``variables`` would, once it has imported
        ahead, hold this template's: each is the template's own, or one importing ahead set
        (JAX sets ``TPU_SKIP_MDS_QUERY``) that the build still holds as it did at the start (as
        the build does once it imports JAX itself: ``hooks/wheel.py``'s fallback)."""
        started = self.started_with
        return all(
            variables.get(name) == self.environment.get(name)
            or (self.environment.get(name) != started.get(name) == variables.get(name))
            for name in set(variables) | set(self.environment)
        )

    def package_template(self, package: str, package_dir: str) -> Template:
        """A child of this template that has imported ``package`` as a block would (in the
        build's folder, with its ``sys.path``); ``Unusable`` if the import cannot be kept."""
        config = {"package": package, "package_dir": package_dir, "cwd": os.getcwd()}
        request = {"kind": "package-template", "config": config | {"sys_path": sys.path}}
        return Template(
            lambda fd: Forked(self._forked(request, (fd,)), self), self.blas_environment
        )

    def stale(self) -> bool:
        """A file importing ahead read (matplotlib's settings, say) changed since: under
        ``mkdocs serve`` the next worker must import it afresh, as a spawned one would."""
        return any(_signature(path) != seen for path, seen in self.read_ahead.items())

    def fork(self, config: dict[str, Any], worker_ends: tuple[int, ...], version: str) -> Forked:
        """A worker for the package at ``version`` (a digest), with the build's pipes."""
        answer = self.untouched_answers.get(version)
        config = config | {"blas_environment": self.blas_environment, "untouched_answer": answer}
        return Forked(self._forked({"kind": "fork", "config": config}, worker_ends), self, version)

    def _forked(self, request: dict[str, Any], fds: tuple[int, ...]) -> int:
        with self.lock:
            send_on_socket(self.socket, request, fds)
            pid = self._next("forked", START_TIMEOUT_S)["pid"]
            self.ended.pop(pid, None)  # said of an earlier child with that pid, reaped
        return pid

    def status(self, pid: int, timeout: float) -> int | None:
        """How worker ``pid`` ended, waiting up to ``timeout`` s; None while it runs."""
        until = time.monotonic() + timeout
        while pid not in self.ended and self.socket.fileno() >= 0 and not self.closed_by_template:
            left = until - time.monotonic()
            with self.lock:  # a short wait each time: another thread may be starting a worker
                if pid not in self.ended:
                    self._pump(min(max(left, 0), 0.05))
            if left <= 0:
                break
        return self.ended.get(pid)

    def _next(self, kind: str, timeout: float) -> dict[str, Any]:
        until = time.monotonic() + timeout
        while (left := until - time.monotonic()) > 0:
            message = self._pump(left)
            if message is None:
                break
            if message["kind"] == kind:
                return message
            if message["kind"] == "refused":
                raise Unusable(f"the template process refused to fork: {message['why']}")
        status = self.process.poll()
        self.close()
        raise Unusable(f"the template process did not say {kind!r} (status {status})")

    def _pump(self, timeout: float) -> dict[str, Any] | None:
        """The template's next message within ``timeout`` (a worker's end is kept)."""
        ready, _, _ = select.select([self.socket], [], [], timeout)
        received = receive_on_socket(self.socket) if ready else None
        if received is None:
            self.closed_by_template = self.closed_by_template or bool(ready)
            return None
        message, _ = received
        if message["kind"] == "ended":
            self.ended[message["pid"]] = message["status"]
        return message

    def close(self) -> None:
        """The template goes, and with it every worker it still holds (it kills their groups)."""
        with contextlib.suppress(OSError):
            self.socket.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)  # it ends once its socket closes
        self.process.reap()


def variables() -> dict[str, str]:
    """The build's environment variables, which a worker inherits (pytest's note apart)."""
    return {name: value for name, value in os.environ.items() if name != _PYTEST}


def _signature(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def imports_package_first(code: str, package: str, modules: frozenset[str]) -> bool:
    """The code's first statements import ``package`` (or a module of it), with nothing before
    but a docstring and imports of ``modules`` (those the template holds: a look-up in
    ``sys.modules``, where anything else, an import of a module not yet loaded too, runs code)."""
    try:
        statements = ast.parse(code).body
    except (SyntaxError, ValueError):
        return False
    for statement in statements:
        match statement:
            case ast.Expr(value=ast.Constant(value=str())):
                continue  # a docstring
            case ast.Import(names=aliases):
                names = [alias.name for alias in aliases]
            case ast.ImportFrom(module=str(module), names=aliases, level=0):
                # ``from m import n``: a look-up only where ``m.n`` is itself a loaded module
                # (else it may be a submodule Python would import now) or ``m`` is ``__future__``
                names = [module, *(f"{module}.{a.name}" for a in aliases if module != _FUTURE)]
            case _:
                return False
        for name in names:
            if f"{name}.".startswith(f"{package}."):  # the package, or a module of it
                return True
            if name != _FUTURE and name not in modules:
                return False
    return False


# ---------------------------------------------------------------- in the template process


def threads() -> int:
    """How many threads this process runs (Linux)."""
    return len(os.listdir("/proc/self/task"))


def _restore_blas_threads() -> None:
    """NumPy's OpenBLAS, if it is loaded, given the thread count a fresh worker's has, by
    OpenBLAS's own rule: the first of its variables set above 0, else one a processor."""
    counts = []
    for name in (BLAS_THREADS, "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        with contextlib.suppress(ValueError):
            counts.append(int(os.environ.get(name, "")))
    with open("/proc/self/maps", encoding="utf-8") as maps:
        paths = {line.split()[-1] for line in maps if "openblas" in line and "/" in line}
    for path, (prefix, suffix) in itertools.product(sorted(paths), _OPENBLAS_NAMES):
        library = ctypes.CDLL(path)
        setter = getattr(library, f"{prefix}set_num_threads{suffix}", None)
        procs = getattr(library, f"{prefix}get_num_procs{suffix}", None)
        if setter is not None and procs is not None:
            setter(next((count for count in counts if count > 0), 0) or procs())
            return


def _in_child(
    request: dict[str, Any], fds: list[int], parent: socket.socket, read_ahead: set[str]
) -> None:
    """In a forked child: the package template, serving forks on the socket the build sent (or,
    if the package's import cannot be kept, saying why and ending), or a worker; never returns."""
    try:
        # A session and process group of its own: the build kills a worker's whole, which never
        # reaches the package template.
        os.setsid()
        parent.close()
        config = request["config"]
        os.chdir(config["cwd"])  # where, and with which path, a block runs
        sys.path[:] = config["sys_path"]
        if request["kind"] == "package-template":
            why, read = import_package(config["package"], config["package_dir"])
            _fork_on_request(socket.socket(fileno=fds[0]), read | read_ahead, {"unusable": why})
        requests_fd, replies_fd, console_fd = fds
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(console_fd, 1)
        os.dup2(console_fd, 2)
        for fd in (null, console_fd):
            os.close(fd)
        original = config["blas_environment"]
        for name, value in original.items():  # the environment a spawned worker would have
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _restore_blas_threads()
        random.seed()
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        worker.serve(config, requests_fd, replies_fd, read_ahead)
    finally:
        os._exit(70)  # serving ends the process itself; anything else is a failure to start


def import_package(package: str, package_dir: str | None) -> tuple[str, set[str]]:
    """Import the course package as a worker's first block would; why it cannot be kept for
    the workers forked from here ("" if it can), and the files it read (``reads``)."""
    printed = io.StringIO()
    with (
        reads.recorded(package_dir) as opened,
        warnings.catch_warnings(record=True) as warned,  # the filters a worker has
        contextlib.redirect_stdout(printed),
        contextlib.redirect_stderr(printed),
    ):
        try:
            importlib.import_module(package)
        except BaseException as error:  # SystemExit too: the block that imports it will say
            return f"importing it raised {worker.summary(error)}", set()
    if warned:
        return f"importing it warned: {str(warned[0].message)[:200]}", set()
    if printed.getvalue():
        return f"importing it printed {printed.getvalue()[:200]!r}", set()
    if threads() != 1:
        return f"importing it started threads (it runs {threads()})", set()
    if process_tree.descendants(os.getpid()):
        return "importing it started a process", set()
    return "", opened.inputs()


def _say_ended(children: dict[int, bool], sock: socket.socket) -> None:
    """Say, once, how each child that ended did (as ``subprocess`` says a status)."""
    for pid in [pid for pid, said in children.items() if not said]:
        with contextlib.suppress(ChildProcessError):
            if found := os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                killed = found.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
                status = -found.si_status if killed else found.si_status
                send_on_socket(sock, {"kind": "ended", "pid": pid, "status": status})
                children[pid] = True


def _until_its_own_group(pid: int) -> None:
    """Wait (microseconds) until the child leads a group of its own: the build kills the group
    by its pid, and a group not made yet would not be found."""
    with contextlib.suppress(ProcessLookupError):
        while os.getpgid(pid) != pid:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return  # it ended first: said by ``_say_ended``
            time.sleep(0.0005)


def _release(pid: int, children: dict[int, bool], tree: bool = False) -> None:
    # Not reaped yet: the pid is still this child's. A worker's tree is the build's to end
    # (``Worker.close``, before it asks for the release); the SIGKILL is for a package template
    # that did not end within ``Template.close``'s wait. Where the build has gone (``tree``),
    # what a block detached is below it (a child subreaper) and goes first, then its group.
    if tree:
        process_tree.end_tree(pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    children.pop(pid, None)


def main(config: dict[str, Any]) -> None:
    """A process the build started (``BOOT``): import ahead, then serve blocks as a spawned
    worker, or, as the template, say ready and fork a worker for each request."""
    read_ahead = worker.import_ahead(config["package_dir"])  # digested with every block's
    if "socket_fd" not in config:
        worker.serve(config, config["requests_fd"], config["replies_fd"], read_ahead)
    found = {"modules": sorted(sys.modules), "environment": dict(os.environ)}
    _fork_on_request(socket.socket(fileno=config["socket_fd"]), read_ahead, found)


def _fork_on_request(sock: socket.socket, read_ahead: set[str], said: dict[str, Any]) -> None:
    """Say ready (its threads, its reads, ``said``), then fork a worker (or a package template)
    for each request until the build goes; none where ``said`` names why it is ``unusable``."""
    children: dict[int, bool] = {}  # pid -> its end said
    try:
        found = {"threads": threads(), "read_ahead": sorted(read_ahead)}
        send_on_socket(sock, {"kind": "ready"} | found | said)
        while not said.get("unusable"):
            ready, _, _ = select.select([sock], [], [], _POLL_S)
            _say_ended(children, sock)
            if not ready:
                continue
            received = receive_on_socket(sock)
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
                send_on_socket(
                    sock, {"kind": "refused", "why": f"it runs {running} threads, not one"}
                )
                continue
            # A worker's collections then leave what the template allocated alone: the collector
            # writes into every object it visits, which would copy the template's pages.
            gc.freeze()
            pid = os.fork()
            if pid == 0:
                _in_child(request, fds, sock, read_ahead)
            gc.unfreeze()  # the template itself collects its own objects
            for fd in fds:
                os.close(fd)
            children[pid] = False
            _until_its_own_group(pid)
            send_on_socket(sock, {"kind": "forked", "pid": pid})
    finally:
        for pid in list(children):
            _release(pid, children, tree=True)
        os._exit(0)
