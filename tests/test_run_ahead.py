"""Blocks run ahead of their pages, side by side (build_support/execution/plan.py): the plan
reads each fence's options as markdown-exec will pass them (fences.py, the page's reader too);
jobs run at once on the cores, never beside a timed block; a page takes a job's replies only
when the job ran what it asks for, and runs it itself otherwise (a job not started is
cancelled); a failure is still its block's, in its page's turn.

The builds are of a small site that loads the project's execution hook.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from types import SimpleNamespace

import markdown
import pytest

from build_support.execution import fences, plan, sessions, state
from build_support.execution.executor import BlockError
from testkit.build import mkdocs_build
from testkit.small_site import ONE_PAGE_CONFIG

# ------------------------------------------------------- the plan reads what the page reads

PAGE = """\
# Fences of every shape

```python exec="on" id="plain"
print(1)
```

```python exec="1" result="text" id='quoted' title="a title" linenums="1"
print(2)
```

```python exec="on" html="yes" source="tabbed-left" tabs="Code|Out"
print("<b>3</b>")
```

```python exec="off" id="shown-only"
print("not run")
```

```python
print("not executed")
```

- In a list:

    ```python exec="on" session="s" id="in-list"
    x = 4
    print(x)
    ```

!!! note "In a note"

    ```python exec="on" session="s" timeout="5" id="in-note"
    print(x + 1)
    ```

=== "A tab"

    ~~~python exec="on" width="60" returncode="0" updatetoc="no" id="tilde"
    print(6)
    ~~~

```python exec="on" timed="yes" id="timed"
print(7)
```

=== "A snippet's last line"

    ```python exec="on" id="last-line-empty"
    print(8)

    ```

```bash exec="on"
echo not ours
```
"""


def markdown_exec_options(page: str) -> list[dict]:
    """What markdown-exec's formatter receives for each fence it executes, captured."""
    from markdown_exec import validator

    seen = []

    def capture(source, language, css_class, options, md, **kwargs):
        seen.append(options | {"code": source})
        return ""

    fence = {"name": "python", "class": "python", "validator": validator, "format": capture}
    converter = markdown.Markdown(
        extensions=["admonition", "pymdownx.superfences", "pymdownx.tabbed"],
        extension_configs={
            "pymdownx.superfences": {"custom_fences": [fence]},
            "pymdownx.tabbed": {"alternate_style": True},
        },
    )
    converter.convert(page)
    return seen


def test_the_plan_reads_every_executed_fence_as_markdown_exec_passes_it():
    expected = markdown_exec_options(PAGE)
    assert len(expected) == 8  # the fences above that run
    assert expected[-1]["code"] == "print(8)\n"
    read = [fence.options for fence in fences.read(PAGE, ("python",))]
    assert read == [options | {"language": "python"} for options in expected]


def test_the_plan_skips_a_fence_whose_timeout_the_page_will_refuse():
    fence = '```python exec="on" timeout="{}"\nprint(1)\n```\n'
    (soon,) = fences.read(fence.format("soon"), ("python",))
    assert plan.request_of(soon.options) is None
    (later,) = fences.read(fence.format("2.5"), ("python",))
    assert plan.request_of(later.options).seconds == 2.5


def test_how_many_run_at_once(monkeypatch):
    monkeypatch.setenv(plan.SIDE_BY_SIDE_ENV, "3")
    assert plan.side_by_side() == 3
    for wrong in ("0", "two", "-1"):
        monkeypatch.setenv(plan.SIDE_BY_SIDE_ENV, wrong)
        with pytest.raises(ValueError, match=plan.SIDE_BY_SIDE_ENV):
            plan.side_by_side()
    monkeypatch.delenv(plan.SIDE_BY_SIDE_ENV)
    assert 1 <= plan.side_by_side() <= plan.MAX_SIDE_BY_SIDE


# ---------------------------------------------------------------- the jobs, with stand-in workers


class StandIn:
    """A worker that takes ``code`` as seconds to sleep, noting when it ran."""

    def __init__(self, log: list) -> None:
        self.log, self.closed = log, False

    def run(self, code, block, timed, seconds, how):
        started = time.monotonic()
        if code == "fail":
            raise BlockError("ZeroDivisionError: division by zero")
        if code == "broken":
            raise OSError("the build's own fault")
        time.sleep(float(code))
        self.log.append((block, started, time.monotonic()))
        return {"kind": "done", "output": f"{block} ran\n"}

    def close(self):
        self.closed = True


HOW = {"kind": "python"}  # fences.to_run's, as the page asks for it too


def job(page: str, *codes: str) -> plan.Job:
    requests = [
        plan.Request(code, f"{page}-{n}", f"own-{page}-{n}", 60.0, HOW)
        for n, code in enumerate(codes)
    ]
    return plan.Job(page, requests)


@pytest.fixture
def run_ahead():
    log, workers = [], []

    def take(timed: bool, first_code: str):
        assert not timed and first_code  # a job's worker: untimed, for its first block
        workers.append(StandIn(log))
        return workers[-1]

    pool = plan.RunAhead(take, threads=2)
    pool.log, pool.taken = log, workers
    yield pool
    pool.stop()


def claim(pool: plan.RunAhead, found: plan.Job):
    """The page's claim of the session ``found`` was added for."""
    (page_and_session,) = [key for key, jobs in pool.jobs.items() if found in jobs]
    return pool.claim(*page_and_session)


def until(condition, seconds: float = 10.0) -> None:
    """Wait for ``condition()``: a loaded machine may start a thread late."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "waited too long"
        time.sleep(0.01)


def test_jobs_run_side_by_side_each_in_a_worker_of_its_own_closed_after(run_ahead):
    first, second = job("a", "0.4"), job("b", "0.4", "0.1")
    run_ahead.add(first, "alone")
    run_ahead.add(second, "s")
    replies = claim(run_ahead, first)
    assert replies.run("0.4", "a-0", False, 60.0, HOW)["output"] == "a-0 ran\n"
    claim(run_ahead, second)
    (a, a_start, a_end), (b, b_start, b_end) = sorted(run_ahead.log)[:2]
    assert (a, b) == ("a-0", "b-0") and b_start < a_end and a_start < b_end  # at once
    assert len(run_ahead.taken) == 2 and all(worker.closed for worker in run_ahead.taken)
    assert run_ahead.ran_ahead == 3


def test_a_timed_block_runs_alone(run_ahead):
    running = job("a", "0.5")
    run_ahead.add(running, "alone")
    until(lambda: run_ahead.running == 1)
    with run_ahead.paused():
        paused_from = time.monotonic()
        queued = job("b", "0.1")
        run_ahead.add(queued, "alone")
        time.sleep(0.3)
        paused_to = time.monotonic()
        assert queued.results == [] and run_ahead.running == 0  # none starts during a timing
    queued.future.result(timeout=5)  # and once it is done, the queue goes on
    (_, _, a_end), (_, b_start, _) = sorted(run_ahead.log)
    assert a_end <= paused_from and b_start >= paused_to  # nothing ran during it


def test_a_page_runs_a_job_itself_when_it_had_not_started(run_ahead):
    busy = [job(page, "0.5") for page in "ab"]  # the pool's two threads
    for each in busy:
        run_ahead.add(each, "alone")
    waiting = job("c", "0.1")
    run_ahead.add(waiting, "alone")  # queued behind them: not started
    assert claim(run_ahead, waiting) is None and waiting.future.cancelled()
    for each in busy:
        each.future.result(timeout=5)
    time.sleep(0.2)
    assert sorted(block for block, _, _ in run_ahead.log) == ["a-0", "b-0"]  # never run twice
    assert run_ahead.ran_ahead == 0


def test_a_failure_ahead_is_the_blocks_in_its_pages_turn(run_ahead):
    failing, broken = job("a", "0.1", "fail"), job("b", "broken")
    run_ahead.add(failing, "s")
    run_ahead.add(broken, "alone")
    replies = claim(run_ahead, failing)
    replies.run("0.1", "a-0", False, 60.0, HOW)
    with pytest.raises(BlockError, match="ZeroDivisionError"):
        replies.run("fail", "a-1", False, 60.0, HOW)
    assert claim(run_ahead, broken) is None  # the build's own fault: the page runs it
    assert isinstance(broken.future.exception(), OSError)


def test_replies_are_only_for_what_ran(run_ahead):
    ran = job("a", "0.1")
    run_ahead.add(ran, "alone")
    replies = claim(run_ahead, ran)
    assert not replies.ran_next({"code": "0.1", "id": "other"})
    with pytest.raises(RuntimeError, match="other than it ran ahead"):
        replies.run("0.2", "a-0", False, 60.0, HOW)


def test_a_session_run_again_from_its_start_keeps_only_the_new_runs_reads(monkeypatch):
    """A run ahead (or stored run) the page did not match is discarded: the files it read are
    not the new run's, and its blocks' records are the new run's."""
    build = SimpleNamespace(page="a.md", ahead=SimpleNamespace(claim=lambda page, name: None))
    build.take_worker = lambda timed, code: pytest.fail("execute is a stand-in")
    options = {"code": "print(1)", "id": "first", "session": "s", "extra": {}}
    session = state.Session(name="s", reads={"discarded.txt": "its digest"})
    stale = {"html": "<p>stale</p>", "ran_on": "ahead", "seconds": 9.0}
    session.new_slot(sessions.run_record(build, session, options, stale, ran=False))
    session.options_seen.append(options)
    block = {"id": "first", "html": "<p>1</p>", "seconds": 0.5, "ran_on": "here"}
    new = block | {"environment": None, "measured": None, "reads": {"read.txt": "its digest"}}
    monkeypatch.setattr(sessions, "execute", lambda *args: (dict(new), False))
    sessions._run_from_start(build, session)
    assert session.reads == {"read.txt": "its digest"}
    (slot,) = session.slots
    assert (slot.run.ran, slot.run.seconds, slot.html) == (True, 0.5, "<p>1</p>")


def test_stop_drops_what_is_queued(run_ahead):
    queued = [job(page, "0.2") for page in "abcdef"]
    for each in queued:
        run_ahead.add(each, "alone")
    until(lambda: run_ahead.running == 2)
    run_ahead.stop()
    until(lambda: run_ahead.running == 0)
    time.sleep(0.1)  # time for a third to start, were stop not to drop the queue
    assert len(run_ahead.log) == 2  # the two running finished; the rest never started
    assert all(each.future.done() for each in queued)


# ---------------------------------------------------------------- a real build

BLOCK = """\
```python exec="on" id="{id}"{extra}
import json, os, time
started = time.time()
time.sleep(0.4)
with open({times!r}, "a") as out:
    out.write(json.dumps(["{id}", os.getpid(), started, time.time()]) + "\\n")
print("{id} done")
```
"""
SESSION = """\
```python exec="on" session="s" id="{page}-first"
import os
shared = os.getpid()
print("first in", "{page}")
```

```python exec="on" session="s" id="{page}-second"
print("second sees", shared == os.getpid())
```
"""


def site_of(tmp_path: Path) -> tuple[Path, Path]:
    times = tmp_path / "times.jsonl"
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(ONE_PAGE_CONFIG + "nav: [a.md, b.md, c.md]\n")
    for page in "abc":
        blocks = [BLOCK.format(id=f"{page}{n}", extra="", times=str(times)) for n in range(2)]
        if page == "b":
            blocks.append(BLOCK.format(id="timed", extra=' timed="yes"', times=str(times)))
        blocks.append(SESSION.format(page=page))
        (tmp_path / "docs" / f"{page}.md").write_text(f"# {page}\n\n" + "\n".join(blocks))
    return tmp_path, times


def outputs(site: Path) -> dict[str, str]:
    found = {}
    for page in "abc":
        html = (site / "site" / page / "index.html").read_text()
        found[page] = re.findall(r"<p>([^<]*(?:done|first in|second sees)[^<]*)</p>", html)
    return found


@pytest.mark.parametrize("side_by_side", ["2", "1"])
def test_a_build_runs_its_blocks_ahead_and_shows_what_each_page_would(tmp_path, side_by_side):
    site, times = site_of(tmp_path)
    result = mkdocs_build(
        site / "mkdocs.yml",
        site / "site",
        cache_dir=site / "cache",
        env={plan.SIDE_BY_SIDE_ENV: side_by_side},
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    ran = re.search(r"Ran ahead of their pages, (\d+) side by side: (\d+) blocks", result.stderr)
    assert outputs(site) == {
        page: [f"{page}0 done", f"{page}1 done"]
        + (["timed done"] if page == "b" else [])
        + [f"first in {page}", "second sees True"]
        for page in "abc"
    }
    rows = [json.loads(line) for line in times.read_text().splitlines()]
    pids = {row[0]: row[1] for row in rows}
    assert len(rows) == len(set(pids.values())) == len(pids) == 7  # once each, a worker each
    assert "Ran ahead for nothing" not in result.stderr
    spans = {row[0]: (row[2], row[3]) for row in rows}
    timed = spans.pop("timed")
    assert not any(start < timed[1] and timed[0] < end for start, end in spans.values())
    overlapping = any(
        a[0] < b[1] and b[0] < a[1] for x, a in spans.items() for y, b in spans.items() if x < y
    )
    if side_by_side == "1":
        assert ran is None and not overlapping
    else:
        # All but the timed block may run ahead (12). How many do is the machine's timing: a
        # job still queued when its page asks for it is run by the page (after a timed block,
        # say, the page can ask before a thread is free), so the count is a range.
        assert ran is not None and ran.group(1) == "2" and 2 <= int(ran.group(2)) <= 12
        assert overlapping
