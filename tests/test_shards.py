"""A sharded build (issue 51: build_support/cluster/shards.py): ``n`` builds with ``SHARD=k/n``
each execute a slice of the course's sessions (a notebook one of them) into one shared store (a
``file://`` folder here: each build is another machine, with its own local store), then one
``RENDER_ONLY=1`` build executes nothing and renders every page from the store: its site equals
a fresh local build's, as ``make check-cache`` compares them. A render-only build the store
cannot serve fails, naming each page, block, notebook and prose value it lacks, and runs none of
them. Two builds filling one store at once leave it whole.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from build_support.build_command import CACHE_DIR_ENV
from build_support.caching.compare import differences
from build_support.caching.store import FileStore, decode
from build_support.cluster import shards
from build_support.settings import RENDER_ONLY_ENV, SHARD_ENV, SHARED_STORE_ENV
from testkit.small_site import DATA_FILE, EXECUTION_HOOK, build_on, from_env, hook
from testkit.small_site import write_site as write_small_site

NOTEBOOK = "notebooks/n.py"
PAGES = {
    "a.md": """\
# A

```python exec="on" id="one"
print("one", 1 + 1)
```

```python exec="on" session="s" id="s-first"
shared = 6 * 7
print("first sets", shared)
```

```python exec="on" session="s" id="s-second"
print("second sees", shared)
```

```python exec="on" id="reads"
print(open("docs/data.txt").read())
```
""",
    "b.md": """\
# B

The prose quotes {{ live.lines }} lines.

```python exec="on" id="two"
print("two", 2 * 2)
```

```python exec="on" id="three"
print("three", 3 * 3)
```

```python exec="on" session="t" id="t-only"
print("t", sum(range(5)))
```
""",
    NOTEBOOK: """\
# %% [markdown]
# # A notebook

# %%
print("the notebook ran", 6 * 7)
""",
}
BLOCKS = {
    ("a.md", "one"),
    ("a.md", "s-first"),
    ("a.md", "s-second"),
    ("a.md", "reads"),
    ("b.md", "two"),
    ("b.md", "three"),
    ("b.md", "t-only"),
    (NOTEBOOK, NOTEBOOK),  # its run, as the build's log names it
}
VALUE = "b.md", "value prose_numbers"  # b.md's prose quotes one (hooks/live_numbers.py)


def write_site(root: Path) -> Path:
    settings = from_env("shared_store", "render_only", "shard")
    hooks = (EXECUTION_HOOK, hook("live_numbers"))
    return write_small_site(root, "shards", PAGES, settings, files=DATA_FILE, hooks=hooks)


def build(
    site: Path, machine: str, store: str = "", fresh: bool = False, **switches: str
) -> subprocess.CompletedProcess:
    """A build of ``site`` on ``machine`` (its own site and local store), the shared ``store``."""
    env = {SHARED_STORE_ENV: store, RENDER_ONLY_ENV: "", SHARD_ENV: ""} | switches
    return build_on(site, machine, env, fresh=fresh)


def executed(stderr: str) -> dict[tuple[str, str], str]:
    return {(p, b): o for p, b, o in re.findall(r"Executed (\S+) (\S+): (ran|reused)", stderr)}


def left_out(stderr: str) -> set[tuple[str, str]]:
    """The blocks (and notebooks) a shard's build left to the others, as its log names them."""
    return set(re.findall(r"page (\S+), block '([^']+)' failed: not run: left to shard", stderr))


def lacked(stderr: str) -> set[tuple[str, str]]:
    """What a render-only build's failure names as missing from the store."""
    said = (
        r"page (.+?), block '([^']+)' failed: not run: the store holds no output for it, and "
        r"this build executes nothing \(RENDER_ONLY=1"
    )
    return set(re.findall(said, stderr))


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """The site, a fresh local build of it, and its two shards' builds into one store."""
    site = write_site(tmp_path_factory.mktemp("shards"))
    store = f"file://{site / 'shared'}"
    local = build(site, "local", fresh=True)
    assert local.returncode == 0, local.stderr[-3000:]
    results = [build(site, f"shard{k}", store, SHARD=f"{k}/2") for k in (1, 2)]
    for result in results:
        assert result.returncode == 0, result.stderr[-3000:]
    return site, store, results


def test_two_shards_then_a_render_only_build_equal_a_fresh_local_build(sharded):
    site, store, (first, second) = sharded
    left = [left_out(first.stderr), left_out(second.stderr)]
    ran = [
        {block for block, how in executed(result.stderr).items() if how == "ran"} - others
        for result, others in zip((first, second), left, strict=True)
    ]
    assert ran[0] and ran[1], left  # both shards ran something
    assert ran[0].isdisjoint(ran[1]), ran  # no session ran twice
    assert ran[0] | ran[1] == BLOCKS  # and none was left by both
    reused = {block for block, how in executed(second.stderr).items() if how == "reused"}
    assert reused == ran[0]  # the second (after the first) reused the first's slice
    session = {("a.md", "s-first"), ("a.md", "s-second")}
    assert session <= ran[0] or session <= ran[1]  # a session's blocks stay together
    # The notebook ran in one shard alone; the prose's value was computed by one alone.
    assert sum((NOTEBOOK, NOTEBOOK) in each for each in ran) == 1
    for result, others in zip((first, second), left, strict=True):  # a notebook left: unrun
        k = 1 if result is first else 2
        shown = (site / f"site-shard{k}" / "notebooks" / "n" / "index.html").read_text()
        assert ("the notebook ran 42" in shown) == ((NOTEBOOK, NOTEBOOK) not in others)
    # The prose's value: computed by the first shard, or left by it to the second.
    quoted = [(site / f"site-shard{k}" / "b" / "index.html").read_text() for k in (1, 2)]
    left_by_first = "the value 'prose_numbers' left to shard 2/2" in first.stderr
    assert ("{{ live.lines }}" in quoted[0]) == left_by_first
    assert re.search(r"The prose quotes \d+ lines", quoted[1])
    assert "the value 'prose_numbers' left" not in second.stderr
    for result, others in zip((first, second), left, strict=True):
        k = 1 if result is first else 2
        said = f"SHARD={k}/2: "
        assert said in result.stderr
        assert f"{len(others)} blocks left to the other shards" in result.stderr

    rendered = build(site, "render", store, RENDER_ONLY="1")
    assert rendered.returncode == 0, rendered.stderr[-3000:]
    assert executed(rendered.stderr) == dict.fromkeys(BLOCKS, "reused")
    assert "cache warning" not in rendered.stderr
    assert differences(site / "site-local", site / "site-render") == []
    shown = (site / "site-render" / "b" / "index.html").read_text()
    assert re.search(r"The prose quotes \d+ lines", shown)  # the value, from the store
    # It recorded the sessions' durations in the store: the next shards' balance.
    entry = FileStore(site / "shared").get(shards.DURATIONS, shards.DURATIONS_KEY)
    recorded = json.loads(entry.payload)
    assert set(recorded) == {"a.md one", "a.md reads", "a.md session s", "b.md two"} | {
        "b.md three",
        "b.md session t",
        f"{NOTEBOOK} notebook",
    }
    # From them: the predicted times, the critical path, each slice's share.
    env = {**os.environ, CACHE_DIR_ENV: str(site / "store-render"), SHARED_STORE_ENV: store}
    command = [sys.executable, "-m", "build_support.cluster.shards", "2"]
    said = subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout
    assert "7 sessions recorded" in said
    assert re.search(r"^ 64 workers: [\d.]+ s$", said, re.MULTILINE), said
    assert re.search(r"^critical path: \S+ .+ \([\d.]+ s\)", said, re.MULTILINE), said
    counts = re.findall(r"^SHARD=[12]/2: (\d+) sessions, [\d.]+ s$", said, re.MULTILINE)
    assert len(counts) == 2 and sum(map(int, counts)) == 7, said


def test_a_render_only_build_fails_naming_every_output_the_store_lacks(sharded, tmp_path):
    _, store, _ = sharded
    changed = tmp_path / "changed"
    write_site(changed)
    text = PAGES["b.md"].replace('print("three", 3 * 3)', 'print("three", 3 * 33)')
    text += '\n```python exec="on" id="new"\nprint("new")\n```\n'
    (changed / "docs" / "b.md").write_text(text)
    mark = tmp_path / "the-notebook-ran"  # written by the changed notebook, were it run
    with (changed / "docs" / NOTEBOOK).open("a") as notebook:
        notebook.write(f"\n# %%\nopen({str(mark)!r}, 'w').close()\n")
    result = build(changed, "render", store, RENDER_ONLY="1")
    assert result.returncode != 0
    expected = {("b.md", "three"), ("b.md", "new"), (NOTEBOOK, NOTEBOOK)}
    assert lacked(result.stderr) == expected, result.stderr[-3000:]
    assert "3 blocks failed; the build stops here" in result.stderr
    assert not (changed / "site-render").exists()  # no site from it
    assert not mark.exists()  # the notebook never ran


def test_a_render_only_build_from_an_empty_store_names_every_block_notebook_and_value(
    tmp_path,
):
    site = write_site(tmp_path / "site")
    result = build(site, "render", RENDER_ONLY="1")
    assert result.returncode != 0
    assert lacked(result.stderr) == BLOCKS | {VALUE}, result.stderr[-3000:]
    assert f"{len(BLOCKS) + 1} blocks failed; the build stops here" in result.stderr
    assert not re.findall(r"Executed .*: ran", result.stderr)


def test_two_builds_filling_one_store_at_once_leave_it_whole(tmp_path):
    site = write_site(tmp_path / "site")
    store = f"file://{tmp_path / 'shared'}"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        both = list(pool.map(lambda machine: build(site, machine, store), ("x", "y")))
    for result in both:
        assert result.returncode == 0, result.stderr[-3000:]
        assert "cache warning" not in result.stderr
    entries = FileStore(tmp_path / "shared").entries()
    assert entries
    for path, _ in entries:
        decode(path.read_bytes())  # each one whole: its checksum holds
    assert not [p for p in (tmp_path / "shared").rglob(".tmp-*")]  # nothing half-written left
    rendered = build(site, "render", store, RENDER_ONLY="1")
    assert rendered.returncode == 0, rendered.stderr[-3000:]
    assert differences(site / "site-x", site / "site-render") == []


def test_slices_are_balanced_by_recorded_durations_else_by_count():
    names = [f"p.md session {i}" for i in range(7)]
    by_count = shards.assign(names, 3, {})
    assert sorted(list(by_count.values()).count(k) for k in (1, 2, 3)) == [2, 2, 3]
    assert shards.assign(list(reversed(names)), 3, {}) == by_count  # the order given: no matter
    durations = {"p.md session 0": 10.0, "p.md session 1": 6.0, "p.md session 2": 4.0}
    timed = shards.assign(names[:3], 2, durations)
    assert timed == {"p.md session 0": 1, "p.md session 1": 2, "p.md session 2": 2}
    # A session not recorded weighs the mean of those recorded.
    mixed = shards.assign([*names[:3], "p.md new"], 2, durations)
    assert mixed == {"p.md session 0": 1, "p.md new": 2, "p.md session 1": 2, "p.md session 2": 1}
    assert shards.predicted(durations, 1) == 20.0
    assert shards.predicted(durations, 2) == shards.predicted(durations, 64) == 10.0  # the longest
    assert {shards.by_name(name, 4) for name in names} <= {1, 2, 3, 4}
    assert shards.by_name("a.md session x", 4) == shards.by_name("a.md session x", 4)


@pytest.mark.parametrize(
    ("switches", "said"),
    [
        ({"SHARD": "3/2"}, "SHARD=3/2: expected k/n with 1 <= k <= n"),
        ({"RENDER_ONLY": "1", "SHARD": "1/2"}, "RENDER_ONLY=1 executes nothing and SHARD="),
        ({"SHARD": "half"}, r"extra.build.shard: expected a slice of the course, k/n"),
    ],
)
def test_contradictory_or_wrong_switches_fail_the_build_naming_them(tmp_path, switches, said):
    site = write_site(tmp_path / "site")
    result = build(site, "wrong", **switches)
    assert result.returncode != 0
    assert said in result.stderr, result.stderr[-3000:]


def test_a_value_the_store_lacks_fails_a_render_only_build_at_once_once_pages_rendered(tmp_path):
    """hooks/try_it.py asks for its value after the blocks' failures were said (on_env): the
    build fails there, naming it with any other, never computing it."""
    from types import SimpleNamespace

    from build_support.execution.guard import BlockFailed, Failing

    selection = shards.Selection(True, None, None, tmp_path)
    build = SimpleNamespace(page="b.md", failing=Failing(serving=False))
    build.ahead = SimpleNamespace(cluster=selection)
    assert shards.value_left(build, "prose_numbers")  # while pages render: said, then on
    selection.pages_rendered(build)
    with pytest.raises(BlockFailed, match=r"2 blocks failed") as failed:
        shards.value_left(build, "try_it_book")
    said = str(failed.value)
    assert "page b.md, block 'value prose_numbers' failed: not run: the store holds" in said
    assert "page (the build), block 'value try_it_book' failed: not run: the store holds" in said
    other = shards.Selection(False, (1, 2), None, tmp_path)
    build.ahead.cluster = other
    owner = shards.by_name("value v", 2)
    assert shards.value_left(build, "v") == (owner != 1)  # a shard computes its own alone


def test_the_cluster_benchmark_states_its_targets():
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "cluster_scale.py"
    said = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "usage:" in said and "--cold-repeats" in said and "--pages" in said
    text = script.read_text(encoding="utf-8")
    assert "MAX_CLUSTER_RATIO = 1.2" in text and "MAX_RENDER_ONLY_RATIO = 1.1" in text
