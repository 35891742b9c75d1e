"""The course past one machine (issue 51): ``--pages`` synthetic pages of course_scale.py's 8
blocks each (its page generator), in throw-away copies of the project, built:

- cold on this machine's workers (the run ahead, one session per core) and cold on a 2-worker
  loopback Dask cluster (``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1,
  each running one job at a time: the same cores; a new cluster for each build), in turns,
  --cold-repeats times (medians); target: the cluster at most 1.2x local;
- render-only (``RENDER_ONLY=1``) on another copy (machine B: an empty local store, the local
  cold build's store shared with it read-only, ``file://``), its first build (every entry
  copied from the shared store) and then --repeats more, against the same pages unexecuted
  (every ``exec="on"`` fence a plain code block), in turns; target: render-only at most 1.1x;
- from the session durations the render-only build recorded (``cluster/shards.py``): the
  predicted time on 1, 4, 16 and 64 workers (list scheduling) and the critical path (the
  longest session), beside the measured cold build.

Figures and targets are printed, met or missed; nothing is asserted on a time. The machine's
load average is printed: on a shared machine, read the ratios, each of builds run in turns.

    python benchmarks/cluster_scale.py [--pages 40] [--repeats 3] [--cold-repeats 1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # course_scale, beside this script

import course_scale

from build_support.caching.store import FileStore
from build_support.cluster import shards
from build_support.settings import (
    EXECUTOR_ENV,
    RENDER_ONLY_ENV,
    SHARD_ENV,
    SHARED_STORE_ENV,
    SHARED_STORE_MODE_ENV,
)
from testkit.build import copy_env, mkdocs_build
from testkit.dask_cluster import ran_on_cluster, started

MAX_CLUSTER_RATIO = 1.2  # the cluster's cold build over the local one, on the same cores
MAX_RENDER_ONLY_RATIO = 1.1  # a render-only build from a full store over the unexecuted pages
PREDICTED_WORKERS = (1, 4, 16, 64)
_REPORT = re.compile(r"(\d+) blocks and (\d+) notebooks?: (\d+) ran, (\d+) reused")


def build(project: Path, **env: str) -> tuple[float, int, int, str]:
    """Seconds of one strict build of the copy (its own store), its outputs, how many ran, and
    its log; ``env``: the build's switches (every other one unset)."""
    switches = {EXECUTOR_ENV: "", RENDER_ONLY_ENV: "", SHARD_ENV: "", SHARED_STORE_ENV: ""}
    started_at = time.perf_counter()
    result = mkdocs_build(
        project / "mkdocs.yml",
        project / "site",
        fresh=False,
        env=copy_env(project) | switches | env,
        timeout=3600,
    )
    seconds = time.perf_counter() - started_at
    if result.returncode != 0:
        raise SystemExit(f"strict build of {project} failed:\n{result.stderr[-4000:]}")
    found = _REPORT.search(result.stderr)
    if found is None:
        raise SystemExit(f"no Execution report line in the log of {project}'s build")
    blocks, notebooks, ran, _ = map(int, found.groups())
    return seconds, blocks + notebooks, ran, result.stderr


def durations_of(project: Path) -> dict[str, float]:
    """The session durations the copy's render-only build recorded in its store."""
    entry = FileStore(project / ".cache").get(shards.DURATIONS, shards.DURATIONS_KEY)
    if entry is None:
        raise SystemExit(f"the render-only build of {project} recorded no durations")
    return json.loads(entry.payload)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3, help="render-only and unexecuted builds")
    parser.add_argument("--cold-repeats", type=int, default=1, help="cold builds of each, in turns")
    args = parser.parse_args()
    # Stopped (kill, a closed terminal): the cluster and the copies are cleaned up, as on Ctrl-C
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("cluster_scale.py: stopped (SIGTERM)"))
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        copies = {
            name: course_scale.make_copy(Path(tmp, name), args.pages, executed=name != "plain")
            for name in ("local", "cluster", "render", "plain")
        }
        shared = f"file://{copies['local'] / '.cache'}"  # machine A's store, B's shared one
        locals_, clusters = [], []
        for turn in range(args.cold_repeats):
            locals_.append(cold(copies["local"]))
            with started(Path(tmp, f"dask-{turn}")) as cluster:
                for name in ("one", "two"):
                    cluster.add_worker(name, nthreads=1)
                clusters.append(cold(copies["cluster"], **{EXECUTOR_ENV: cluster.address}))
            print(
                f"# cold builds, turn {turn + 1}: local {locals_[-1][0]:.1f} s, cluster "
                f"{clusters[-1][0]:.1f} s ({len(ran_on_cluster(clusters[-1][3]))} jobs on it)",
                flush=True,
            )
        from_shared = {SHARED_STORE_ENV: shared, SHARED_STORE_MODE_ENV: "read-only"}
        render_env = from_shared | {RENDER_ONLY_ENV: "1"}
        first = build(copies["render"], **render_env)
        build(copies["plain"])  # its notebook and wheel stored: what is left is rendering
        rendered, unexecuted = [], []
        for _ in range(args.repeats):
            rendered.append(build(copies["render"], **render_env))
            unexecuted.append(build(copies["plain"])[0])
        durations = durations_of(copies["render"])
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    report(args, locals_, clusters, first, rendered, unexecuted, durations, load)


def cold(project: Path, **env: str) -> tuple[float, int, int, str]:
    """A build of ``project`` with its store emptied (outputs, wheel, compiled shapes)."""
    shutil.rmtree(project / ".cache", ignore_errors=True)
    return build(project, **env)


def report(args, locals_, clusters, first, rendered, unexecuted, durations, load) -> None:
    seconds = statistics.median(run[0] for run in locals_)
    on_cluster = statistics.median(run[0] for run in clusters)
    _, outputs, ran, _ = locals_[0]
    jobs = len(ran_on_cluster(clusters[0][3]))
    print(
        f"# benchmarks/cluster_scale.py: {args.pages} pages x {len(course_scale.BLOCKS)} blocks "
        f"({outputs} outputs in all, the section's included); cold builds: medians of "
        f"{args.cold_repeats}, in turns; {load}"
    )
    print(
        f"cold, local workers:       {seconds:7.2f} s   ({ran} of {outputs} ran; runs: "
        f"{_runs(locals_)})"
    )
    ratio = on_cluster / seconds
    verdict = "met" if ratio <= MAX_CLUSTER_RATIO else "MISSED"
    print(
        f"cold, 2-worker Dask cluster: {on_cluster:5.2f} s   ({clusters[0][2]} of "
        f"{clusters[0][1]} ran, {jobs} jobs on the cluster; runs: {_runs(clusters)}; "
        f"{ratio:.2f}x local on the same cores, target <= {MAX_CLUSTER_RATIO}x: {verdict})"
    )
    if any(run[2] for run in (first, *rendered)):
        raise SystemExit("a render-only build ran outputs: it must execute nothing")
    print(
        f"render-only, first (entries copied from the shared store): {first[0]:.2f} s "
        f"(0 of {first[1]} ran)"
    )
    median = statistics.median(run[0] for run in rendered)
    floor = statistics.median(unexecuted)
    print(f"render-only, median of {args.repeats}: {median:6.2f} s   (runs: {_runs(rendered)})")
    print(
        f"same pages, unexecuted:    {floor:7.2f} s   (runs: "
        f"{', '.join(f'{one:.2f}' for one in unexecuted)})"
    )
    verdict = "met" if median / floor <= MAX_RENDER_ONLY_RATIO else "MISSED"
    print(
        f"render-only / unexecuted:  {median / floor:.2f}x   (target <= "
        f"{MAX_RENDER_ONLY_RATIO}x: {verdict})"
    )
    total = sum(durations.values())
    print(
        f"from the recorded durations ({len(durations)} sessions, {total:.1f} s of blocks in "
        "all; list scheduling, longest first):"
    )
    for workers in PREDICTED_WORKERS:
        print(f"  {workers:>3} workers: {shards.predicted(durations, workers):7.2f} s predicted")
    longest = max(sorted(durations), key=lambda identity: durations[identity])
    print(f"  critical path: {longest} ({durations[longest]:.2f} s): no number of workers beats it")
    print(
        f"  measured beside it: cold local {seconds:.1f} s on 2 cores, predicted "
        f"{shards.predicted(durations, 2):.1f} s for 2 workers (the blocks' own seconds: the "
        "rest is each session's worker start, the plan and rendering)"
    )


def _runs(runs: list[tuple[float, int, int, str]]) -> str:
    return ", ".join(f"{run[0]:.2f}" for run in runs)


if __name__ == "__main__":
    main()
