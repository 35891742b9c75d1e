"""How a session's worker starts: forked, warm, from the template process; or, where forking is
unsafe, spawned as a fresh interpreter that imports ahead itself (today's workers elsewhere).

``Workers`` (process scope: ``state.PROCESS``) owns them. On Linux it starts one template
process (``template_process.py``: ``numpy``, ``jax`` and ``matplotlib.pyplot`` imported, no
backend, one thread) and asks it for a worker per session: a fork takes milliseconds where an
interpreter importing JAX takes seconds. A session whose first block imports the course package
first is forked from the template's child that has imported it too (``package_template.py``).
Elsewhere (macOS: forking a process that has loaded NumPy's or JAX's libraries is unsafe, and
Python spawns there), or with
``COURSE_WORKER_START=spawn``, or when the template cannot fork safely, each worker is its own
interpreter, one started ahead of need; the build's log says so once.

Either way the build creates the worker's three pipes (requests, replies, stdout/stderr) and
the worker runs in a process group of its own, so ``workers.Worker`` treats both alike.
A forked worker's parent is the template, which says how it ended (``Forked``).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from .block_worker import BOOT
from .package_template import imports_package_first
from .template_handle import Template, Unusable, variables
from .workers import Limits, Worker

START_ENV = "COURSE_WORKER_START"  # "spawn": every worker a fresh interpreter (as on macOS)
log = logging.getLogger("mkdocs.hooks.execution")


def _pipes() -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(the worker's ends, the build's ends) of its requests, replies and console pipes."""
    requests_read, requests_write = os.pipe()
    replies_read, replies_write = os.pipe()
    console_read, console_write = os.pipe()
    for fd in (replies_read, console_read):
        os.set_blocking(fd, False)
    return (requests_read, replies_write, console_write), (
        requests_write,
        replies_read,
        console_read,
    )


def _worker(limits: Limits, process: Any, build_ends: tuple[int, int, int]) -> Worker:
    requests, replies, console = build_ends
    return Worker(limits, process, os.fdopen(requests, "wb"), replies, console)


def _config(
    limits: Limits, package: str, package_dir: str | None, cache: str | None, version: str = ""
) -> dict:
    return {
        "package_version": version,  # the package's digest: what ``untouched.py`` keys on
        "sys_path": sys.path,
        "cwd": os.getcwd(),
        "max_output_bytes": limits.max_output_bytes,
        "package": package,
        "package_dir": package_dir,
        "compile_cache": cache,
    }


def spawn(limits: Limits, package: str, package_dir: str | None, cache: str | None) -> Worker:
    """A worker that is a fresh interpreter (``python -c BOOT``), importing ahead itself."""
    worker_ends, build_ends = _pipes()
    requests_fd, replies_fd, console_fd = worker_ends
    config = _config(limits, package, package_dir, cache)
    config |= {"requests_fd": requests_fd, "replies_fd": replies_fd}
    process = subprocess.Popen(
        [sys.executable, "-c", BOOT, json.dumps(config)],
        pass_fds=(requests_fd, replies_fd),
        stdin=subprocess.DEVNULL,
        stdout=console_fd,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # a process group of its own: killed whole
    )
    for fd in worker_ends:
        os.close(fd)
    return _worker(limits, process, build_ends)


def how_workers_start() -> str:
    """ "fork", or why workers are spawned here."""
    if os.environ.get(START_ENV) == "spawn":
        return f"{START_ENV}=spawn"
    if sys.platform != "linux":
        return f"forking a process that has loaded NumPy and JAX is unsafe on {sys.platform}"
    return "fork"


@dataclass
class Workers:
    """The process's workers: those running sessions now, and how the next one starts.

    Process scope (``state.PROCESS``), so that under ``mkdocs serve`` the template (or the
    spawned spare) started for one rebuild serves the next; ``close_sessions`` ends every
    session's worker at the end of each build, ``close`` the template and spare too."""

    template: Template | None = None
    package_template: Template | None = None  # the template's child holding the package too
    package_seen: tuple[str, str] = ("", "")  # the package's digest, and why it cannot be used
    spare: Worker | None = None
    running: list[Worker] = field(default_factory=list)
    retired: list[Template] = field(default_factory=list)  # closed once their workers end
    started_for: tuple = ()  # what the template or spare started with: a change discards it
    spawn_why: str = ""  # why workers are spawned, once said
    at_exit: bool = False
    lock: threading.RLock = field(default_factory=threading.RLock)  # sessions start side by side

    def take(
        self,
        limits: Limits,
        package: str,
        package_dir: str | None,
        cache: str | None,
        first_code: str = "",
        package_version: str = "",
    ) -> Worker:
        """A worker for a new session whose first block is ``first_code``: forked from the
        template (from the package template, for the package at ``package_version``, where that
        block imports the package first), or spawned."""
        with self.lock:
            return self._take(limits, package, package_dir, cache, (first_code, package_version))

    def _take(self, limits, package, package_dir, cache, first: tuple[str, str]) -> Worker:
        if not self.at_exit:  # an interrupted build too ends its workers
            atexit.register(self.close)
            self.at_exit = True
        # A template that imported with another path or variables, or read files since changed,
        # is not what a worker spawned now would be:
        wanted, now = (package_dir, tuple(sys.path)), variables()
        stale = self.template is not None and (self.template.stale() or not self.template.fits(now))
        if self.started_for != wanted or stale:
            self._discard()
            self.started_for = wanted
        # A spare spawned with other variables is not what a worker spawned now would be:
        spare_for = (limits, package, cache, tuple(sorted(now.items())))
        if self.spare is not None and self.spare.started_for != spare_for:
            self.spare.close()
            self.spare = None
        worker = None
        if not self.spawn_why:
            worker = self._forked(limits, package, package_dir, cache, first)
        if worker is None:
            worker = self.spare if self.spare and self.spare.alive() else None
            if worker is None:
                worker = spawn(limits, package, package_dir, cache)
            self.spare = spawn(limits, package, package_dir, cache)  # the next starts warm
            self.spare.started_for = spare_for
        self.running.append(worker)
        return worker

    def _forked(self, limits, package, package_dir, cache, first) -> Worker | None:
        first_code, package_version = first
        why = how_workers_start()
        try:
            if why != "fork":
                raise Unusable(why)
            if self.template is None or self.template.process.poll() is not None:
                self._discard()
                self.template = Template.start(package_dir)
            template = self.template
            if package_dir and imports_package_first(first_code, package, template.modules):
                template = self._with_package(package, package_dir, package_version) or template
            worker_ends, build_ends = _pipes()
            try:
                forked = template.fork(
                    _config(limits, package, package_dir, cache, package_version), worker_ends
                )
            except Unusable:
                for fd in build_ends:
                    os.close(fd)
                raise
            finally:
                for fd in worker_ends:
                    os.close(fd)
            return _worker(limits, forked, build_ends)
        except Unusable as unusable:
            self.spawn_why = str(unusable)
            self.template = None
            log.info("Workers start as fresh interpreters, not forked warm: %s", unusable)
            return None

    def _with_package(self, package: str, package_dir: str, digest: str) -> Template | None:
        """The package template for the package at version ``digest`` (made again after any
        change to it); None where its import cannot be kept, said once in the log for each."""
        seen, why = self.package_seen
        current = self.package_template
        if current is not None and (seen != digest or current.process.poll() is not None):
            self.retired.append(current)  # its running workers keep it until their session ends
            self.package_template = current = None
        if current is None and not (seen == digest and why):
            assert self.template is not None
            try:
                self.package_template = self.template.package_template(package, package_dir)
                self.package_seen = (digest, "")
            except Unusable as unusable:
                self.package_seen = (digest, str(unusable))
                log.info("Workers import the course package themselves: %s", unusable)
        return self.package_template

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
            self.spare.close()
            self.spare = None
        # Their running workers keep them until their session ends; the package template,
        # a child of the template, is closed first.
        for template in (self.package_template, self.template):
            if template is not None:
                self.retired.append(template)
        self.template = self.package_template = None
        self.package_seen = ("", "")

    def close(self) -> None:
        with self.lock:
            self._discard()  # the template retired: closed once its workers are, below
        self.close_sessions()
