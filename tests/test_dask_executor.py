"""Sessions run on a Dask cluster (``extra.build.executor``, ``EXECUTOR=tcp://...``:
build_support/cluster/client.py, on_worker.py): a ``dask scheduler`` and ``dask worker``
processes on 127.0.0.1 (one started with ``--resources GPU=1``: a CPU standing in for a GPU, for
the routing), each with a ``--local-directory`` of its own, and a small site built against them.

A cluster build shows what a local build shows, its blocks ran on the Dask workers (their
addresses and pids, in the build's log), a GPU page's only on the GPU worker and no other page's
there, and what it ran fills the store a local build then reuses. A worker whose environment
differs is refused, naming the difference; no worker, or a scheduler out of reach, silent or
lost mid-session, fails the build, naming the cause, the page and the cluster; a worker killed
mid-session costs one more run, elsewhere, and a second loss fails the block, named; a GPU page
with no cluster nor GPU fails, never runs on this CPU.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from build_support.cluster import client as cluster_client
from build_support.cluster import on_worker
from build_support.execution import plan
from build_support.settings import EXECUTOR_ENV
from testkit.build import mkdocs_build
from testkit.dask_cluster import Cluster, ran_on_cluster, started
from testkit.small_site import DATA_FILE, from_env
from testkit.small_site import write_site as write_small_site

WAIT_S = 3  # executor_wait_s in the tests' sites: a missing worker fails fast

PAGE_A = """\
# A

```python exec="on" id="alone" source="above" result="text"
print(sum(range(10)))
```

```python exec="on" session="s" id="first"
import os
shared = 6 * 7
print("first", shared)
```

```python exec="on" session="s" id="second"
print("second sees", shared)
```

```python exec="on" id="reads"
print(open("docs/data.txt").read())
```

```python exec="on" id="variables"
import os
print("XLA_FLAGS:", os.environ.get("XLA_FLAGS"))
```
"""
GPU_FRONT = "---\nexecution: {gpu: true}\n---\n"
PAGE_G = """\
# G

```python exec="on" id="on-gpu"
print("a GPU page's block")
```
"""


def write_site(root: Path, gpu_front: bool = True, pages: tuple[str, ...] = ("a", "g")) -> Path:
    """A two-page site: ``a.md`` (a block alone, a session of two), ``g.md`` (a GPU page where
    ``gpu_front``); the executor and a short wait read from the environment."""
    texts = {"a": PAGE_A, "g": (GPU_FRONT if gpu_front else "") + PAGE_G}
    chosen = {f"{page}.md": texts[page] for page in pages}
    return write_small_site(root, "dask", chosen, settings(WAIT_S), files=DATA_FILE)


def settings(wait_s: float) -> str:
    return f"{from_env('executor')}, executor_wait_s: {wait_s}"


def build(root: Path, executor: str = "", fresh: bool = True) -> subprocess.CompletedProcess:
    return mkdocs_build(
        root / "mkdocs.yml",
        root / "site",
        fresh=fresh,
        cache_dir=root / "store",
        env={EXECUTOR_ENV: executor},
        timeout=240,
    )


def blocks(root: Path, page: str) -> list[str]:
    """The executed blocks of the built page, as its HTML shows them."""
    html = (root / "site" / page / "index.html").read_text()
    return re.findall(r'<div class="exec-block".*?</div>', html, re.DOTALL)


@pytest.fixture
def cluster(tmp_path) -> Iterator[Cluster]:
    with started(tmp_path / "cluster") as cluster:
        yield cluster


# ---------------------------------------------------------------- builds on a cluster


def test_a_cluster_build_runs_each_session_on_its_workers_and_shows_what_a_local_one_does(
    tmp_path, cluster
):
    # The worker's own XLA_FLAGS (in the key) give way to the build's.
    cluster.add_worker("cpu", env={"XLA_FLAGS": "--the-workers-own"})
    cluster.add_worker("gpu", gpu=True)
    cpu, gpu = cluster.address_of("cpu"), cluster.address_of("gpu")
    local = build(write_site(tmp_path / "local", gpu_front=False))
    assert local.returncode == 0, local.stderr[-3000:]
    site = write_site(tmp_path / "site")
    result = build(site, cluster.address)
    assert result.returncode == 0, result.stderr[-3000:]

    for page in ("a", "g"):
        assert blocks(site, page) == blocks(tmp_path / "local", page)
        assert blocks(site, page)  # the blocks are there to compare
    assert "--the-workers-own" not in "".join(blocks(site, "a"))
    ran = ran_on_cluster(result.stderr)
    assert ran == {
        "a.md alone": (cpu, cluster.workers["cpu"].pid),
        "a.md first, second": (cpu, cluster.workers["cpu"].pid),
        "a.md reads": (cpu, cluster.workers["cpu"].pid),
        "a.md variables": (cpu, cluster.workers["cpu"].pid),
        "g.md on-gpu": (gpu, cluster.workers["gpu"].pid),  # the GPU page's: there alone
    }
    # The CPU worker's four sessions: each in a block worker of its own, all from one job
    # server (its warm template forks them), kept by the Dask worker from job to job.
    pids = re.findall(
        rf"on Dask worker {re.escape(cpu)} .*?block worker pid (\d+), job server pid (\d+)",
        result.stderr,
    )
    assert len(pids) == 4 and len({block for block, _ in pids}) == 4, pids
    assert len({server for _, server in pids}) == 1, pids
    # Each job's code came from the bundle, unpacked in its worker's own folder, not from
    # the checkout (which the workers' Python, this one, would import otherwise).
    for name in ("cpu", "gpu"):
        local = re.escape(str(cluster.folder / f"{name}-local"))
        bundles = rf"code from {local}/\S+/{on_worker.BUNDLES}/[0-9a-f]{{64}}\)"
        assert len(re.findall(bundles, result.stderr)) == (4 if name == "cpu" else 1)
    assert "reused" not in re.sub(r"\d+ reused", "", result.stderr)  # every block ran there

    # What the cluster ran fills the store: a build with no cluster reuses all of it, the GPU
    # page's included (run nowhere here), but for the block whose file read there (named as
    # the project's) changed since.
    (site / "docs" / "data.txt").write_text("changed")
    again = build(site, fresh=False)
    assert again.returncode == 0, again.stderr[-3000:]
    executed = re.findall(r"Executed (\S+) (\S+): (ran|reused)", again.stderr)
    assert sorted(executed) == [
        ("a.md", "alone", "reused"),
        ("a.md", "first", "reused"),
        ("a.md", "reads", "ran"),
        ("a.md", "second", "reused"),
        ("a.md", "variables", "reused"),
        ("g.md", "on-gpu", "reused"),
    ]
    assert "Executed a.md reads: ran (`docs/data.txt` changed (read by the block))" in again.stderr
    assert blocks(site, "g") == blocks(tmp_path / "local", "g")


def test_no_worker_and_a_worker_whose_environment_differs_fail_the_build_naming_why(
    tmp_path, cluster
):
    site = write_site(tmp_path / "site")
    alone = build(site, cluster.address)  # a scheduler, no worker
    assert alone.returncode != 0
    assert re.search(
        rf"page a\.md, block 'alone' failed: not run: no Dask worker without a GPU resource "
        rf"that may run it joined the cluster at {re.escape(cluster.address)} within {WAIT_S} s",
        alone.stderr,
    ), alone.stderr[-3000:]
    assert re.search(
        r"page g\.md, block 'on-gpu' failed: not run: no Dask worker with GPU=1 \(its page's "
        r"front matter asks for a GPU",
        alone.stderr,
    ), alone.stderr[-3000:]

    # A worker whose numpy differs (its metadata says 1.0.0, first on its sys.path): refused.
    fake = tmp_path / "other-numpy"
    (fake / "numpy-1.0.0.dist-info").mkdir(parents=True)
    (fake / "numpy-1.0.0.dist-info" / "METADATA").write_text("Name: numpy\nVersion: 1.0.0\n")
    cluster.add_worker("other", env={"PYTHONPATH": str(fake)})
    other = cluster.address_of("other")
    refused = build(site, cluster.address)
    assert refused.returncode != 0
    ours = on_worker.environment()["distributions"]["numpy"]
    said = (
        f"the Dask worker {other} was refused: its environment differs from the build's "
        f"(numpy 1.0.0 there, {ours} here)"
    )
    assert said in refused.stderr, refused.stderr[-3000:]
    assert re.search(r"page a\.md, block 'first' failed: not run: .*numpy 1\.0\.0", refused.stderr)
    assert not ran_on_cluster(refused.stderr)  # nothing ran on it
    assert not (cluster.folder / "other-local" / on_worker.BUNDLES).exists()


SLOW = """\
# S

```python exec="on" id="slow"
import os, pathlib, time
marks = pathlib.Path({marks!r})
marks.write_text(marks.read_text() + "started\\n" if marks.exists() else "started\\n")
time.sleep(3)
print("slept")
```
"""


def slow_site(tmp_path: Path, wait_s: float) -> tuple[Path, Path]:
    """A one-page site whose block (``SLOW``) notes each start in the file returned with it."""
    marks = tmp_path / "marks"
    pages = {"s.md": SLOW.format(marks=str(marks))}
    return write_small_site(tmp_path / "site", "dask", pages, settings(wait_s)), marks


def until_started(marks: Path, running: concurrent.futures.Future, times: int = 1) -> None:
    """Until the slow block has started ``times`` times (its build still running)."""
    deadline = time.monotonic() + 120
    while not marks.exists() or marks.read_text().count("started") < times:
        if running.done():
            raise AssertionError(f"the build ended first:\n{running.result().stderr[-3000:]}")
        assert time.monotonic() < deadline, "the block never started"
        time.sleep(0.05)


def test_a_worker_killed_mid_session_is_survived_by_running_it_again_elsewhere(tmp_path, cluster):
    cluster.add_worker("first")
    site, marks = slow_site(tmp_path, 10)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(build, site, cluster.address)
        until_started(marks, running)  # on the first worker
        first = cluster.address_of("first")
        cluster.add_worker("second")
        os.killpg(cluster.workers["first"].pid, signal.SIGKILL)  # with its job's process
        result = running.result(timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"s.md slow: the Dask worker {first} that ran it left the cluster; it runs again" in (
        result.stderr
    )
    assert ran_on_cluster(result.stderr) == {
        "s.md slow": (cluster.address_of("second"), cluster.workers["second"].pid)
    }
    assert marks.read_text() == "started\nstarted\n"  # twice: the first run never came back
    assert "<p>slept</p>" in (site / "site" / "s" / "index.html").read_text()


def test_a_session_whose_worker_is_killed_twice_fails_naming_its_page_never_a_wrong_page(
    tmp_path, cluster
):
    cluster.add_worker("first")
    site, marks = slow_site(tmp_path, 10)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(build, site, cluster.address)
        until_started(marks, running)
        cluster.add_worker("second")
        os.killpg(cluster.workers["first"].pid, signal.SIGKILL)
        until_started(marks, running, times=2)  # again, on the second
        second = cluster.address_of("second")
        os.killpg(cluster.workers["second"].pid, signal.SIGKILL)
        result = running.result(timeout=180)
    assert result.returncode != 0
    said = (
        f"page s.md, block 'slow' failed: not run: the Dask worker {second} that ran it left "
        "the cluster, again: it ran twice, and ended neither time"
    )
    assert said in result.stderr, result.stderr[-3000:]
    assert not ran_on_cluster(result.stderr)


def test_a_scheduler_killed_mid_session_fails_the_build_naming_it(tmp_path, cluster):
    cluster.add_worker("only")
    site, marks = slow_site(tmp_path, WAIT_S)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        running = pool.submit(build, site, cluster.address)
        until_started(marks, running)
        started = time.monotonic()
        os.killpg(cluster.processes[0].pid, signal.SIGKILL)  # the scheduler
        result = running.result(timeout=180)
    assert result.returncode != 0
    said = (
        f"page s.md, block 'slow' failed: not run: the Dask scheduler at {cluster.address} was "
        "lost while the build ran"
    )
    assert said in result.stderr, result.stderr[-3000:]
    assert time.monotonic() - started < 60


def test_a_scheduler_out_of_reach_fails_the_build_naming_its_address(tmp_path):
    from examples.processes import free_port

    address = f"tcp://127.0.0.1:{free_port()}"
    site = write_site(tmp_path / "site", pages=("a",))
    result = build(site, address)
    assert result.returncode != 0
    said = f"not run: the Dask scheduler at {address} could not be reached within {WAIT_S} s"
    assert said in result.stderr, result.stderr[-3000:]


def test_a_scheduler_that_never_answers_fails_the_build_within_the_wait_naming_it(tmp_path):
    """A port that takes the connection and says nothing (a hung scheduler, a wrong service):
    bounded by executor_wait_s, not TCP's minutes."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections complete, nothing is ever read or written
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        site = write_site(tmp_path / "site", pages=("a",))
        started = time.monotonic()
        result = build(site, address)
        took = time.monotonic() - started
    assert result.returncode != 0
    said = f"not run: the Dask scheduler at {address} could not be reached within {WAIT_S} s"
    assert said in result.stderr, result.stderr[-3000:]
    assert took < 60, took


@pytest.mark.skipif(plan.local_gpus(), reason="this machine has a GPU: the page runs here")
def test_a_gpu_page_never_runs_on_this_cpu_without_a_cluster(tmp_path):
    site = write_site(tmp_path / "site")
    result = build(site)
    assert result.returncode != 0
    assert re.search(
        r"page g\.md, block 'on-gpu' failed: its page's front matter asks for a GPU "
        r"\(execution: \{gpu: true\}\): no executor is named",
        result.stderr,
    ), result.stderr[-3000:]
    assert "page a.md" not in result.stderr  # the other page's blocks ran here, as ever


# ---------------------------------------------------------------- what an author types, checked


def test_without_an_executor_nothing_of_dask_is_imported():
    check = (
        "import sys; from build_support.cluster.client import cluster_of; "
        "from build_support.execution import state; from build_support.section import ROOT; "
        "assert cluster_of(ROOT, lambda: None) is None; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    env = {k: v for k, v in os.environ.items() if k != EXECUTOR_ENV}
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_gpu_front_matter_of_another_form_fails_naming_the_page():
    from mkdocs.exceptions import PluginError

    assert plan.needs_gpu("g.md", GPU_FRONT + PAGE_G)
    assert not plan.needs_gpu("a.md", PAGE_A)
    assert not plan.needs_gpu("a.md", "---\ntitle: x\n---\n" + PAGE_A)
    for wrong in ("execution: gpu", "execution: {gpu: yes please}", "execution: {cpu: true}"):
        with pytest.raises(PluginError, match=r"g\.md: front matter execution: expected"):
            plan.needs_gpu("g.md", f"---\n{wrong}\n---\n" + PAGE_G)


def test_the_executor_setting_takes_a_scheduler_address_or_nothing(tmp_path):
    from mkdocs.exceptions import ConfigurationError

    from build_support import settings

    assert settings.validated({}, None).executor is None
    assert settings.validated({"executor": ""}, None).executor is None
    assert settings.validated({"executor": "tcp://h:8786"}, None).executor == "tcp://h:8786"
    with pytest.raises(ConfigurationError, match=r"executor: .*tcp://host:port.*\$EXECUTOR"):
        settings.validated({"executor": "h:8786"}, None)


def test_a_worker_environment_differs_by_each_thing_named():
    ours = on_worker.environment()
    assert on_worker.differences(ours, ours, gpu=False) == []
    other = json.loads(json.dumps(ours))
    other["python"] = "CPython 3.0.1"
    other["distributions"]["jax"] = "0.0.1"
    other["distributions"]["jax-cuda12-plugin"] = "9.9"
    said = on_worker.differences(ours, other, gpu=False)
    assert f"python CPython 3.0.1 there, {ours['python']} here" in said
    assert f"jax 0.0.1 there, {ours['distributions']['jax']} here" in said
    assert "jax-cuda12-plugin 9.9 there (a JAX backend), none here" in said
    del other["distributions"]["jax"]
    gpu_said = on_worker.differences(ours, other, gpu=True)  # a GPU worker's plugin is its own
    assert gpu_said == [
        f"python CPython 3.0.1 there, {ours['python']} here",
        f"jax missing there, {ours['distributions']['jax']} here",
    ]
    assert cluster_client.forwarded(
        False, {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "x", "HOME": "/"}
    ) == {
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "x",
    }
    assert cluster_client.forwarded(True, {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "x"}) == {
        "XLA_FLAGS": "x"
    }
