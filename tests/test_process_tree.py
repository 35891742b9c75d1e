"""Nothing a block starts outlives its build (build_support/process_tree.py): a worker
whose build process is killed while a block runs ends itself, and processes a block detaches
from its worker's group (``setsid``, a daemon's double fork) are ended with its session, or
with the worker when the build is killed. Each block writes the ids of the processes it
started; the test checks each is gone.

One-page sites that load the project's execution hook, as in test_block_guard.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from build_support import process_tree
from build_support.build_command import BUILD_ENV, CACHE_DIR_ENV, FRESH_ENV, build_command
from testkit.small_site import site_config

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="prctl and /proc are Linux's")

CONFIG = site_config("process tree test")

# A process in a session of its own (setsid), and a daemon's double fork: both leave the group.
DETACH = """\
import os, subprocess, pathlib, time
pids = pathlib.Path({pids!r})
detached = subprocess.Popen(["setsid", "sleep", "600"])
read, write = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(write, str(os.getpid()).encode())
        time.sleep(600)
    os._exit(0)
daemon = os.read(read, 32).decode()
pids.write_text(f"{{os.getpid()}} {{detached.pid}} {{daemon}}")
"""


def gone(pid: int) -> bool:
    """No such process, or only its exit status left (a zombie nobody has reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def wait_gone(pids: list[int], seconds: float = 10.0) -> list[int]:
    """The pids still running after ``seconds``."""
    until = time.monotonic() + seconds
    while time.monotonic() < until and not all(gone(pid) for pid in pids):
        time.sleep(0.1)
    return [pid for pid in pids if not gone(pid)]


def end(pids: list[int]) -> None:
    """What a failed test left running, ended."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def start_build(site: Path, code: str, config: str = CONFIG) -> subprocess.Popen:
    (site / "docs").mkdir(exist_ok=True)
    (site / "mkdocs.yml").write_text(config)
    fence = f'```python exec="on" id="blk"\n{code}\n```\n'
    (site / "docs" / "index.md").write_text(f"# A page\n\n{fence}")
    env = os.environ | BUILD_ENV | {CACHE_DIR_ENV: str(site / "cache"), FRESH_ENV: "1"}
    command = build_command(site / "mkdocs.yml", site / "site")
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def wait_for(path: Path, build: subprocess.Popen, seconds: float = 120.0) -> list[int]:
    until = time.monotonic() + seconds
    while time.monotonic() < until and build.poll() is None:
        if path.exists() and len(path.read_text().split()) >= 3:
            return [int(pid) for pid in path.read_text().split()]
        time.sleep(0.1)
    build.kill()
    raise AssertionError(f"the block never wrote its pids:\n{build.communicate()[0].decode()}")


def test_descendants_are_found_below_a_process():
    sleeper = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"])
    try:
        time.sleep(0.3)
        assert len(process_tree.descendants(sleeper.pid)) == 2
        process_tree.end_tree(sleeper.pid, group=False)
        sleeper.wait(timeout=5)
    finally:
        sleeper.kill()


def test_a_worker_ends_itself_and_all_below_it_when_its_build_is_killed(tmp_path):
    pids = tmp_path / "pids"
    build = start_build(tmp_path, DETACH.format(pids=str(pids)) + "time.sleep(150)\n")
    started = wait_for(pids, build)
    build.send_signal(signal.SIGKILL)  # the build's own process: no atexit, no clean-up
    build.communicate()
    left = wait_gone(started)
    end(left)
    assert left == [], f"still running after the build was killed: {started}"


def test_what_a_block_detaches_is_ended_with_its_session(tmp_path):
    pids = tmp_path / "pids"
    build = start_build(tmp_path, DETACH.format(pids=str(pids)) + "print('done')\n")
    output = build.communicate(timeout=300)[0].decode()
    assert build.returncode == 0, output
    started = [int(pid) for pid in pids.read_text().split()]
    left = wait_gone(started, 5)
    end(left)
    assert left == [], f"outlived the build: {started}"


HUNGRY_DETACHED = """\
import subprocess, sys, time
hungry = "import time; x = bytearray(1536 * 2**20); time.sleep(600)"
# A daemon's way: a shell in a session of its own starts it in the background, and ends.
detach = f"{{sys.executable}} -c '{{hungry}}' >/dev/null & echo $! > {pids}"
subprocess.run(["setsid", "sh", "-c", detach], check=True)
time.sleep(60)
"""


def test_memory_a_block_detaches_counts_against_its_cap(tmp_path):
    """A grandchild in a session of its own, its parent gone, allocating 1.5 GiB, past the site's
    1 GiB cap: the block fails on it, and it is ended with the worker."""
    pids = tmp_path / "pids"
    config = site_config("process tree test", "memory_limit_gib: 1")
    build = start_build(tmp_path, HUNGRY_DETACHED.format(pids=str(pids)), config)
    output = build.communicate(timeout=300)[0].decode()
    started = [int(pids.read_text())] if pids.exists() else []
    left = wait_gone(started, 5)
    end(left)  # never a 1.5 GiB process left behind by a failing test
    assert build.returncode == 1, output
    assert "past its memory cap of 1 GiB" in output, output
    assert started and left == []
