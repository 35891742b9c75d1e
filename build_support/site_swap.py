"""``make build`` and ``make publish``: a build staged in a folder of its own, then swapped into
``site/`` in one step, so that at every instant ``site/`` is one whole build, the old or the new,
whatever is killed when.

    python -m build_support.site_swap "make build" -- BUILDER-COMMAND...

``site`` is a symbolic link to ``site.builds/<build>/``. Each build, holding the checkout's build
lock (``build_lock.py``: a second build waits, saying for whom), writes into a new
``site.builds/<build>/`` with its own progress file (``execution/progress.py``); only a build
whose command succeeded and whose progress says finished is swapped in: a new link made beside
``site`` and renamed over it (``os.replace``, atomic). The folder shown before is kept until the
build after next, so that a reader in the middle of it (a server, a test) finishes. A ``site``
that is still a real folder, from before, is exchanged with the link in one step (Linux's
``renameat2(RENAME_EXCHANGE)``). A build killed at any moment leaves ``site`` as it was; what it
left in ``site.builds/`` is deleted by the next build.

The driver dies with ``make`` (``process_tree.die_with_parent``), and its builder with the
driver: a ``kill`` of make alone no longer leaves MkDocs building. Every way a build ends is said
in one line: the step it was in (a page, a block, the wheel, the swap) and whether ``site/``
changed. A strict build's failure is said as a failure, not as a crash.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import build_lock, disk_space
from .execution import process_tree, progress

SITE = "site"
SITE_DIR_ENV = "COURSE_SITE_DIR"  # mkdocs.yml's site_dir reads it; mike has no option for it
LEFT_BY_OLDER_MAKEFILES = ("site.building", "site.building.progress", "site.previous")
MIKE_LEFTOVERS = "mike-mkdocs*.yml"  # mike's temporary configuration, left by a killed mike
KEPT = "site/ is left as it was"
PREVIOUS = "previous"  # in site.builds/: a link to the build shown before this one
_RENAME_EXCHANGE = 2
_STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def current(root: Path) -> Path | None:
    """The build folder ``site`` shows now (None: no site, or a real folder)."""
    site = root / SITE
    return site.resolve() if site.is_symlink() else None


def tidy(root: Path, builds: Path) -> None:
    """Under the lock: what ended builds left (their folders and progress files, mike's
    temporary configurations, the staging folders of older Makefiles), deleted."""
    kept = {current(root), (builds / PREVIOUS).resolve()}  # shown, and shown just before
    for path in builds.iterdir():
        if path.name in (build_lock.LOCK, PREVIOUS) or path.resolve() in kept:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    for name in LEFT_BY_OLDER_MAKEFILES:
        shutil.rmtree(root / name, ignore_errors=True)
        with contextlib.suppress(OSError):
            (root / name).unlink()
    for stray in [*root.glob(MIKE_LEFTOVERS), *root.glob(f".{SITE}.new-*")]:
        stray.unlink(missing_ok=True)  # .site.new-*: a link a swap killed before its rename


def _exchange(first: Path, second: Path) -> None:
    """Swap two paths in one step (Linux's ``renameat2``); OSError where it is missing."""
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "renameat2"):
        raise OSError("renameat2 is not available on this system")
    at_cwd = -100  # AT_FDCWD
    first_b, second_b = os.fsencode(first), os.fsencode(second)
    if libc.renameat2(at_cwd, first_b, at_cwd, second_b, _RENAME_EXCHANGE) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number), str(second))


def swap_in(root: Path, staging: Path) -> None:
    """Show ``staging`` as ``site``, in one step. What ``site`` showed before is kept, for a
    reader that was reading it (``PREVIOUS`` names it); ``tidy`` deletes the one before that."""
    site = root / SITE
    before = current(root)
    link = root / f".{SITE}.new-{os.getpid()}"
    link.unlink(missing_ok=True)
    link.symlink_to(staging.relative_to(root))
    if site.is_dir() and not site.is_symlink():  # a site/ from before site.builds/
        _exchange(link, site)
        shutil.rmtree(link)
    else:
        os.replace(link, site)  # atomic: the old link or the new one, never none
    if before is not None and before != staging.resolve():
        (before.parent / PREVIOUS).unlink(missing_ok=True)
        (before.parent / PREVIOUS).symlink_to(before.name)


class _Stopped:
    """A stop asked of the driver (make killed, a Ctrl-C, a closed terminal), passed on to its
    builder; the build then ends as stopped."""

    def __init__(self) -> None:
        self.by: int | None = None
        self.builder: subprocess.Popen | None = None

    def __call__(self, signum: int, frame: object) -> None:
        self.by = signum
        if self.builder is None:  # still waiting for the lock: nothing started, nothing to wait
            raise _StoppedWaiting
        with contextlib.suppress(OSError):
            self.builder.send_signal(signal.SIGTERM)


class _StoppedWaiting(Exception):
    """Stopped before the build started (while it waited for the checkout's build lock)."""


def _signal_name(number: int) -> str:
    with contextlib.suppress(ValueError):
        return signal.Signals(number).name
    return f"signal {number}"


def ended(status: int, step: str, stopped_by: int | None) -> str:
    """How a build that is not swapped in ended, in words."""
    if stopped_by is not None:
        return f"it was stopped ({_signal_name(stopped_by)}) at {step}"
    if status < 0:
        return f"the build process was ended by {_signal_name(-status)} at {step}"
    if status == 0:
        return f"the build process ended (status 0) at {step}, before it finished"
    if step == progress.FINISHED:
        return f"it failed after its last page (status {status}; its error is above)"
    return f"it failed at {step} (status {status}; its error is above)"


def build(root: Path, what: str, command: list[str]) -> int:
    """Run ``command`` into a staging folder of its own and swap it in if it finished; the
    driver's exit status."""
    stop = _Stopped()
    for number in _STOPS:
        signal.signal(number, stop)
    try:
        return _build_locked(root, what, command, stop)
    except _StoppedWaiting:
        return _say(what, f"it was stopped ({_signal_name(stop.by or 0)}) before it started")


def _build_locked(root: Path, what: str, command: list[str], stop: _Stopped) -> int:
    with contextlib.ExitStack() as lock:
        try:
            builds = lock.enter_context(build_lock.held(root, what))
        except OSError as error:  # a disk full to the last byte refuses even the lock's
            where = root / build_lock.BUILDS / build_lock.LOCK
            return _say(what, _cause(error, where, "taking the build lock"))
        tidy(root, builds)
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        staging, progress_file = builds / name, builds / f"{name}.progress"
        try:
            progress_file.write_text(progress.STARTING, encoding="utf-8")
        except OSError as error:
            return _say(what, _cause(error, progress_file, "its start"))
        env = os.environ | {SITE_DIR_ENV: str(staging), progress.PROGRESS_ENV: str(progress_file)}
        if stop.by is None:
            stop.builder = subprocess.Popen(
                command, env=env, preexec_fn=process_tree.die_with_parent
            )
            status = stop.builder.wait()
        else:
            status = -stop.by
        step = progress.step(progress_file)
        if status != 0 or step != progress.FINISHED or stop.by is not None:
            for stray in root.glob(MIKE_LEFTOVERS):
                stray.unlink(missing_ok=True)
            shutil.rmtree(staging, ignore_errors=True)
            progress_file.unlink(missing_ok=True)
            return _say(what, ended(status, step, stop.by))
        try:
            swap_in(root, staging)
        except OSError as error:
            shutil.rmtree(staging, ignore_errors=True)
            return _say(what, _cause(error, root / SITE, "the swap into site/"))
        finally:
            progress_file.unlink(missing_ok=True)
        print(f"{what}: site/ is now this build ({staging.relative_to(root)})", file=sys.stderr)
        return 0


def _cause(error: OSError, path: Path, step: str) -> str:
    if disk_space.full(error):
        return disk_space.said(disk_space.filename_of(error, path), step)
    return f"{type(error).__name__} while {step}: {error}"


def _say(what: str, why: str) -> int:
    print(f"{what}: {why}; {KEPT}", file=sys.stderr, flush=True)
    return 1


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        raise SystemExit('usage: python -m build_support.site_swap "make build" -- COMMAND...')
    process_tree.die_with_parent()  # make ended: stopped, as by a Ctrl-C
    return build(Path.cwd(), argv[0], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
