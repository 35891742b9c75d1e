"""Under ``mkdocs serve``, every page answers while a rebuild runs: the last whole build is
served until the next one is whole (``hooks/serve_last_build.py`` maps MkDocs' events here).

MkDocs' dev server builds into the folder it serves, after emptying it, so it holds every
request until the rebuild ends (``LiveReloadServer._serve_request`` waits on its
``_epoch_cond``): while a block ran for a minute, no page answered for a minute. Here each serve
rebuild writes into a staging folder beside the served one (``staged``), and only a finished
build is moved in, file by file (``move_in``); the server is told not to wait for a rebuild
before it serves a page (``serve_without_waiting``), which is safe now that the served folder
only ever holds whole builds. Its long poll, which reloads the author's tab once a rebuild is
shown, still waits as before. A rebuild that fails leaves the last whole build served.
A serve stopped while it rebuilds leaves no staging folder behind (``discard_staging``, at
MkDocs' shutdown; ``hooks/site_safety.py`` makes a SIGTERM reach it). ``mkdocs build`` is not
staged here: ``site_swap.py`` stages and swaps ``site/`` (for ``make build``, and for a direct
``mkdocs build`` through ``hooks/site_safety.py``).

Each serve build, the first and every rebuild, holds the checkout's build lock
(``build_lock.py``) from its configuration to its end (``take_lock``, ``release_lock``), as
``make build`` and ``make publish`` do: a ``make build`` beside ``make serve`` waits for the
rebuild, saying so, and a rebuild waits for it (the last whole build is served meanwhile).

This reaches into one private name of MkDocs 1.6's server (``_epoch_cond``), the last of the
1.x line, and of ProperDocs' fork of it: ``tests/test_block_guard.py`` fails if it moves.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import build_lock

SUFFIX = ".building"


@dataclass
class Serving:
    """What ``mkdocs serve`` keeps for its process: MkDocs loads the hooks afresh for every
    rebuild, and says the served folder once (on_serve). Never reset: one serve a process."""

    served: Path | None = None  # the folder the server serves
    lock: build_lock.RebuildLock = field(default_factory=build_lock.RebuildLock)
    # A notebook still running when a rebuild ended asks for another once it is done
    # (``notebooks/kernels.py``): a file written into a folder the server watches, its public
    # way to rebuild. Asked before the server watches (the first build), it is written once it
    # does; asked from any thread.
    rebuilds_folder: Path | None = None
    rebuild_asked_early: bool = False
    rebuilds_lock: threading.Lock = field(default_factory=threading.Lock)


SERVE = Serving()  # its ``lock.serving``: under ``mkdocs serve`` (on_startup says once)


def take_lock(config_file: str) -> None:
    """Under ``mkdocs serve``: the checkout's build lock, for this build (waited for)."""
    if SERVE.lock.serving:
        SERVE.lock.take(Path(config_file).resolve().parent, "make serve's rebuild")


def release_lock() -> None:
    SERVE.lock.release()


class _ServeWhatIsThere(threading.Condition):
    """The server's epoch condition, without the wait a page request makes for a rebuild in
    progress (its one ``wait_for`` without a timeout); the long poll's waits are kept."""

    def wait_for(self, predicate, timeout=None):
        if timeout is None:
            return True
        return super().wait_for(predicate, timeout)


def serve_without_waiting(server) -> None:
    """Before the server starts: pages are served at once, from the last whole build."""
    server._epoch_cond = _ServeWhatIsThere()
    SERVE.served = Path(server.root)


# MkDocs polls what it watches every 0.5 s (its PollingObserver, chosen because file system
# events miss edits on some mounts), which puts 0.25 s on average before every rebuild starts;
# a poll of the few hundred files a course watches costs about a millisecond.
POLL_EVERY_S = 0.1


def poll_often(server, config) -> None:
    """Before the server starts: the files it watches are polled every ``POLL_EVERY_S``, by a
    new polling observer with the same watches (docs/ and mkdocs.yml, the only ones made before
    ``on_serve``; the ``--watch`` folders are added after it). Where any other watch was made
    already (``--watch-theme``), the server is left as it was."""
    from watchdog.observers.polling import PollingObserver

    watched = [path for path in (config.docs_dir, config.config_file_path) if path]
    if len(server.observer.emitters) > len(watched):  # watches it does not know of: MkDocs' own
        return
    for path in watched:
        server.unwatch(path)
    server.observer = PollingObserver(timeout=POLL_EVERY_S)
    for path in watched:
        server.watch(path)


def staged(site_dir: str) -> str:
    """Where a build writes: beside the served folder while serving (the first build runs
    before the server is told, into the folder itself, while nothing is served yet)."""
    if SERVE.served and Path(site_dir) == SERVE.served:
        return str(SERVE.served) + SUFFIX
    return site_dir


def move_in(site_dir: str) -> None:
    """A finished serve rebuild, moved into the served folder: every file (each move atomic),
    then out of it what the new build no longer has."""
    staging = Path(site_dir)
    served = SERVE.served
    if served is None or staging != Path(str(served) + SUFFIX):
        return
    built = set()
    for path in sorted(staging.rglob("*")):
        if path.is_dir():
            continue
        relative = path.relative_to(staging)
        built.add(relative)
        (served / relative).parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, served / relative)
    for path in sorted(served.rglob("*"), reverse=True):  # files before their folders
        if path.is_dir():
            if not any(path.iterdir()):
                path.rmdir()
        elif path.relative_to(served) not in built:
            path.unlink()
    shutil.rmtree(staging, ignore_errors=True)


def discard_staging() -> None:
    """At the serve's end: a rebuild's staging folder, left by a stop in the middle of it."""
    if SERVE.served:
        shutil.rmtree(str(SERVE.served) + SUFFIX, ignore_errors=True)


def watch_for_rebuilds(server) -> None:
    """Before the server starts: the folder whose files ask it for a rebuild."""
    folder = Path(tempfile.mkdtemp(prefix="course-serve-rebuilds-"))
    atexit.register(shutil.rmtree, folder, True)
    server.watch(str(folder))
    with SERVE.rebuilds_lock:
        SERVE.rebuilds_folder = folder
        asked, SERVE.rebuild_asked_early = SERVE.rebuild_asked_early, False
    if asked:
        rebuild_soon()


def rebuild_soon() -> None:
    """Ask the server for a rebuild (from any thread)."""
    with SERVE.rebuilds_lock:
        if SERVE.rebuilds_folder is None:
            SERVE.rebuild_asked_early = True
            return
        (SERVE.rebuilds_folder / "rebuild").write_text(f"{time.time()}\n", encoding="utf-8")
