"""The cluster and the shared store together (issue 51): a loopback Dask cluster (a ``dask
scheduler`` and two ``dask worker`` processes, one started with ``--resources GPU=1``, each with
its own ``--local-directory``: testkit/dask_cluster.py) runs a small site's sessions, writing
what it runs into an S3 store on moto's server (testkit/s3_store.py). The site equals a fresh
local build's, as ``make check-cache`` compares them (timings aside); every GPU page's session
ran on the GPU worker and no other session did; and another machine, with no cluster, renders
the same site from the store alone (``RENDER_ONLY=1``), the GPU page's output included; and
so it does after two ``SHARD=k/2`` builds on the cluster.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from build_support.caching.compare import differences
from build_support.settings import EXECUTOR_ENV, RENDER_ONLY_ENV, SHARD_ENV
from testkit.build import mkdocs_build
from testkit.dask_cluster import Cluster, ran_on_cluster, started
from testkit.s3_store import BUCKET, SESSIONS_PAGE, build_env, s3_server
from testkit.small_site import checkout_elsewhere, from_env
from testkit.small_site import write_site as write_small_site

PAGES = {
    "a.md": SESSIONS_PAGE,
    "g.md": """\
# G

```python exec="on" id="on-gpu"
print("a GPU page's block", 2**10)
```

```python exec="on" session="g" id="gpu-session"
import os
print("its session", os.environ.get("XLA_FLAGS"))
```
""",
}
GPU_FRONT = "---\nexecution: {gpu: true}\n---\n"
SETTINGS = "executor_wait_s: 20, " + from_env(
    "executor", "shared_store", "shared_store_mode", "render_only", "shard"
)


def write_site(root: Path, gpu_front: bool) -> Path:
    pages = PAGES | {"g.md": (GPU_FRONT if gpu_front else "") + PAGES["g.md"]}
    return write_small_site(root, "combined", pages, SETTINGS)


def build(site: Path, fresh: bool = False, **env: str) -> subprocess.CompletedProcess:
    env = {EXECUTOR_ENV: "", RENDER_ONLY_ENV: "", SHARD_ENV: "", "COURSE_SHARED_STORE": ""} | env
    result = mkdocs_build(
        site / "mkdocs.yml", site / "site", fresh=fresh, cache_dir=site / "store", env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def executed(stderr: str) -> set[str]:
    return set(re.findall(r"Executed \S+ \S+: (ran|reused)", stderr))


def renders_on_another_machine(site: Path, local: Path, url: str, s3, tmp_path: Path) -> None:
    """Another machine: a checkout of ``site`` elsewhere, its own empty local store, no
    cluster, the store at ``url`` read-only: it executes nothing (the GPU page's outputs
    included), and its site equals the fresh ``local`` build's."""
    other = checkout_elsewhere(site, tmp_path / "machine-b")
    rendered = build(other, **{RENDER_ONLY_ENV: "1"} | build_env(url, "read-only", s3.port))
    assert executed(rendered.stderr) == {"reused"}
    assert differences(local / "site", other / "site") == []


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    with started(tmp_path_factory.mktemp("cluster")) as cluster:
        cluster.add_worker("cpu")
        cluster.add_worker("gpu", gpu=True)
        yield cluster


@pytest.fixture(scope="module")
def s3() -> Iterator:
    with pytest.MonkeyPatch.context() as patch, s3_server(patch) as fs:
        yield fs


def test_a_cluster_build_into_s3_equals_a_local_build_and_another_machine_renders_it(
    cluster, s3, tmp_path
):
    local = write_site(tmp_path / "local", gpu_front=False)  # run here: no GPU page here
    build(local, fresh=True)
    url = f"s3://{BUCKET}/combined"

    site = write_site(tmp_path / "cluster-build", gpu_front=True)
    result = build(site, **{EXECUTOR_ENV: cluster.address} | build_env(url, "read-write", s3.port))
    assert executed(result.stderr) == {"ran"}
    assert "cache warning" not in result.stderr
    cpu, gpu = cluster.address_of("cpu"), cluster.address_of("gpu")
    ran = ran_on_cluster(result.stderr)
    assert ran == {
        "a.md alone": (cpu, cluster.workers["cpu"].pid),
        "a.md first, second": (cpu, cluster.workers["cpu"].pid),
        "g.md on-gpu": (gpu, cluster.workers["gpu"].pid),  # every GPU session there,
        "g.md gpu-session": (gpu, cluster.workers["gpu"].pid),  # and no other
    }
    assert differences(local / "site", site / "site") == []
    s3.invalidate_cache()
    stored = s3.find(f"{BUCKET}/combined/execution")
    assert stored  # what the cluster ran, written there by the build
    renders_on_another_machine(site, local, url, s3, tmp_path)
    s3.invalidate_cache()
    assert s3.find(f"{BUCKET}/combined/execution") == stored


def test_shards_on_the_cluster_fill_the_store_a_render_only_build_renders(cluster, s3, tmp_path):
    """``SHARD=k/n`` with ``EXECUTOR``: each shard's slice runs on the cluster (a GPU page's on
    the GPU worker), the other slices' are left out; the render-only build is the local one."""
    local = write_site(tmp_path / "local", gpu_front=False)
    build(local, fresh=True)
    url = f"s3://{BUCKET}/sharded"
    site = write_site(tmp_path / "sharded", gpu_front=True)
    gpu = cluster.address_of("gpu")
    ran: dict[str, tuple[str, int]] = {}
    for k in (1, 2):
        env = {EXECUTOR_ENV: cluster.address, SHARD_ENV: f"{k}/2"}
        result = build(site, **env | build_env(url, "read-write", s3.port))
        assert f"SHARD={k}/2: " in result.stderr
        ran |= ran_on_cluster(result.stderr)
    assert set(ran) == {"a.md alone", "a.md first, second", "g.md on-gpu", "g.md gpu-session"}
    assert {ran["g.md on-gpu"][0], ran["g.md gpu-session"][0]} == {gpu}
    assert gpu not in {ran["a.md alone"][0], ran["a.md first, second"][0]}
    renders_on_another_machine(site, local, url, s3, tmp_path)
