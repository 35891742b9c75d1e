"""``site/`` is always one whole build, whatever runs beside it or is killed when
(build_support/site_swap.py, build_lock.py).

Most builds here are a stand-in builder (a few files written into the staging folder, its
progress noted as MkDocs' hooks note it), driven by the very module ``make build`` runs: what is
tested is the staging, the lock and the swap, a tenth of a second a build. One test runs two
real ``make build``s of a one-page copy at once.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from build_support import build_lock, progress, site_swap
from build_support.build_command import BUILD_ENV, CACHE_DIR_ENV
from testkit.author import author_env
from testkit.project import ROOT
from testkit.serving import fetch_text, mkdocs_serve, wait_for_text
from testkit.small_site import ONE_PAGE_CONFIG, page_with
from testkit.stand_in_build import BUILDER, FILES, start


def whole(root: Path) -> str | None:
    """The name of the one build ``site/`` shows; None where it shows no whole build."""
    try:  # the folder opened once, as a reader holds it: one read by name per file may meet two
        folder = os.open(root / "site", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        files = os.listdir(folder)
        names = set()
        opener = functools.partial(os.open, dir_fd=folder)
        for name in files:
            with open(name, encoding="utf-8", opener=opener) as f:
                names.add(f.read())
    except OSError:
        return None
    finally:
        os.close(folder)
    return names.pop() if len(names) == 1 and len(files) == FILES else None


def holds(root: Path, build: subprocess.Popen) -> None:
    """Until ``build`` holds the checkout's build lock (it writes its process id in it)."""
    lock = root / "site.builds" / "lock"
    until = time.monotonic() + 30
    while f'"pid": {build.pid}' not in (lock.read_text() if lock.exists() else ""):
        assert time.monotonic() < until and build.poll() is None, build.communicate()
        time.sleep(0.01)


def kept(root: Path) -> int:
    """How many builds ``site.builds/`` holds; no progress file nor staging is left over."""
    builds = root / "site.builds"
    assert not list(builds.glob("*.progress"))
    assert (root / "site").is_dir() and not (root / "site").is_symlink()
    return 1 + sum(1 for path in builds.iterdir() if path.is_dir() and not path.is_symlink())


def whole_why(root: Path) -> object:
    try:
        return sorted((p.name, p.read_text(encoding="utf-8")) for p in (root / "site").iterdir())
    except OSError as error:
        return repr(error)


class Watch(threading.Thread):
    """Looks at ``site/`` without pause while builds run: every look must find a whole build."""

    def __init__(self, root: Path) -> None:
        super().__init__(daemon=True)
        self.root, self.looks, self.broken, self.done = root, 0, [], False

    def run(self) -> None:
        while not self.done:
            self.looks += 1
            if whole(self.root) is None:
                self.broken.append(whole_why(self.root))

    def stop(self) -> None:
        self.done = True
        self.join()


@pytest.fixture
def checkout(tmp_path) -> Path:
    first = start(tmp_path, "first")
    assert first.communicate() and first.returncode == 0
    return tmp_path


def test_the_first_build_keeps_no_build_before_it_and_says_so(tmp_path):
    """With no site/ yet, the build is renamed into place: nothing is kept as the one before,
    no dangling ``previous`` link, and the line names no build that does not exist."""
    first = start(tmp_path, "first")
    said = first.communicate()[1]
    assert first.returncode == 0 and whole(tmp_path) == "first", said
    assert said.strip().endswith("site/ is now this build"), said
    assert not (tmp_path / "site.builds" / "previous").is_symlink()
    second = start(tmp_path, "second")
    said = second.communicate()[1]
    before = re.search(r"the one before it: (site\.builds/\S+)\)", said)
    assert before and whole(tmp_path) == "second", said
    assert (tmp_path / before[1] / "p0.html").read_text(encoding="utf-8") == "first"


def test_two_builds_at_once_take_turns_and_site_is_always_whole(checkout):
    watch = Watch(checkout)
    watch.start()
    for round_ in range(10):
        gate = checkout.parent / f"gate{round_}"
        first = start(checkout, f"a{round_}", gate=gate)
        holds(checkout, first)
        second = start(checkout, f"b{round_}")
        said_second = second.stderr.readline()  # once it waits
        gate.touch()  # the first may finish now
        said_second += second.communicate()[1]
        said_first = first.communicate()[1]
        assert (first.returncode, second.returncode) == (0, 0), said_first + said_second
        assert "site/ is now this build" in said_first and "site/ is now this build" in said_second
        waited = re.search(r"waiting for the other build of this checkout \((.*)\)", said_second)
        assert waited, said_second
        assert waited[1].startswith(f"build a{round_}, process {first.pid}, started at ")
        assert whole(checkout) == f"b{round_}"
        assert kept(checkout) <= 3  # shown, shown before, and before that (for their readers)
    watch.stop()
    assert watch.looks > 100 and watch.broken == []


@pytest.mark.parametrize("at", [0.05, 0.25, 0.35, 0.45])
def test_a_build_killed_at_any_moment_leaves_a_whole_site(checkout, at):
    """Killed at once (SIGKILL, the driver and its builder) at a moment of the build; the
    builder's last file comes at about 0.24 s, and the swap follows."""
    build = start(checkout, "killed")
    time.sleep(at)
    os.kill(build.pid, signal.SIGKILL)
    build.communicate()
    assert whole(checkout) in {"first", "killed"}
    after = start(checkout, "after")
    after.communicate()
    assert after.returncode == 0 and whole(checkout) == "after"
    assert kept(checkout) <= 3


def test_a_build_whose_make_is_killed_stops_and_says_so(checkout):
    """``kill -9`` of make alone: the driver is told (it dies with its parent), stops its
    builder, and says in which step; site/ stays."""
    parent = subprocess.Popen(
        [
            "sh",
            "-c",
            'exec "$0" -c "import subprocess, sys; subprocess.run(sys.argv[1:])" "$@"',
            sys.executable,
            sys.executable,
            "-m",
            "build_support.site_swap",
            "make build",
            "--",
            sys.executable,
            "-c",
            BUILDER.format(files=FILES),
            "stopped",
            "1",
        ],
        cwd=checkout,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(Path(site_swap.__file__).parents[1])},
    )
    # Killed once the builder is at a page (a fixed wait let a loaded machine kill it first).
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        noted = [progress.step(path) for path in (checkout / "site.builds").glob("*.progress")]
        if any(text.startswith("page p") for text in noted):
            break
        time.sleep(0.05)
    parent.kill()
    said = parent.communicate()[1]
    for _ in range(50):
        if not any((checkout / "site.builds").glob("*.progress")):
            break
        time.sleep(0.1)
    assert "make build: it was stopped (SIGTERM) at page p" in said
    assert said.rstrip().endswith("site/ is left as it was")
    assert whole(checkout) == "first"


@pytest.mark.parametrize(
    ("more", "expected"),
    [
        (
            ("page p3.md, block 'b3'", "1"),
            "it failed at page p3.md, block 'b3' (status 1; its error is above)",
        ),
        (("finished", "1"), "it failed after its last page (status 1; its error is above)"),
        (
            ("the wheel", "0"),
            "the build process ended (status 0) at the wheel, before it finished",
        ),
    ],
)
def test_each_way_a_build_ends_says_its_step_and_that_site_is_kept(checkout, more, expected):
    build = start(checkout, "failing", 0.0, *more)
    said = build.communicate()[1]
    assert build.returncode == 1
    assert said.strip().splitlines()[-1] == f"build failing: {expected}; site/ is left as it was"
    assert "before the build finished" not in said or more[0] == "the wheel"
    assert whole(checkout) == "first"


def test_a_site_link_from_before_is_exchanged_for_a_folder_in_one_step(tmp_path):
    """``site`` a link into ``site.builds/`` (this module's layout before): the new build takes
    its place as a plain folder; the build it showed is kept, for its readers."""
    shown = tmp_path / "site.builds" / "20260101-000000-1"
    shown.mkdir(parents=True)
    for n in range(FILES):
        (shown / f"p{n}.html").write_text("old", encoding="utf-8")
    (tmp_path / "site").symlink_to(shown.relative_to(tmp_path))
    (tmp_path / "site.previous").mkdir()  # left by the shell swap of older Makefiles
    build = start(tmp_path, "new")
    build.communicate()
    assert build.returncode == 0
    assert not (tmp_path / "site").is_symlink() and whole(tmp_path) == "new"
    assert (tmp_path / "site.builds" / "previous").resolve() == shown and shown.is_dir()
    assert not (tmp_path / "site.previous").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("site")) == []


def test_progress_names_the_step(tmp_path):
    noted = tmp_path / "progress"
    assert progress.step(noted) == progress.STARTING  # none written yet
    noted.write_text("page index.md, block 'blk'")
    assert progress.step(noted) == "page index.md, block 'blk'"


def test_two_make_builds_of_one_checkout_at_once(tmp_path):
    """Two ``make build``s of a one-page copy, the second started while the first runs a block
    (which waits for the test's gate): both succeed, the second says it waited and for whom;
    site/ is whole, the last build's (the second reuses the first's output from the cache)."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(ONE_PAGE_CONFIG)
    shutil.copy2(ROOT / "Makefile", tmp_path / "Makefile")
    for name in (".venv", "node_modules"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = author_env() | BUILD_ENV | {CACHE_DIR_ENV: str(tmp_path / "cache")}
    command = ["make", "-s", "-o", ".venv/.synced", "-o", "node_modules/.installed", "build"]

    def make() -> subprocess.Popen:
        return subprocess.Popen(
            command,
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    lock = tmp_path / "site.builds" / "lock"
    for round_ in range(2):
        gate = tmp_path / f"gate{round_}"
        code = f"import os, time\nwhile not os.path.exists({str(gate)!r}):\n    time.sleep(0.05)"
        (tmp_path / "docs" / "index.md").write_text(page_with(code + f"\nprint('round {round_}')"))
        before = lock.read_text() if lock.exists() else ""  # the last holder's, left in it
        first = make()
        until = time.monotonic() + 60
        while (lock.read_text() if lock.exists() else "") in (before, ""):  # until it holds it
            assert time.monotonic() < until and first.poll() is None, first.communicate()
            time.sleep(0.02)
        holder = json.loads(lock.read_text())["pid"]
        second = make()
        said_second = ""
        while "waiting for" not in said_second and (line := second.stderr.readline()):
            said_second += line
        gate.touch()  # the first build's block may end now
        said_second += second.communicate()[1]
        said_first = first.communicate()[1]
        assert (first.returncode, second.returncode) == (0, 0), said_first + said_second
        assert (
            "make build: waiting for the other build of this checkout "
            f"(make build, process {holder}, " in said_second
        )
        assert f"round {round_}" in (tmp_path / "site" / "index.html").read_text()
        assert (tmp_path / "site" / "404.html").exists() and (tmp_path / "site" / "assets").is_dir()


def test_a_serve_rebuild_takes_the_same_lock(tmp_path):
    """While another build of the checkout holds the lock, ``make serve``'s rebuild waits, says
    for whom, and the last whole build answers meanwhile; then it rebuilds."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(ONE_PAGE_CONFIG)
    (tmp_path / "docs" / "index.md").write_text(page_with("print('first')"))
    log = tmp_path / "serve.log"
    with mkdocs_serve(tmp_path, {CACHE_DIR_ENV: str(tmp_path / "cache")}, log) as (_, url):
        with build_lock.held(tmp_path, "a test's build"):
            (tmp_path / "docs" / "index.md").write_text(page_with("print('second')"))
            waiting = (
                "make serve's rebuild: waiting for the other build of this checkout "
                f"(a test's build, process {os.getpid()}, started at "
            )
            until = time.monotonic() + 60
            while waiting not in log.read_text():
                assert time.monotonic() < until, log.read_text()
                time.sleep(0.1)
            assert "first" in fetch_text(url)
        assert "second" in wait_for_text(url, "second", timeout_s=60)


SWAP_FOREVER = """\
import pathlib, shutil, sys
from build_support import site_swap
root = pathlib.Path(sys.argv[1])
swapped = False
while True:
    for name in ("a", "b"):
        staging = root / "site.builds" / name
        if not staging.exists():
            shutil.copytree(root / "template", staging)
            (staging / "p0.html").write_text(name)
            for path in staging.iterdir():
                path.write_text(name)
        site_swap.swap_in(root, staging)
        site_swap.tidy(root, root / "site.builds")  # deletes the one before the previous
        if not swapped:
            swapped = True
            print("swapping", flush=True)  # from now on, a kill falls inside the loop
"""


def test_a_kill_during_the_swap_leaves_a_whole_site(checkout):
    """The swap alone, over and over, killed (SIGKILL) at 30 moments: each time site/ is a
    whole build."""
    shutil.copytree(checkout / "site", checkout / "template")
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    for attempt in range(30):
        swapping = subprocess.Popen(
            [sys.executable, "-c", SWAP_FOREVER, str(checkout)], env=env, stdout=subprocess.PIPE
        )
        assert swapping.stdout.readline() == b"swapping\n"  # its imports done, however slow
        time.sleep(attempt * 0.013)  # then a kill at 30 moments of the loop
        swapping.kill()
        swapping.wait()
        swapping.stdout.close()
        assert whole(checkout) in {"first", "a", "b"}, sorted(os.listdir(checkout))
        swaps = len(list((checkout / "site.builds").iterdir()))
        assert swaps >= 3, "the loop never swapped"  # lock, previous and a build at least
    site_swap.tidy(checkout, checkout / "site.builds")
    assert not list(checkout.glob(".site.new-*"))  # links left by killed swaps, deleted


def test_a_builder_killed_in_a_block_is_said_with_its_page_and_block(tmp_path):
    """MkDocs itself killed (SIGKILL) while a block runs: the driver says so, naming the page and
    the block from the build's own progress notes; site/ is left as it was."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(ONE_PAGE_CONFIG)
    started = tmp_path / "started"
    code = f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\ntime.sleep(120)"
    (tmp_path / "docs" / "index.md").write_text(page_with(code))
    env = os.environ | BUILD_ENV | {CACHE_DIR_ENV: str(tmp_path / "cache")}
    builder = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml"]
    command = [sys.executable, "-m", "build_support.site_swap", "make build", "--", *builder]
    driver = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    until = time.monotonic() + 120
    while not started.exists():
        assert driver.poll() is None and time.monotonic() < until, driver.communicate()[1]
        time.sleep(0.1)
    import psutil

    psutil.Process(driver.pid).children()[0].kill()  # the builder, MkDocs
    said = driver.communicate()[1]
    assert driver.returncode == 1
    last = said.strip().splitlines()[-1]
    assert last == (
        "make build: the build process was ended by SIGKILL at page index.md, block 'blk'; "
        "site/ is left as it was"
    ), said
    assert not (tmp_path / "site").exists()  # there was none: there is none


def test_a_build_stopped_while_it_waits_ends_at_once_and_says_so(checkout):
    with build_lock.held(checkout, "a test's build"):
        waiting = start(checkout, "waiting")
        said = waiting.stderr.readline()  # said once it waits (its signal handlers are set)
        assert "build waiting: waiting for the other build of this checkout (a test's" in said
        waiting.send_signal(signal.SIGTERM)
        said = waiting.communicate(timeout=10)[1]
    assert waiting.returncode == 1
    expected = "build waiting: it was stopped (SIGTERM) before it started; site/ is left as it was"
    assert said.strip().splitlines()[-1] == expected
    assert whole(checkout) == "first"
