"""A build that executes a slice of the course, or nothing (issue 51): a sharded CI runs ``n``
builds with ``SHARD=k/n`` (``extra.build.shard``), each executing its slice of the course's
sessions into one store (``shared_store``), then one with ``RENDER_ONLY=1``
(``extra.build.render_only``), which executes nothing and renders every page from the store.

Both are a ``Selection``, which the run ahead (``execution/plan.py``) holds where it would hold a
cluster (``client.cluster_of``), in front of the Dask cluster where ``executor`` names one, or of
this machine:

- **Render-only**: every session the store cannot serve fails its blocks, each named by page and
  block in the build's failure (``RENDER_ONLY_SAID``), never run. A shell block (``sh``,
  ``bash``, ``console``) runs as in every build: what it reads is unknown, so it is never stored.
  A render-only build with every output served records each session's duration in the store
  (``DURATIONS``), once they differ from those recorded: the next shards' balance.
- **A shard**: every session of the course (the plan's look-ups, hits and misses alike, so each
  shard's build cuts the same slices whatever the store holds by then) is given to one of ``n``
  slices by list scheduling, longest first, on the durations recorded (a session not recorded
  weighs their mean; none recorded: one each, so slices of equal count), ties by name
  (``assign``). A session the plan does not run ahead (a timing) goes to the slice its name's
  SHA-256 says (``by_name``). Its slice's misses run (on the cluster, or here); the others'
  fail their blocks with ``LEFT``, which the build then forgives (``pages_rendered``): they are
  never stored, and that build's site is not the course's (the render-only build's is).

A notebook is a session like any other (``notebook_looked_up``, ``start_notebook``; its
identity ``<page> notebook``, its duration its stored run's seconds): sliced with the rest, run
only by its shard (on its machine: a notebook never goes to a cluster), never by a render-only
build, which fails on it, named; a notebook not run
is rendered unexecuted, from its source. A value the prose quotes (``BuildState.cached_value``)
that the store lacks is left by a shard not its own (``by_name``: the shard's site is not the
course's), and fails a render-only build, named (``value_left``).

    python -m build_support.cluster.shards [N]  # predicted times on 1-64 workers; N slices
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..execution.guard import Failing
    from ..execution.plan import Cluster, Job, RunAhead
    from ..notebooks.kernels import NotebookRun
    from ..settings import BuildSettings


class BuildState(Protocol):
    """What this module reads of a build (``execution.state.BuildState``, not imported here:
    the build's state imports the cluster's client, which imports this module)."""

    ahead: RunAhead
    failing: Failing


log = logging.getLogger("mkdocs.hooks.execution")
RENDER_ONLY_SAID = (
    "the store holds no output for it, and this build executes nothing (RENDER_ONLY=1: the "
    "shards' builds, or a build without it, fill the store first)"
)
LEFT = "left to shard"
DURATIONS = "durations"  # the store's cache of the recorded durations, one entry
DURATIONS_KEY = hashlib.sha256(b"the course's sessions' durations").hexdigest()


class NotRun(Exception):
    """A job this build does not run: why, in one line."""


def parse(shard: str) -> tuple[int, int]:
    """``"k/n"`` as ``(k, n)``; ``ValueError`` where ``k`` is not within 1..n."""
    k, n = (int(part) for part in shard.split("/"))
    if not 1 <= k <= n:
        raise ValueError(f"SHARD={shard}: expected k/n with 1 <= k <= n")
    return k, n


def by_name(identity: str, shards: int) -> int:
    """The slice (1..``shards``) of a session that is not in the plan: its name's SHA-256."""
    return int(hashlib.sha256(identity.encode()).hexdigest(), 16) % shards + 1


def assign(identities: list[str], shards: int, durations: dict[str, float]) -> dict[str, int]:
    """Each session's slice (1..``shards``): list scheduling, longest first (ties by name), each
    to the slice with the least work so far (ties: the first); a session with no recorded
    duration weighs the mean of those recorded, 1 where none is."""
    known = [durations[identity] for identity in identities if identity in durations]
    default = sum(known) / len(known) if known else 1.0
    weight = {identity: durations.get(identity, default) for identity in identities}
    totals, slices = [0.0] * shards, {}
    for identity in sorted(set(identities), key=lambda each: (-weight[each], each)):
        least = min(range(shards), key=lambda at: (totals[at], at))
        slices[identity] = least + 1
        totals[least] += weight[identity]
    return slices


def loads(slices: dict[str, int], durations: dict[str, float], shards: int) -> list[float]:
    """Each slice's recorded seconds (a session not recorded: none)."""
    found = [0.0] * shards
    for identity, at in slices.items():
        found[at - 1] += durations.get(identity, 0.0)
    return found


def predicted(durations: dict[str, float], workers: int) -> float:
    """The seconds ``workers`` would take on the recorded sessions, each run once, list
    scheduled as ``assign`` cuts slices (sessions are independent: the longest one bounds it)."""
    return max(loads(assign(list(durations), workers, durations), durations, workers))


def main(argv: list[str]) -> int:
    """``python -m build_support.cluster.shards [N]``: from the durations the last render-only
    build recorded (the build's store: ``COURSE_CACHE_DIR``, ``COURSE_SHARED_STORE``), the
    predicted time on 1, 4, 16 and 64 workers, the longest session (which bounds every one),
    and with ``N``, each ``SHARD=k/N``'s sessions and seconds."""
    from ..section import ROOT

    durations = recorded_durations(ROOT)
    if not durations:
        print("no durations recorded: a build with RENDER_ONLY=1 that reuses every output does")
        return 1
    longest = max(sorted(durations), key=lambda identity: durations[identity])
    print(f"{len(durations)} sessions recorded, {sum(durations.values()):.1f} s in all")
    for workers in (1, 4, 16, 64):
        print(f"{workers:>3} workers: {predicted(durations, workers):.1f} s")
    print(f"critical path: {longest} ({durations[longest]:.1f} s): no number of workers beats it")
    if argv:
        shards = int(argv[0])
        slices = assign(list(durations), shards, durations)
        for k, seconds in enumerate(loads(slices, durations, shards), start=1):
            count = sum(1 for at in slices.values() if at == k)
            print(f"SHARD={k}/{shards}: {count} sessions, {seconds:.1f} s")
    return 0


def identity_of(job: Job, session: str) -> str:
    """The job's session as the plan's look-up names it: a block alone by its id, a session by
    its name."""
    first = job.requests[0]
    alone = len(job.requests) == 1 and session == first.own
    return f"{job.page} {first.block_id}" if alone else f"{job.page} session {session}"


def notebook_identity(src_uri: str) -> str:
    """A notebook's run, named as a session."""
    return f"{src_uri} notebook"


def seconds_of(entry: Any) -> float:
    """A stored session's duration: its blocks' seconds (a notebook's: its run's)."""
    if isinstance(entry, dict) and isinstance(entry.get("seconds"), int | float):
        return round(float(entry["seconds"]), 3)
    blocks = entry.get("blocks", []) if isinstance(entry, dict) else []
    return round(sum(float(block.get("seconds") or 0) for block in blocks), 3)


def recorded_durations(project_root: Path) -> dict[str, float]:
    """The durations the last render-only build recorded: the shared store's (all shards read
    the same), else the local store's; none where there are none or they cannot be read."""
    from ..caching.shared_store import shared_store
    from ..caching.store import FileStore, StoreError, store_root

    shared = shared_store(project_root)
    entry = shared.fetch(DURATIONS, DURATIONS_KEY) if shared is not None else None
    if entry is None:
        try:
            entry = FileStore(store_root(project_root)).get(DURATIONS, DURATIONS_KEY)
        except StoreError:
            return {}
    if entry is None:
        return {}
    try:
        found = json.loads(entry.payload)
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: float(v) for k, v in found.items() if isinstance(v, int | float)}


def record_durations(project_root: Path, durations: dict[str, float]) -> None:
    """Keep ``durations`` in the store (and the shared one, unless read-only)."""
    from ..caching.shared_store import store_for
    from ..caching.store import Entry, StoreError

    payload = json.dumps(durations, sort_keys=True, indent=0).encode()
    try:
        store_for(DURATIONS, project_root).put(DURATIONS, DURATIONS_KEY, Entry(payload))
    except StoreError as error:
        log.info("The sessions' durations could not be recorded: %s", error)


class Selection:
    """What a render-only or shard's build runs, in front of ``cluster`` (None: this machine);
    its jobs are ``plan.Cluster``'s."""

    def __init__(
        self,
        render_only: bool,
        shard: tuple[int, int] | None,
        cluster: Cluster | None,
        project_root: Path,
    ) -> None:
        self.render_only, self.shard, self.cluster = render_only, shard, cluster
        self.project_root = project_root
        self.lock = threading.Lock()
        self.identities: dict[int, str] = {}  # id(job) -> its session's identity
        self.waiting: list[tuple[Job, Future[None]]] = []  # a shard's, until the plan is whole
        self.notebooks: set[str] = set()  # every notebook's identity (hit or miss)
        self.notebooks_waiting: list[tuple[NotebookRun, Path, Callable[[], None]]] = []
        self.slices: dict[str, int] | None = None  # identity -> its slice, once planned
        self.here: set[tuple[str, str]] = set()  # (page, session) run here: a shell's
        self.build: BuildState | None = None
        self.durations: dict[str, float] = {}  # the plan's hits', for the record
        self.recorded: dict[str, float] = {}
        self.ran: set[str] = set()  # the sessions this shard sent to run
        self.rendered = False  # every page rendered: a value missing now fails the build at once
        self.closed = False

    @classmethod
    def of(cls, found: BuildSettings, cluster: Cluster | None, project_root: Path) -> Selection:
        """The build's selection; ``PluginError`` where its settings contradict each other."""
        from mkdocs.exceptions import PluginError

        if found.render_only and found.fresh:
            raise PluginError("RENDER_ONLY=1 executes nothing and FRESH=1 reuses nothing: not both")
        if found.render_only and found.shard:
            raise PluginError(
                "RENDER_ONLY=1 executes nothing and SHARD= executes a slice: not both"
            )
        try:
            shard = parse(found.shard) if found.shard else None
        except ValueError as error:
            raise PluginError(str(error)) from None
        return cls(found.render_only, shard, cluster, project_root)

    # ------------------------------------------------------------ plan.Cluster's interface

    def takes(self, job: Job, session: str) -> bool:
        """Every job but a shell's (never stored: it runs in every build, here)."""
        if any(request.how.get("kind") != "python" for request in job.requests):
            self.here.add((job.page, session))
            return False
        self.identities[id(job)] = identity_of(job, session)
        return True

    def submit(self, job: Job) -> Future[None]:
        future: Future[None] = Future()
        if self.render_only:
            future.set_exception(NotRun(RENDER_ONLY_SAID))
            return future
        with self.lock:
            if self.slices is None:  # the plan is not whole yet: no slice is cut
                self.waiting.append((job, future))
                return future
        self._send(job, future)
        return future

    def refusal(self, page: str, session: str) -> str | None:
        """A session not run ahead (a timing): failed in a render-only build, left out where
        it is not this shard's; a shell's runs."""
        if (page, session) in self.here:
            return None
        if self.render_only:
            return f"not run: {RENDER_ONLY_SAID}"
        owner = self._owner(f"{page} session {session}")
        return (
            None
            if self.shard is None or owner == self.shard[0]
            else f"not run: {self._left(owner)}"
        )

    def close(self) -> None:
        with self.lock:
            self.closed = True
            waiting, self.waiting = self.waiting, []
            notebooks, self.notebooks_waiting = self.notebooks_waiting, []
        for _, future in waiting:
            future.set_exception(NotRun("the build was ending before its job was sent"))
        for run, _, _ in notebooks:
            run.result.set_exception(NotRun("the build was ending before its notebook was run"))
            run.cells_done.set()
        if self.cluster is not None:
            self.cluster.close()

    # ------------------------------------------------------------ the build's two moments

    def planned(self, build: BuildState) -> None:
        """Every page planned (``on_files``): the hits' durations noted, a shard's slices cut
        and the jobs that waited for them sent or left out."""
        self.build = build
        identities = sorted(
            {identity for identity, _ in build.ahead.lookups if identity} | self.notebooks
        )
        for lookup in build.ahead.lookups.values():
            if lookup.identity and lookup.entry is not None:
                self.durations[lookup.identity] = seconds_of(lookup.entry)
        self.recorded = recorded_durations(self.project_root)
        if self.shard is None:
            return
        slices = assign(identities, self.shard[1], self.recorded)
        with self.lock:
            self.slices = slices
            waiting, self.waiting = self.waiting, []
            notebooks, self.notebooks_waiting = self.notebooks_waiting, []
        for job, future in waiting:
            self._send(job, future)
        for run, path, start in notebooks:
            owner = self._owner(notebook_identity(run.src_uri))
            if owner == self.shard[0]:
                self.ran.add(notebook_identity(run.src_uri))
                start()
            else:
                self._not_run(build, run, path, self._left(owner))

    def pages_rendered(self, build: BuildState) -> None:
        """Every page rendered (``on_env``, before the build fails on its failed blocks): a
        shard's left-out blocks forgiven, said once; a render-only build that reused every
        output records the sessions' durations, where they changed."""
        self.rendered = True
        if self.shard is not None:
            left = [f for f in build.failing.found if f.summary.startswith(f"not run: {LEFT}")]
            build.failing.found[:] = [f for f in build.failing.found if f not in left]
            k, n = self.shard
            log.info(
                "SHARD=%d/%d: %d sessions sent to run; %d blocks left to the other shards (not "
                "run, not stored: this build's site is not the course's, RENDER_ONLY=1 renders "
                "that from the store)",
                k,
                n,
                len(self.ran),
                len(left),
            )
        elif not build.failing.found and self.durations != self.recorded:
            record_durations(self.project_root, self.durations)

    # ------------------------------------------------------------ notebooks and values

    def notebook_looked_up(self, src_uri: str, entry: dict[str, Any] | None) -> None:
        """A notebook's look-up (``notebooks/page.py``): one of the sessions to slice, and a
        hit's duration for the record."""
        identity = notebook_identity(src_uri)
        self.notebooks.add(identity)
        if entry is not None:
            self.durations[identity] = seconds_of(entry)

    def start_notebook(
        self, build: BuildState, run: NotebookRun, path: Path, start: Callable[[], None]
    ) -> None:
        """A notebook the store lacks: in a render-only build never run, its failure named; in
        a shard's, run (``start``) once the slices are cut, where it is this shard's."""
        if self.render_only:
            self._not_run(build, run, path, RENDER_ONLY_SAID)
            return
        with self.lock:
            self.notebooks_waiting.append((run, path, start))

    def value_left(self, build: BuildState, name: str) -> bool:
        """A value the prose quotes that the store lacks is not computed here: a render-only
        build fails on it, named (at once where every page has rendered); a shard leaves it to
        the shard its name falls to. False: it is computed."""
        identity = f"value {name}"
        if self.render_only:
            page = "(the build)" if self.rendered else build.page  # the page quoting it
            _failed(build, page, identity, f"not run: {RENDER_ONLY_SAID}")
            if self.rendered:
                build.failing.fail_if_any()
            return True
        assert self.shard is not None
        k, n = self.shard
        owner = by_name(identity, n)
        if owner == k:
            return False
        log.info("SHARD=%d/%d: the value %r left to shard %d/%d", k, n, name, owner, n)
        return True

    def _not_run(self, build: BuildState, run: NotebookRun, path: Path, why: str) -> None:
        """A notebook not run here: its page shows its source unexecuted, its failure named (a
        shard's forgiven, as its blocks' are)."""
        from ..notebooks.kernels import read_notebook

        run.reasons = [*run.reasons, f"not run: {why}"]
        run.result.set_result(read_notebook(path))
        run.cells_done.set()
        _failed(build, run.src_uri, run.src_uri, f"not run: {why}")

    # ------------------------------------------------------------ sending

    def _owner(self, identity: str) -> int:
        assert self.shard is not None
        found = (self.slices or {}).get(identity)
        return found if found is not None else by_name(identity, self.shard[1])

    def _left(self, owner: int) -> str:
        assert self.shard is not None
        k, n = self.shard
        return f"{LEFT} {owner}/{n} (this build is SHARD={k}/{n}): never stored from here"

    def _send(self, job: Job, future: Future[None]) -> None:
        """Run the job of this shard's slice (on the cluster, or here); leave out any other."""
        identity = self.identities.pop(id(job), f"{job.page} ?")
        owner = self._owner(identity)
        assert self.shard is not None and self.build is not None
        if owner != self.shard[0]:
            future.set_exception(NotRun(self._left(owner)))
            return
        self.ran.add(identity)
        if self.cluster is not None:
            sent = self.cluster.submit(job)
        elif job.gpu and not self.build.ahead.local_gpu():
            future.set_exception(
                NotRun(
                    "its page's front matter asks for a GPU (execution: {gpu: true}): no "
                    "executor is named and this machine lists no NVIDIA GPU (nvidia-smi -L)"
                )
            )
            return
        else:
            sent = self.build.ahead.run_here(job)
        sent.add_done_callback(lambda done: _pass_on(done, future))


def _failed(build: BuildState, page: str, block_id: str, summary: str) -> None:
    """A failure of the build's, said as a block's (``guard.shown``)."""
    from ..execution.guard import Failure, shown

    shown(Failure(page, block_id, summary), build.failing)


def _pass_on(done: Future[None], future: Future[None]) -> None:
    if done.cancelled():
        future.set_exception(NotRun("the build was ending before its job ran"))
    elif done.exception() is not None:
        future.set_exception(done.exception())
    else:
        future.set_result(None)


def planned(build: BuildState) -> None:
    """``Selection.planned``, where the build is a render-only or shard's build."""
    if isinstance(build.ahead.cluster, Selection):
        build.ahead.cluster.planned(build)


def notebook_looked_up(build: BuildState, src_uri: str, entry: dict[str, Any] | None) -> None:
    """``Selection.notebook_looked_up``, where the build is a render-only or shard's build."""
    if isinstance(build.ahead.cluster, Selection):
        build.ahead.cluster.notebook_looked_up(src_uri, entry)


def start_notebook(
    build: BuildState, run: NotebookRun, path: Path, start: Callable[[], None]
) -> None:
    """``start()`` the notebook's run, unless a render-only or shard's build holds it back
    (``Selection.start_notebook``)."""
    if isinstance(build.ahead.cluster, Selection):
        build.ahead.cluster.start_notebook(build, run, path, start)
    else:
        start()


def value_left(build: BuildState, name: str) -> bool:
    """``Selection.value_left``: a value the store lacks, not computed by this build."""
    selection = build.ahead.cluster
    return isinstance(selection, Selection) and selection.value_left(build, name)


def pages_rendered(build: BuildState) -> None:
    """``Selection.pages_rendered``, where the build is a render-only or shard's build."""
    if isinstance(build.ahead.cluster, Selection):
        build.ahead.cluster.pages_rendered(build)


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
