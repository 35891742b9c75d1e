"""``make build`` and ``make publish`` (and ``mkdocs build`` run directly: ``hooks/site_safety.py``
re-runs it through here): a build staged in a folder of its own, then swapped into ``site/`` in
one step, so that at every instant ``site/`` is one whole build, the old or the new, whatever is
killed when.

    python -m build_support.site_swap [--root DIR] "make build" -- BUILDER-COMMAND...

``site/`` is a plain folder, so that ``cp -r``, ``cp -a``, ``rsync -a site dest``, ``tar`` and
``zip`` copy the site itself, and a server given its path serves the newest build. Each build,
holding the checkout's build lock (``build_lock.py``: a second build waits, saying for whom),
writes into a new ``site.builds/<build>/`` with its own progress file (``progress.py``);
only a build whose command succeeded and whose progress says finished is swapped in: the two
folders exchanged in one step (Linux's ``renameat2(RENAME_EXCHANGE)``, macOS's
``renamex_np(RENAME_SWAP)``). The build shown before then lives at ``site.builds/<build>/`` and is
kept until the build after next, so that a reader holding it (a server started inside ``site/``,
a copy under way) finishes: readers hold a folder, not its name. A ``site`` that is a link into
``site.builds/`` (as earlier versions of this module left it) is exchanged the same way.

Where neither call exists, or the file system refuses it (``EINVAL``, ``ENOSYS``, ``ENOTSUP``),
the swap is two renames: ``site/`` is moved aside, then the new build renamed in. For that
moment ``site/`` is missing (a server answers 404), and a kill in it leaves the build aside,
which the next build puts back before anything else.

A build killed at any moment leaves ``site/`` as it was; what it left in ``site.builds/`` is
deleted by the next build. The driver dies with ``make`` (``process_tree.die_with_parent``), and
its builder with the driver: a ``kill`` of make alone leaves no MkDocs building. Every way
a build ends is said in one line: the step it was in (a page, a block, the wheel, the swap) and
whether ``site/`` changed. A strict build's failure is said as a failure, not as a crash.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import build_lock, disk_space, process_tree, progress
from .process_tree import signal_name

SITE = "site"
SITE_DIR_ENV = "COURSE_SITE_DIR"  # mkdocs.yml's site_dir reads it; mike has no option for it
LEFT_BY_OLDER_MAKEFILES = ("site.building", "site.building.progress", "site.previous")
MIKE_LEFTOVERS = "mike-mkdocs*.yml"  # mike's temporary configuration, left by a killed mike
KEPT = "site/ is left as it was"
PREVIOUS = "previous"  # in site.builds/: a link to the folder holding the build shown before
ASIDE = ".aside"  # the two-rename swap's site/, moved aside for a moment
_RENAME_EXCHANGE = 2  # Linux, linux/fs.h
_RENAME_SWAP = 2  # macOS, sys/stdio.h
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EXDEV}
_STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _previous(builds: Path) -> str | None:
    """The name of the folder in ``builds`` that holds the build shown before this one."""
    with contextlib.suppress(OSError):
        return os.readlink(builds / PREVIOUS)
    return None


def tidy(root: Path, builds: Path) -> None:
    """Under the lock: what ended builds left (their folders and progress files, mike's
    temporary configurations, the staging folders of older Makefiles), deleted; a ``site/``
    that a killed two-rename swap left aside, put back."""
    site = root / SITE
    asides = sorted(builds.glob(f"*{ASIDE}"))
    if asides and not os.path.lexists(site):
        os.rename(asides[-1], site)
    kept = {build_lock.LOCK, PREVIOUS, _previous(builds)}  # the lock, and the build shown before
    if site.is_symlink():  # as earlier versions left it: the build shown is in site.builds/
        kept.add(os.path.basename(os.readlink(site)))
    for path in builds.iterdir():
        if path.name in kept:
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
        stray.unlink(missing_ok=True)  # .site.new-*: a link an older swap was killed before moving


def _exchange(first: Path, second: Path) -> None:
    """Swap two paths in one step; OSError (``ENOSYS`` where the system has no such call)."""
    libc = ctypes.CDLL(None, use_errno=True)
    first_b, second_b = os.fsencode(first), os.fsencode(second)
    if hasattr(libc, "renameat2"):  # Linux (glibc 2.28, musl 1.2.2 and later)
        at_cwd = -100  # AT_FDCWD
        failed = libc.renameat2(at_cwd, first_b, at_cwd, second_b, _RENAME_EXCHANGE) != 0
    elif hasattr(libc, "renamex_np"):  # macOS 10.12 and later
        failed = libc.renamex_np(first_b, second_b, _RENAME_SWAP) != 0
    else:
        raise OSError(errno.ENOSYS, "no call that swaps two paths in one step", str(second))
    if failed:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number), str(second))


def _swap(new: Path, site: Path) -> None:
    """``new`` at ``site``, and what ``site`` was at ``new``: in one step where the system can."""
    try:
        _exchange(new, site)
    except OSError as error:
        if error.errno not in _NO_EXCHANGE:
            raise
        aside = new.with_name(new.name + ASIDE)
        os.rename(site, aside)  # from here to the next rename, there is no site/
        os.rename(new, site)
        os.rename(aside, new)


def swap_in(root: Path, staging: Path) -> Path | None:
    """Show ``staging`` as ``site/``, in one step; where the build shown before now is (None:
    none was shown). That build is kept for a reader that holds it (``PREVIOUS`` names it);
    ``tidy`` deletes the one before that."""
    site, builds = root / SITE, staging.parent
    if not (site.is_symlink() or site.exists()):  # the first build: nothing to keep
        (builds / PREVIOUS).unlink(missing_ok=True)
        os.rename(staging, site)
        return None
    # site a link to site.builds/<build>/ (as earlier versions left it): that build stays there
    before = builds / os.path.basename(os.readlink(site)) if site.is_symlink() else staging
    link = builds / f".{PREVIOUS}.new"
    link.unlink(missing_ok=True)
    link.symlink_to(before.name)
    os.replace(link, builds / PREVIOUS)  # named before the swap: a kill between keeps both
    _swap(staging, site)
    if staging.is_symlink():
        staging.unlink()
    return before


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


def ended(status: int, step: str, stopped_by: int | None) -> str:
    """How a build that is not swapped in ended, in words."""
    if stopped_by is not None:
        return f"it was stopped ({signal_name(stopped_by)}) at {step}"
    if status < 0:
        return f"the build process was ended by {signal_name(-status)} at {step}"
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
        return _say(what, f"it was stopped ({signal_name(stop.by or 0)}) before it started")


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
            before = swap_in(root, staging)
        except OSError as error:
            shutil.rmtree(staging, ignore_errors=True)
            return _say(what, _cause(error, root / SITE, "the swap into site/"))
        finally:
            progress_file.unlink(missing_ok=True)
        kept = f" (the one before it: {before.relative_to(root)})" if before else ""
        print(f"{what}: site/ is now this build{kept}", file=sys.stderr)
        return 0


def _cause(error: OSError, path: Path, step: str) -> str:
    if disk_space.full(error):
        return disk_space.no_space_line(disk_space.filename_of(error, path), step)
    return f"{type(error).__name__} while {step}: {error}"


def _say(what: str, why: str) -> int:
    print(f"{what}: {why}; {KEPT}", file=sys.stderr, flush=True)
    return 1


def reenter(root: Path, what: str, command: list[str]) -> None:
    """This process replaced by the driver running ``command`` (this process's own command line,
    run again: ``hooks/site_safety.py``); the driver imports ``build_support`` from beside the
    hooks, whatever the folder it is started in."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    here = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, (here, os.environ.get("PYTHONPATH"))))
    driver = [sys.executable, "-m", "build_support.site_swap", "--root", str(root), what]
    os.execve(sys.executable, [*driver, "--", *command], os.environ | {"PYTHONPATH": path})


def main(argv: list[str]) -> int:
    root = Path.cwd()
    if argv[:1] == ["--root"] and len(argv) > 1:
        root, argv = Path(argv[1]), argv[2:]
    if len(argv) < 3 or argv[1] != "--":
        raise SystemExit(
            'usage: python -m build_support.site_swap [--root DIR] "make build" -- COMMAND...'
        )
    process_tree.die_with_parent()  # make ended: stopped, as by a Ctrl-C
    return build(root, argv[0], argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
