"""The build's side of the template process (``template_process.py``): starting it, asking it
for a worker (``Template.fork``), and hearing how each of its workers ended (``Forked``, what
``workers.Worker`` reads as a child process: the template is the worker's parent, not the
build).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from . import reads, template_process

_PYTEST = "PYTEST_CURRENT_TEST"  # pytest's note of the running test: changes every test
START_TIMEOUT_S = 300.0  # a template that has not imported jax by then is stuck


class Unusable(Exception):
    """The template process cannot fork a worker safely: why."""


@dataclass
class Forked:
    """A worker forked by the template, as ``subprocess.Popen`` shows a child to ``Worker``:
    its status comes from the template, which reaps it only on ``release``."""

    pid: int
    template: Template
    package_version: str = ""

    def poll(self) -> int | None:
        return self.template.status(self.pid, 0)

    def wait(self, timeout: float) -> int:
        status = self.template.status(self.pid, timeout)
        if status is None:
            raise subprocess.TimeoutExpired("worker", timeout)
        return status

    def release(self) -> None:
        self.template.release(self.pid)

    def learn(self, said: dict[str, Any]) -> None:
        """What this worker, untouched by its block, said of where it ran (``untouched.py``)."""
        self.template.untouched_said.setdefault(self.package_version, said)


class Template:
    """The build's side of a template process: its socket, and how its workers ended. ``start``
    starts the template; ``package_template`` forks, from it, one that has imported the course
    package too (``package_template.py``)."""

    def __init__(self, process: Any, sock: socket.socket, blas_environment: dict) -> None:
        self.process = process  # subprocess.Popen, or Forked: the package template's
        self.socket = sock
        self.blas_environment = blas_environment
        self.ended: dict[int, int] = {}
        self.gone = False  # the template's end of the socket closed
        self.lock = threading.RLock()  # one conversation at a time: workers start side by side
        ready = self._next("ready", START_TIMEOUT_S)
        self.read_ahead = {path: _signature(path) for path in _outside_python(ready["read_ahead"])}
        self.modules = frozenset(ready.get("modules", ()))  # what its imports loaded
        self.unusable = ready.get("unusable", "")  # why a package template cannot be used
        self.untouched_said: dict[str, dict] = {}  # package version -> ``untouched.py``
        found = dict(ready.get("environment", {}), **blas_environment)  # as a worker's
        self.environment = {k: v for k, v in found.items() if v is not None and k != _PYTEST}
        self.started_with: dict[str, str] = {}  # the build's variables when it started (``start``)
        if ready.get("threads") != 1 and not self.unusable:
            self.close()
            raise Unusable(f"the template process runs {ready.get('threads')} threads, not one")

    @classmethod
    def start(cls, package_dir: str | None) -> Template:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        started_with = variables()
        config = {"sys_path": sys.path, "socket_fd": theirs.fileno(), "package_dir": package_dir}
        blas = template_process.BLAS_THREADS
        process = subprocess.Popen(
            [sys.executable, "-c", template_process.BOOT, json.dumps(config)],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=os.environ | {blas: "1"},  # OpenBLAS starts no thread pool: forking is safe
        )
        theirs.close()
        template = cls(process, ours, {blas: os.environ.get(blas)})
        template.started_with = started_with
        return template

    def fits(self, variables: dict[str, str]) -> bool:
        """A worker spawned now with the build's ``variables`` would, once it has imported
        ahead, hold this template's: each is the template's own, or one importing ahead set
        (JAX sets ``TPU_SKIP_MDS_QUERY``, say) that the build still holds as it did at the
        start. The build importing JAX itself sets those too (``hooks/wheel.py``'s fallback for
        an environment no block recorded)."""
        started = self.started_with
        return all(
            variables.get(name) == self.environment.get(name)
            or (self.environment.get(name) != started.get(name) == variables.get(name))
            for name in set(variables) | set(self.environment)
        )

    def package_template(self, package: str, package_dir: str) -> Template:
        """A child of this template that has imported ``package`` as a block would (in the
        build's folder, with its ``sys.path``), forking workers in turn; ``Unusable`` if the
        import cannot be kept (it raised, printed, warned, or started a thread or process)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        request = {"kind": "package-template", "package": package, "package_dir": package_dir}
        request |= {"cwd": os.getcwd(), "sys_path": sys.path}
        try:
            with self.lock:
                template_process.send(self.socket, request, (theirs.fileno(),))
                reply = self._next("forked", START_TIMEOUT_S)
                self.ended.pop(reply["pid"], None)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        child = Template(Forked(reply["pid"], self), ours, self.blas_environment)
        if child.unusable:
            child.close()
            raise Unusable(child.unusable)
        return child

    def stale(self) -> bool:
        """A file importing ahead read (matplotlib's settings, say) changed since: under
        ``mkdocs serve`` the next worker must import it afresh, as a spawned one would."""
        return any(_signature(path) != seen for path, seen in self.read_ahead.items())

    def fork(self, config: dict[str, Any], worker_ends: tuple[int, int, int]) -> Forked:
        version = config["package_version"]
        config = config | {"blas_environment": self.blas_environment}
        config["untouched_said"] = self.untouched_said.get(version)
        with self.lock:
            template_process.send(self.socket, {"kind": "fork", "config": config}, worker_ends)
            reply = self._next("forked", START_TIMEOUT_S)
            self.ended.pop(reply["pid"], None)  # said of an earlier child with that pid, reaped
        return Forked(reply["pid"], self, version)

    def status(self, pid: int, timeout: float) -> int | None:
        """How worker ``pid`` ended, waiting up to ``timeout`` s; None while it runs."""
        until = time.monotonic() + timeout
        while pid not in self.ended and self.socket.fileno() >= 0 and not self.gone:
            left = until - time.monotonic()
            with self.lock:  # a short wait each time: another thread may be starting a worker
                if pid not in self.ended:
                    self._pump(min(max(left, 0), 0.05))
            if left <= 0:
                break
        return self.ended.get(pid)

    def release(self, pid: int) -> None:
        """Its process group killed, worker ``pid`` is reaped by the template."""
        with self.lock, contextlib.suppress(OSError):
            template_process.send(self.socket, {"kind": "release", "pid": pid})
            self.ended.pop(pid, None)

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
        received = template_process.receive(self.socket) if ready else None
        if received is None:
            self.gone = self.gone or bool(ready)  # its end of the socket closed
            return None
        message, _ = received
        if message["kind"] == "ended":
            self.ended[message["pid"]] = message["status"]
        return message

    def close(self) -> None:
        """The template goes, and with it every worker it still holds (it kills their groups)."""
        with contextlib.suppress(OSError):
            self.socket.close()
        if isinstance(self.process, Forked):  # a package template: its parent reaps it
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
            self.process.release()
            return
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def variables() -> dict[str, str]:
    """The build's environment variables, which a worker inherits (pytest's note apart)."""
    return {name: value for name, value in os.environ.items() if name != _PYTEST}


def _outside_python(paths: list[str]) -> list[str]:
    """Those not Python's own (``reads``: keyed by uv.lock and the Python version)."""
    return [path for path in paths if not reads.excluded(path)]


def _signature(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size
