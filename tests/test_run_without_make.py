"""A build or a serve run without ``make`` is as safe as one run with it (hooks/site_safety.py):
``mkdocs build`` and ``properdocs build`` run directly take the checkout's build lock, stage and
swap as ``make build`` does; ``mike deploy`` run directly is refused in one line; ``mkdocs
serve`` watches ``examples/`` and ``hooks/``; a SIGTERM leaves nothing in ``TMPDIR``.

Each runs the real command in a one-page copy whose hooks are the checkout's
(``testkit.small_site.ONE_PAGE_CONFIG``, with ``hooks/site_safety.py`` first and
``mkdocs.yml``'s own ``watch`` list).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from build_support import build_lock
from build_support.build_command import BUILD_ENV, CACHE_DIR_ENV
from testkit.author import author_env
from testkit.project import ROOT
from testkit.serving import LOCAL_HOST, answering, fetch_text, free_port, mkdocs_serve
from testkit.small_site import ONE_PAGE_CONFIG, hook, page_with

BIN = Path(sys.executable).parent
SAFETY_HOOK = f"hooks:\n  - {hook('site_safety')}\n"


def watch_list() -> str:
    """mkdocs.yml's own ``watch:`` block, as written there (none: empty)."""
    found = re.search(
        r"^watch:\n(?:  .*\n)+", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M
    )
    return found[0] if found else ""


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    for folder in ("docs", "examples", "hooks", "tmp"):
        (root / folder).mkdir(parents=True)
    config = ONE_PAGE_CONFIG.replace("hooks:\n", SAFETY_HOOK, 1)
    (root / "mkdocs.yml").write_text(config + watch_list(), encoding="utf-8")
    write_page(root, "print('round 0')")
    return root


def write_page(root: Path, code: str) -> None:
    (root / "docs" / "index.md").write_text(page_with(code), encoding="utf-8")


def env_of(root: Path) -> dict[str, str]:
    """The build's switches, a cache of the copy's own, and a TMPDIR of its own."""
    private = {CACHE_DIR_ENV: str(root / "cache"), "TMPDIR": str(root / "tmp")}
    return os.environ | BUILD_ENV | private


def run(root: Path, *command: str) -> subprocess.Popen:
    return subprocess.Popen(command, cwd=root, env=env_of(root), stderr=subprocess.PIPE, text=True)


def index(root: Path) -> str | None:
    try:
        return (root / "site" / "index.html").read_text(encoding="utf-8")
    except OSError:
        return None


def waited_for(process: subprocess.Popen, text: str) -> str:
    """What ``process`` wrote on stderr up to the line holding ``text`` (all of it, if none)."""
    said = ""
    while text not in said and (line := process.stderr.readline()):
        said += line
    return said


def test_mkdocs_build_run_directly_leaves_site_whole_while_it_builds(project):
    """A direct ``mkdocs build`` used to empty ``site/`` first and write it page by page: a
    server polling it met 404s. Now every look at ``site/`` during the build finds the last
    whole build, and the new one once it finished."""
    first = run(project, sys.executable, "-m", "mkdocs", "build", "--strict")
    said = first.communicate()[1]
    assert first.returncode == 0 and "round 0" in index(project), said
    started, gate = project / "started", project / "gate"
    write_page(
        project,
        "import os, pathlib, time\n"
        f"pathlib.Path({str(started)!r}).touch()\n"
        f"while not os.path.exists({str(gate)!r}):\n    time.sleep(0.05)\n"
        "print('round 1')",
    )
    second = run(project, str(BIN / "mkdocs"), "build", "--strict")
    looks = []
    while not started.exists():
        assert second.poll() is None, second.communicate()[1]
        looks.append(index(project))
        time.sleep(0.01)
    for _ in range(50):  # and while its block runs
        looks.append(index(project))
        time.sleep(0.01)
    gate.touch()
    said = second.communicate()[1]
    assert second.returncode == 0, said
    assert looks and all(look is not None and "round 0" in look for look in looks)
    assert said.strip().splitlines()[-1].startswith("mkdocs build: site/ is now this build")
    assert "round 1" in index(project)
    assert (project / "site").is_dir() and not (project / "site").is_symlink()


@pytest.mark.parametrize("builder", ["mkdocs", "properdocs"])
def test_a_build_run_directly_takes_the_checkouts_build_lock(project, builder):
    """While another build of the checkout runs, a direct build waits for it, saying for whom,
    as ``make build`` does; then builds."""
    with build_lock.held(project, "a test's build"):
        build = run(project, str(BIN / builder), "build", "--strict")
        said = waited_for(build, "waiting for the other build")
        assert (
            f"{builder} build: waiting for the other build of this checkout "
            f"(a test's build, process {os.getpid()}, started at "
        ) in said, said + build.communicate()[1]
    said += build.communicate()[1]
    assert build.returncode == 0, said
    assert "round 0" in index(project)


def test_mike_deploy_run_directly_is_refused_in_one_line(project):
    """``mike deploy`` run directly would build into ``site/`` in place and deploy a build that
    ``make publish`` would not (not fresh, aliases unchecked): refused, naming what to run."""
    env = author_env() | {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    git = ["git", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=project, env=env, check=True)
    subprocess.run([*git, "add", "mkdocs.yml", "docs"], cwd=project, env=env, check=True)
    subprocess.run([*git, "commit", "-qm", "page"], cwd=project, env=env, check=True)
    mike = subprocess.run(
        [str(BIN / "mike"), "deploy", "v1"],
        cwd=project,
        env=env_of(project) | env,
        capture_output=True,
        text=True,
    )
    assert mike.returncode != 0
    refused = "mike deploy: run `make publish` (it runs mike itself, fresh and locked); "
    [said] = mike.stderr.strip().splitlines()  # one line
    assert said.endswith(f"{refused}site/ is left as it was"), said
    assert not (project / "site").exists()
    branches = subprocess.run(
        ["git", "branch", "--list", "gh-pages"], cwd=project, capture_output=True, text=True
    )
    assert branches.stdout.strip() == ""


def rebuilds(log: Path) -> tuple[int, int]:
    """How many rebuilds ``mkdocs serve`` started, and how many it finished."""
    said = log.read_text(encoding="utf-8")
    return said.count("Detected file changes"), said.count("Reloading browsers")


def test_mkdocs_serve_run_directly_rebuilds_on_edits_to_examples_and_hooks(project, tmp_path):
    log = tmp_path / "serve.log"
    env = {CACHE_DIR_ENV: str(project / "cache"), "TMPDIR": str(project / "tmp")}
    with mkdocs_serve(project, env, log):  # no --watch given, as MkDocs' users run it
        for edited in ("examples/probe.py", "hooks/probe.py"):
            started, _ = rebuilds(log)
            until = time.monotonic() + 60
            edits = 0
            # Edited again until a rebuild starts: the watcher's first look at the folder may
            # come after the first edit, and take it for how the folder was.
            while rebuilds(log)[0] == started:
                assert time.monotonic() < until, log.read_text(encoding="utf-8")
                edits += 1
                (project / edited).write_text(f"EDITS = {edits}\n", encoding="utf-8")
                time.sleep(0.5)
            while len(set(rebuilds(log))) > 1:  # the rebuild ends before the next edit
                assert time.monotonic() < until, log.read_text(encoding="utf-8")
                time.sleep(0.1)


def serve_until_answering(command: list[str], root: Path, port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        command, cwd=root, env=env_of(root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    until = time.monotonic() + 240
    while not answering(port):
        assert server.poll() is None, server.communicate()[1]
        assert time.monotonic() < until, "it did not start answering"
        time.sleep(0.2)
    assert "round 0" in fetch_text(f"http://{LOCAL_HOST}:{port}/")
    return server


def make_serve(root: Path, port: int) -> list[str]:
    shutil.copy2(ROOT / "Makefile", root / "Makefile")
    for name in (".venv", "node_modules"):
        (root / name).symlink_to(ROOT / name)
    return [
        "make",
        "-s",
        "-o",
        ".venv/.synced",
        "-o",
        "node_modules/.installed",
        "serve",
        f"DEV_ADDR={LOCAL_HOST}:{port}",
    ]


@pytest.mark.parametrize("how", ["mkdocs serve", "make serve"])
def test_a_serve_stopped_with_sigterm_leaves_nothing_in_tmpdir(project, how):
    """MkDocs' temporary site (``mkdocs_*``), the serve's staging and its rebuild requests
    (``course-serve-rebuilds-*``) are deleted when it is stopped by SIGTERM, as by a Ctrl-C."""
    port = free_port()
    if how == "mkdocs serve":
        command = [sys.executable, "-m", "mkdocs", "serve", "-a", f"{LOCAL_HOST}:{port}"]
    else:
        command = make_serve(project, port)
    server = serve_until_answering(command, project, port)
    write_page(project, "print('round 1')")  # a rebuild, staged beside the served folder
    until = time.monotonic() + 120
    while "round 1" not in (fetch_text(f"http://{LOCAL_HOST}:{port}/") or ""):
        assert time.monotonic() < until, "the edit never showed"
        time.sleep(0.2)
    server.send_signal(signal.SIGTERM)
    said = server.communicate(timeout=60)[1]
    assert sorted(os.listdir(project / "tmp")) == [], said


def test_a_serve_sent_sigterm_again_while_it_stops_still_ends(project):
    """``kill -TERM -PGID`` (a test's teardown, an IDE's stop button, systemd) reaches make and
    mkdocs, and make passes a SIGTERM of its own on to mkdocs: a second stop that arrived inside
    MkDocs' clean-up cut it short, leaving the server's thread running and the process hung at
    exit. Here stops keep arriving while it ends."""
    port = free_port()
    command = make_serve(project, port)
    server = subprocess.Popen(
        command,
        cwd=project,
        env=env_of(project),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    until = time.monotonic() + 240
    while not answering(port):
        assert server.poll() is None, server.communicate()[1]
        assert time.monotonic() < until, "it did not start answering"
        time.sleep(0.2)
    stops_end = time.monotonic() + 2  # stops as fast as they can be sent, for 2 s
    while server.poll() is None and time.monotonic() < stops_end:
        os.killpg(server.pid, signal.SIGTERM)
    try:
        said = server.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        raise AssertionError(f"make serve running 60 s on: {server.communicate()[1]}") from None
    assert sorted(os.listdir(project / "tmp")) == [], said


def test_a_build_run_directly_stopped_with_sigterm_leaves_nothing_in_tmpdir(project):
    started = project / "started"
    write_page(
        project,
        f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\ntime.sleep(120)",
    )
    build = run(project, str(BIN / "mkdocs"), "build", "--strict")
    until = time.monotonic() + 120
    while not started.exists():
        assert build.poll() is None and time.monotonic() < until, build.communicate()[1]
        time.sleep(0.05)
    build.send_signal(signal.SIGTERM)
    said = build.communicate(timeout=60)[1]
    assert sorted(os.listdir(project / "tmp")) == [], said
    assert said.strip().splitlines()[-1] == (
        "mkdocs build: it was stopped (SIGTERM) at page index.md, block 'blk'; "
        "site/ is left as it was"
    ), said
    assert not (project / "site").exists()


def test_a_fresh_build_makes_one_compilation_folder_however_many_threads_ask(tmp_path, monkeypatch):
    """A FRESH=1 build's JAX compilation folder, in TMPDIR, is made once and deleted at exit:
    two run-ahead threads asking at once each made one, and one of them was left behind after
    every fresh build. ``mkdtemp`` is slowed here so that the threads meet in it."""
    from build_support.caching import compile_cache
    from build_support.execution import state

    process = state.ProcessState()  # a process of its own: no FRESH=1 folder made yet
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = tempfile.mkdtemp

    def slow_mkdtemp(*args, **kwargs):
        time.sleep(0.05)
        return made(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", slow_mkdtemp)
    monkeypatch.setattr(compile_cache.atexit, "register", lambda *args: None)
    start = threading.Barrier(8)

    def ask() -> str:
        start.wait()
        return process.fresh_compile_folder()

    with ThreadPoolExecutor(8) as pool:
        folders = set(pool.map(lambda _: ask(), range(8)))
    assert len(folders) == 1 and sorted(tmp_path.iterdir()) == [Path(folders.pop())]
