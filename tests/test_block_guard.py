"""No block fools, stalls, kills, floods or leaks into a build: every block runs in a worker
process (build_support/execution/executor.py, worker.py) under the limits of executor.py;
a failing block is named, and shown in its page under ``mkdocs serve`` (guard.py).

The builds here are of a one-page site that loads the project's execution hook (a second or two
each), not of the course: what is tested is the hook, not the pages. Each block that starts
processes writes their ids to a file, and the test checks that none outlives the build.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from build_support.build_command import BUILD_ENV, CACHE_DIR_ENV
from build_support.execution import executor, guard
from testkit.author import author_env
from testkit.build import mkdocs_build
from testkit.project import ROOT
from testkit.serving import fetch_text, mkdocs_serve, wait_for_text
from testkit.small_site import ONE_PAGE_CONFIG, page_with


@pytest.fixture
def site(tmp_path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(ONE_PAGE_CONFIG)
    return tmp_path


def build(site: Path, code: str, options: str = "") -> tuple[subprocess.CompletedProcess, float]:
    (site / "docs" / "index.md").write_text(page_with(code, options))
    started = time.monotonic()
    result = mkdocs_build(site / "mkdocs.yml", site / "site", cache_dir=site / "cache", timeout=120)
    return result, time.monotonic() - started


FAILED = "page index.md, block 'blk' failed: "


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("import sys\nsys.exit(0)", "SystemExit: 0 (a block may not end the build"),
        ("raise SystemExit", "SystemExit (a block may not end the build"),
        ("import sys\nsys.exit(3)", "SystemExit: 3"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("class Odd(BaseException):\n    pass\nraise Odd('odd')", "Odd: odd"),
        (
            "x = 1\ny = x / 0",
            "ZeroDivisionError: division by zero\n  at line 2 of the block: y = x / 0",
        ),
    ],
    ids=["exit-0", "raise-SystemExit", "exit-3", "KeyboardInterrupt", "BaseException", "Exception"],
)
def test_a_block_that_raises_anything_fails_the_build_naming_page_and_block(site, code, said):
    result, _ = build(site, code)
    assert result.returncode == 1, result.stderr
    assert FAILED + said in result.stderr


def test_the_line_in_examples_is_named(site):
    result, _ = build(site, "from examples import score_batch\nscore_batch([[1.0]], 'w')")
    assert result.returncode == 1
    assert FAILED + "TypeError: " in result.stderr
    assert "line 2 of the block: score_batch([[1.0]], 'w')" in result.stderr
    # The innermost frame in examples/ is where it failed; the ones between are listed too.
    assert re.search(r"\n  at examples/\w+\.py, line \d+, in \w+: raise TypeError", result.stderr)
    assert re.search(r"\n    examples/scoring\.py, line \d+, in score_batch: ", result.stderr)


def test_a_block_past_its_time_limit_fails_the_build_naming_it(site):
    result, seconds = build(site, "import time\ntime.sleep(600)", ' timeout="2"')
    assert result.returncode == 1
    assert FAILED + "still running after its time limit of 2 s" in result.stderr
    assert "at line 2 of the block: time.sleep(600)" in result.stderr
    assert seconds < 60


@pytest.mark.parametrize(
    "deaf",
    [
        "try:\n    time.sleep(600)\nexcept BaseException:\n    time.sleep(600)",
        "signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.Signals))\ntime.sleep(600)",
        "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\nsignal.setitimer(signal.ITIMER_REAL, 0)\n"
        "while True:\n    pass",
    ],
    ids=["swallows", "blocks-signals", "cancels-timers"],
)
def test_a_block_deaf_to_the_time_limit_still_fails_in_time(site, deaf):
    result, seconds = build(site, "import signal, time\n" + deaf, ' timeout="1"')
    assert result.returncode == 1
    assert FAILED + "still running after its time limit of 1 s" in result.stderr
    assert seconds < 30


def test_a_block_within_its_limit_is_untouched_and_a_bad_limit_is_named(site):
    result, _ = build(site, "import time\ntime.sleep(1.0)\nprint('done')", ' timeout="5"')
    assert result.returncode == 0, result.stderr
    assert "done" in (site / "site" / "index.html").read_text()
    result, _ = build(site, "print('done')", ' timeout="soon"')
    assert result.returncode == 1
    assert FAILED + 'timeout="soon": expected a number of seconds greater than 0' in result.stderr


def test_an_output_over_the_size_limit_fails_the_build_naming_it(site):
    result, _ = build(site, f"print('x' * {executor.MAX_OUTPUT_BYTES})")
    assert result.returncode == 1
    assert FAILED + "its output passed the limit of " in result.stderr
    just_under = executor.MAX_OUTPUT_BYTES - 10_000  # markdown-exec wraps it in a few tags
    result, _ = build(site, f"print('x' * {just_under})")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("flood", "said"),
    [
        ("while True:\n    print('x' * 1000)", "its output passed the limit of 1,048,576 bytes"),
        (
            "import sys\nwhile True:\n    sys.stdout.write('x' * 1000)",
            "it wrote more than 1,048,576 bytes to stdout and stderr",
        ),
    ],
    ids=["print", "stdout"],
)
def test_a_runaway_output_is_stopped_as_it_streams_naming_the_limit(site, flood, said):
    result, seconds = build(site, flood)
    assert result.returncode == 1
    assert FAILED + said in result.stderr
    assert "MAX_OUTPUT_BYTES" in result.stderr
    assert seconds < 30  # stopped at the limit, not at the time limit


def test_a_block_past_the_memory_cap_fails_naming_it(site):
    result, _ = build(site, "import numpy as np\nblock = np.ones(2 * 2**30 // 8)")
    assert result.returncode == 1
    assert FAILED + "it used " in result.stderr
    assert "past its memory cap of 1 GiB (memory_limit_gib in mkdocs.yml's extra.build)" in (
        result.stderr
    )
    result, _ = build(site, "import numpy as np\nprint(np.ones(2**20).sum())")
    assert result.returncode == 0, result.stderr


ENDED = "its worker process was ended by"


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("import os\nos._exit(0)", "its worker process ended with status 0 while it ran"),
        (
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
            "its worker process was ended by SIGKILL",
        ),
        ("import os\nos.abort()", "its worker process was ended by SIGABRT (an abort or a crash)"),
        (
            "import ctypes\nctypes.string_at(0)",
            "its worker process was ended by SIGSEGV (an abort or a crash)",
        ),
    ],
    ids=["os._exit", "SIGKILL", "abort", "crash"],
)
def test_any_end_of_a_blocks_process_fails_the_build_naming_it(site, code, said):
    result, _ = build(site, code)
    assert result.returncode == 1, result.stderr
    assert FAILED + said in result.stderr


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


STARTS_PROCESSES = """\
import os, subprocess, sys, threading, time
pids = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid]
child = os.fork()
if child == 0:
    time.sleep(600)
    os._exit(0)
pids.append(child)
threading.Thread(target=time.sleep, args=(600,)).start()  # not a daemon: never ends
open("{pids}", "w").write(" ".join(map(str, pids)))
print("started")
"""


@pytest.mark.parametrize("session", ["", ' session="s"'], ids=["alone", "in-a-session"])
def test_nothing_a_block_starts_outlives_the_build(site, session):
    pids = site / "pids.txt"
    result, seconds = build(site, STARTS_PROCESSES.format(pids=pids), session)
    assert result.returncode == 0, result.stderr
    assert "started" in (site / "site" / "index.html").read_text()
    assert seconds < 60  # the thread that never ends did not keep the build
    started = [int(pid) for pid in pids.read_text().split()]
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in started if _alive(pid)]


def test_what_a_block_changes_stays_in_its_session(site):
    """JAX's settings, the working folder, a patched package function, environment variables
    and print options: none reaches a block of another session, or a block alone."""
    changes = (
        "import jax, os, numpy, examples\n"
        'jax.config.update("jax_enable_x64", True)\n'
        'os.chdir("/")\n'
        'os.environ["BLOCK_SET"] = "yes"\n'
        "numpy.set_printoptions(precision=1)\n"
        "examples.score_batch = None\n"
        "print(jax.numpy.ones(1).dtype)"
    )
    looks = (
        "import jax, os, numpy, examples\n"
        "print(jax.numpy.ones(1).dtype, os.getcwd() != '/', 'BLOCK_SET' in os.environ,"
        " numpy.array([0.123]), examples.score_batch is None)"
    )
    page = page_with(changes, ' session="a"')
    for name, options in (("same", ' session="a"'), ("other", ' session="b"'), ("alone", "")):
        page += f'\n```python exec="on" id="{name}"{options}\n{looks}\n```\n'
    (site / "docs" / "index.md").write_text(page)
    result = mkdocs_build(site / "mkdocs.yml", site / "site", cache_dir=site / "cache", timeout=120)
    assert result.returncode == 0, result.stderr
    shown = re.findall(r"<p>([^<]*)</p>", (site / "site" / "index.html").read_text())
    assert "float64" in shown
    assert "float64 False True [0.1] True" in shown  # its own session sees it all
    assert shown.count("float32 True False [0.123] False") == 2  # the others see none of it


# ---------------------------------------------------------------- make build keeps site/


def make_build(project: Path, code: str) -> subprocess.CompletedProcess:
    (project / "docs" / "index.md").write_text(page_with(code))
    env = author_env() | BUILD_ENV | {CACHE_DIR_ENV: str(project / "cache")}
    # The checkout's .venv and node_modules, linked: never set them up from the copy.
    command = ["make", "-o", ".venv/.synced", "-o", "node_modules/.installed", "build"]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)


def test_a_failed_make_build_leaves_the_previous_site_as_it_was(site):
    shutil.copy2(ROOT / "Makefile", site / "Makefile")
    for name in (".venv", "node_modules"):
        (site / name).symlink_to(ROOT / name)
    result = make_build(site, "print('first')")
    assert result.returncode == 0, result.stdout + result.stderr
    before = (site / "site" / "index.html").read_text()
    assert "first" in before

    result = make_build(site, "import sys\nsys.exit(0)")
    assert result.returncode != 0
    assert FAILED + "SystemExit: 0" in result.stderr
    assert (site / "site" / "index.html").read_text() == before
    assert not list((site / "site.builds").glob("*.progress"))  # nor its staging folder

    result = make_build(site, "print('second')")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "second" in (site / "site" / "index.html").read_text()
    assert sorted(p.name for p in site.iterdir() if p.name.startswith("site")) == [
        "site",
        "site.builds",  # the build shown before, kept for its readers; the lock
    ]


def test_a_block_that_ends_its_process_with_status_0_keeps_the_site_and_is_named(site):
    """``os._exit(0)`` once ended MkDocs itself with status 0 before a page was written; now it
    ends only the block's worker, and the build fails naming the block; site/ stays."""
    shutil.copy2(ROOT / "Makefile", site / "Makefile")
    for name in (".venv", "node_modules"):
        (site / name).symlink_to(ROOT / name)
    result = make_build(site, "print('first')")
    assert result.returncode == 0, result.stdout + result.stderr
    before = (site / "site" / "index.html").read_text()

    result = make_build(site, "import os\nos._exit(0)")
    assert result.returncode != 0
    said = result.stdout + result.stderr
    assert FAILED + "its worker process ended with status 0 while it ran" in said
    assert "cannot stat" not in said
    assert (site / "site" / "index.html").read_text() == before
    assert sorted(p.name for p in site.iterdir() if p.name.startswith("site")) == [
        "site",
        "site.builds",  # the build shown before, kept for its readers; the lock
    ]


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ('print("\\udcff")', "the build could not handle its output: UnicodeEncodeError"),
        (
            "class Odd(Exception):\n    def __str__(self):\n        raise ValueError\nraise Odd()",
            "Odd: <its message could not be read: ValueError>",
        ),
    ],
    ids=["lone-surrogate", "unreadable-exception"],
)
def test_a_fault_in_the_builds_handling_of_a_block_fails_it_named(site, code, said):
    """pymdownx.superfences swallows what a fence's formatter raises and ships the fence as
    source, exit 0: any fault in the build's handling of a block fails the build instead."""
    result, _ = build(site, code)
    assert result.returncode == 1, result.stderr
    assert FAILED + said in result.stderr


def test_a_block_that_breaks_what_the_build_calls_fails_named(site):
    """A block that reassigns a function the build calls for a block (its caption's backend)
    once made every later block ship as source, exit 0: now it fails, named, in its own worker
    (what it changes reaches no other: test_what_a_block_changes_stays_in_its_session)."""
    page = page_with("import examples\nexamples.backend_report = None", ' session="s"')
    (site / "docs" / "index.md").write_text(page)
    result = mkdocs_build(site / "mkdocs.yml", site / "site", cache_dir=site / "cache", timeout=120)
    assert result.returncode == 1
    assert FAILED + "the build could not describe where it ran: TypeError" in result.stderr


# ---------------------------------------------------------------- mkdocs serve


def test_under_serve_a_failing_block_shows_in_its_page_until_a_good_edit(site):
    from bs4 import BeautifulSoup

    (site / "docs" / "index.md").write_text(page_with("x = 1\ny = x / 0"))
    env = {CACHE_DIR_ENV: str(site / "cache")}
    with mkdocs_serve(site, env, site / "serve.log") as (server, url):
        shown = fetch_text(url)
        assert shown is not None
        html = BeautifulSoup(shown, "html.parser")
        error = html.select_one(".exec-block .exec-error")
        assert error is not None, html
        text = error.get_text(" ", strip=True)
        assert "Block blk failed" in text
        assert "ZeroDivisionError: division by zero" in text
        assert "at line 2 of the block: y = x / 0" in text
        assert "After the block." in html.get_text()  # the rest of the page renders
        assert FAILED + "ZeroDivisionError" in (site / "serve.log").read_text()

        (site / "docs" / "index.md").write_text(page_with("print('all good')"))
        fixed = wait_for_text(url, "all good", timeout_s=60)
        assert "all good" in fixed and "exec-error" not in fixed

        (site / "docs" / "index.md").write_text(page_with("import sys\nsys.exit(0)"))
        exited = wait_for_text(url, "exec-error", timeout_s=60)
        assert "SystemExit: 0" in exited and server.poll() is None


# ---------------------------------------------------------------- the build's own handling


@pytest.fixture
def a_build(tmp_path, monkeypatch):
    from build_support.execution import state

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv("FRESH", raising=False)
    monkeypatch.setattr(state.PROCESS, "serving", False)
    build = state.start(ROOT)
    build.page = "page.md"
    yield build
    state.PROCESS.executor.close()


# Each step of the build's handling of a block and its output, after its worker has run it.
HANDLING = [
    ("build_support.execution.sessions", "render"),  # markdown-exec renders it
    ("build_support.execution.reads", "digests"),  # the files it read
    ("build_support.execution.sessions", "measured_caption"),  # its caption
    ("build_support.execution.sessions", "run_record"),  # its run, for the report and record
    ("build_support.execution.sessions", "note_shown"),  # what verify compares
    ("build_support.execution.sessions", "wrapped"),  # its wrapper in the page
    ("build_support.execution.headings", "kept"),  # the headings it printed, to store (a
    ("build_support.execution.headings", "follow"),  # store's own faults are misses, said in
]  # a warning: the output is shown all the same); filed for the table of contents


@pytest.mark.parametrize(("where", "step"), HANDLING, ids=[step for _, step in HANDLING])
def test_a_fault_planted_in_each_step_of_the_handling_fails_the_block_named(
    a_build, monkeypatch, where, step
):
    """pymdownx.superfences swallows what a fence's formatter raises and ships the fence as
    source, exit 0: a fault anywhere in the build's handling must fail the block, named."""
    import importlib

    import markdown

    from build_support.execution import sessions

    def planted(*args, **kwargs):
        raise RuntimeError("planted")

    monkeypatch.setattr(importlib.import_module(where), step, planted)
    options = {"code": "print('hi')", "id": "b", "extra": {}, "md": markdown.Markdown()}
    shown = sessions.formatter(a_build, "python")(**options)
    assert "Block <code>b</code> failed" in shown  # in its page, and the build fails:
    with pytest.raises(guard.BlockFailed) as failed:
        a_build.failing.fail_if_any()
    said = "page page.md, block 'b' failed: the build could not handle its output: RuntimeError"
    assert said in str(failed.value)


DEAF = """\
import pathlib, signal, time
for deaf_to in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM, signal.SIGUSR1, signal.SIGHUP):
    signal.signal(deaf_to, signal.SIG_IGN)
signal.setitimer(signal.ITIMER_REAL, 0)
pathlib.Path("{started}").write_text("running")
time.sleep(600)
"""


def test_under_serve_pages_answer_while_a_block_runs_and_a_deaf_block_cannot_end_it(site):
    """The build waits on the block's worker without holding the server, which serves the last
    whole build meanwhile (build_support/serve_staging.py); a block that ignores every signal
    and cancels timers ends at its time limit with its process group, and the server goes on;
    a good edit recovers without a restart."""
    (site / "docs" / "other.md").write_text("# Other\n\nAnother page.\n")
    (site / "docs" / "index.md").write_text(page_with("print('first')"))
    started = site / "started.txt"
    env = {CACHE_DIR_ENV: str(site / "cache")}
    with mkdocs_serve(site, env, site / "serve.log") as (server, url):
        (site / "docs" / "index.md").write_text(
            page_with(DEAF.format(started=started), ' timeout="10"')
        )
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), (site / "serve.log").read_text()
        block_started = time.monotonic()
        for page, said in (("other/", "Another page."), ("", "first")) * 2:
            shown = fetch_text(url + page)
            assert shown is not None and said in shown
        assert time.monotonic() - block_started < 10  # answered while the block still ran

        shown = wait_for_text(url, "exec-error", timeout_s=60)
        assert "still running after its time limit of 10 s" in shown
        assert server.poll() is None  # the server goes on

        (site / "docs" / "index.md").write_text(page_with("print('recovered')"))
        fixed = wait_for_text(url, "recovered", timeout_s=60)
        assert "exec-error" not in fixed and server.poll() is None


NOTEBOOK = """\
# %%
import os, time
with open({pids!r}, "a") as out:
    out.write(f"{{os.getpid()}}\\n")
time.sleep({sleep})
print("notebook says", "{word}")
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text()


def _wait_for_lines(path: Path, count: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().split()) >= count:
            return
        time.sleep(0.2)
    shown = path.read_text() if path.exists() else "(no file)"
    raise AssertionError(f"{path} has not {count} lines after {seconds} s: {shown!r}")


def test_a_serve_stopped_while_a_notebook_runs_ends_at_once_and_its_kernel_with_it(site):
    """Ctrl-C ends ``mkdocs serve`` while a notebook's cell still runs: its kernel is ended
    before the interpreter waits for the notebook's thread, not after the cell's time limit."""
    pids = site / "kernels.txt"
    notebook = site / "docs" / "notebooks" / "slow.py"
    notebook.parent.mkdir()
    notebook.write_text(NOTEBOOK.format(pids=str(pids), sleep=600, word="never"))
    (site / "docs" / "index.md").write_text(page_with('print("block says one")'))
    with mkdocs_serve(site, {CACHE_DIR_ENV: str(site / "cache")}, site / "serve.log") as served:
        _wait_for_lines(pids, 1, 90)
        server, _ = served
        server.send_signal(signal.SIGINT)
        started = time.monotonic()
        server.wait(timeout=60)  # killed by mkdocs_serve past 20 s otherwise: that fails below
        stopped_in = time.monotonic() - started
    assert server.returncode != -signal.SIGKILL and stopped_in < 20, stopped_in
    assert not _alive(int(pids.read_text().split()[0]))


def test_under_serve_a_notebook_still_running_holds_back_no_page(site):
    """A rebuild does not wait for a notebook still running: its page says so and shows its
    cells, every other page shows its new outputs, and the notebook's page shows its own once
    its run ends (the run asks for a rebuild); an edit while it runs stops it, kernel and all."""
    pids = site / "kernels.txt"
    notebook = site / "docs" / "notebooks" / "slow.py"
    notebook.parent.mkdir()
    notebook.write_text(NOTEBOOK.format(pids=str(pids), sleep=4, word="first"))
    (site / "docs" / "index.md").write_text(page_with('print("block says one")'))
    env = {CACHE_DIR_ENV: str(site / "cache")}
    running = "This notebook is still running"
    with mkdocs_serve(site, env, site / "serve.log") as (server, url):
        page_url = url + "notebooks/slow/"
        shown = fetch_text(page_url)
        assert shown is not None and running in shown and "notebook says first" not in shown
        assert "block says one" in fetch_text(url)
        shown = wait_for_text(page_url, "notebook says first", 90)
        assert running not in shown

        notebook.write_text(NOTEBOOK.format(pids=str(pids), sleep=600, word="second"))
        wait_for_text(page_url, running, 60)
        # The page says "running" as soon as the run is planned; its kernel may take a while to
        # start on a loaded machine, so wait until the cell itself is sleeping.
        _wait_for_lines(pids, 2, 90)
        (site / "docs" / "index.md").write_text(page_with('print("block says two")'))
        wait_for_text(url, "block says two", 60)  # while the notebook's cell sleeps
        assert running in fetch_text(page_url)

        notebook.write_text(NOTEBOOK.format(pids=str(pids), sleep=0, word="third"))
        shown = wait_for_text(page_url, "notebook says third", 90)
        assert "notebook says second" not in shown and running not in shown
        _, second, _ = map(int, pids.read_text().split())
        assert not _alive(second)  # the run the third edit replaced was stopped
        assert server.poll() is None
    log = (site / "serve.log").read_text()
    assert "Traceback" not in log, log
