"""How a session's worker starts (build_support/execution/executor.py, template.py): forked warm
from a template process that imported numpy, jax and matplotlib.pyplot but never the course
package and never a JAX backend, or, where forking is unsafe (``COURSE_WORKER_START=spawn``
forces it), a fresh interpreter, said once in the log; and JAX's persistent compilation cache
(caching/compile_cache.py), used by untimed workers only and in no block's reads."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import pytest

from build_support.caching import compile_cache
from build_support.execution import executor, state
from testkit.build import with_own_workers

LOOK = """
import json, os, sys
import numpy as np
from jax._src import xla_bridge
print(json.dumps({
    "pid": os.getpid(), "parent": os.getppid(), "group": os.getpgid(0),
    "examples": "examples" in sys.modules, "numpy": "numpy" in sys.modules,
    "backends": len(xla_bridge._backends), "draw": float(np.random.rand()),
    "cwd": os.getcwd(), "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
}))
"""


@pytest.fixture
def build(tmp_path, monkeypatch):
    yield from with_own_workers(tmp_path, monkeypatch)


def look(build, timed: bool = False, code: str = LOOK) -> tuple[dict, dict]:
    worker = executor.LazyWorker(build.take_worker, timed)
    reply = worker.run(code, "look", False, 60)
    return json.loads(reply["output"]), reply


def test_a_worker_is_forked_from_a_template_that_holds_no_course_code_and_no_backend(build):
    first, _ = look(build)
    second, _ = look(build)
    template = state.PROCESS.executor.template
    assert template is not None
    for seen in (first, second):
        assert seen["parent"] == template.process.pid != os.getpid()  # forked from the template
        assert seen["group"] == seen["pid"]  # a process group of its own: killed whole
        assert seen["numpy"] and not seen["examples"] and seen["backends"] == 0
        assert seen["cwd"] == os.getcwd()
        assert seen["blas_threads"] == os.environ.get("OPENBLAS_NUM_THREADS")  # as the build's
    assert first["draw"] != second["draw"]  # NumPy's generator re-seeded, as a fresh process's
    assert len(os.listdir(f"/proc/{template.process.pid}/task")) == 1  # single-threaded


def test_no_worker_is_taken_after_the_build_ended_its_workers(build):
    """Once hooks/execution.py's on_post_build has ended the workers, a worker asked for would
    start the template again (0.9 s of every build, unseen): it is refused, naming when to ask
    (hooks/try_it.py computes the book in on_env)."""
    look(build)
    build.workers_ended = True
    with pytest.raises(RuntimeError, match="after this build's workers ended"):
        build.take_worker(False, "print(1)")


def test_a_forked_workers_end_is_said_with_its_status_and_its_group_killed(build):
    worker = executor.LazyWorker(build.take_worker)
    with pytest.raises(executor.BlockError, match="ended by SIGKILL"):
        worker.run("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "k", False, 60)
    child = executor.LazyWorker(build.take_worker)
    started = child.run(
        "import subprocess\nprint(subprocess.Popen(['sleep', '60']).pid)", "s", False, 60
    )
    sleeper = int(started["output"])
    child.close()
    state.PROCESS.executor.close()  # the template goes too: it reaps what it forked
    assert gone(sleeper)


def gone(pid: int, within_s: float = 5.0) -> bool:
    """Process ``pid`` ended (or is a zombie) within ``within_s``: SIGKILL is not instant."""
    until = time.monotonic() + within_s
    while time.monotonic() < until:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_with_spawn_forced_workers_are_fresh_interpreters_and_the_log_says_so_once(
    build, monkeypatch, caplog
):
    monkeypatch.setenv(executor.START_ENV, "spawn")
    with caplog.at_level(logging.INFO, logger="mkdocs.hooks.execution"):
        first, _ = look(build)
        second, _ = look(build)
    assert first["parent"] == second["parent"] == os.getpid()  # the build's own children
    assert state.PROCESS.executor.template is None
    logged = [r.getMessage() for r in caplog.records if "fresh interpreters" in r.getMessage()]
    assert logged == [
        f"Workers start as fresh interpreters, not forked warm: {executor.START_ENV}=spawn"
    ]
    assert not first["examples"] and first["draw"] != second["draw"]


JIT = """
import jax, jax.numpy as jnp
print(float(jax.jit(lambda x: (x * {n}).sum())(jnp.arange(7.0))))
"""


def test_untimed_workers_share_jax_compilation_cache_timed_ones_do_not(build, tmp_path):
    folder = Path(compile_cache.directory(tmp_path / "store"))
    assert folder.is_relative_to(tmp_path / "store" / compile_cache.FOLDER)
    worker = executor.LazyWorker(build.take_worker)
    reply = worker.run(JIT.format(n=3), "jit", False, 60)
    assert reply["output"].strip() == "63.0"
    entries = set(os.listdir(folder))
    assert entries  # the program JAX compiled, kept however small
    assert not [p for p in reply["read"] + reply["written"] if p.startswith(str(folder))]
    again = executor.LazyWorker(build.take_worker)
    assert again.run(JIT.format(n=3), "jit", False, 60)["output"].strip() == "63.0"
    timed = executor.LazyWorker(build.take_worker, True)
    assert timed.run(JIT.format(n=5), "jit", False, 60)["output"].strip() == "105.0"
    assert set(os.listdir(folder)) == entries  # a timed worker neither loads nor stores


def test_a_fresh_build_uses_a_compilation_cache_of_its_process_own(tmp_path):
    process = state.ProcessState()
    fresh = process.fresh_compile_folder()
    assert fresh == process.fresh_compile_folder()
    assert not Path(fresh).is_relative_to(tmp_path)
    assert compile_cache.directory(tmp_path) != fresh


def test_the_compilation_cache_is_pruned_oldest_first_past_its_limit(tmp_path):
    folder = tmp_path / compile_cache.FOLDER
    (folder / "other-machine").mkdir(parents=True)
    for age, name in enumerate(["newest", "middle", "oldest"]):
        path = folder / "other-machine" / name
        path.write_bytes(b"x" * 400)
        os.utime(path, (1_000_000 - age, 1_000_000 - age))
    assert compile_cache.prune(folder, limit_bytes=1000) == 2  # down to 750 bytes at most
    assert [p.name for p in (folder / "other-machine").iterdir()] == ["newest"]
    assert compile_cache.prune(folder, limit_bytes=1000) == 0


def test_a_template_whose_read_ahead_files_changed_is_not_forked_from_again(build, tmp_path):
    look(build)
    template = state.PROCESS.executor.template
    # What importing ahead read outside Python's own files and the user's caches (none, where
    # matplotlib reads only its own rc file and its font list): one planted, since changed.
    seen = tmp_path / "matplotlibrc"
    seen.write_text("a setting")
    template.read_ahead[str(seen)] = (0, 0)  # as if importing ahead had read it, since changed
    first, _ = look(build)
    assert state.PROCESS.executor.template is not template
    assert first["parent"] == state.PROCESS.executor.template.process.pid


def test_a_template_fits_the_builds_variables_as_a_worker_spawned_now_would_hold_them():
    from types import SimpleNamespace

    from build_support.execution.template import Template

    # The template started with A=1; importing ahead (JAX) set SET_BY_IMPORT=1.
    template = SimpleNamespace(
        started_with={"A": "1"}, environment={"A": "1", "SET_BY_IMPORT": "1"}
    )
    fits = [
        {"A": "1"},  # as at the start
        {"A": "1", "SET_BY_IMPORT": "1"},  # the build imported JAX too (a number in the prose)
    ]
    unfit = [
        {"A": "2"},
        {},
        {"A": "1", "NEW": "x"},
        {"A": "1", "SET_BY_IMPORT": "0"},
    ]
    assert all(Template.fits(template, variables) for variables in fits)
    assert not any(Template.fits(template, variables) for variables in unfit)


def test_a_variable_the_build_sets_since_starts_a_new_template(build, monkeypatch):
    look(build)
    template = state.PROCESS.executor.template
    look(build)
    assert state.PROCESS.executor.template is template  # nothing changed: the same one
    monkeypatch.setenv("COURSE_TEST_VARIABLE", "1")
    seen, _ = look(build)
    assert state.PROCESS.executor.template is not template
    assert seen["parent"] == state.PROCESS.executor.template.process.pid


def test_a_spare_spawned_before_a_variable_changed_is_not_used(build, monkeypatch):
    monkeypatch.setenv(executor.START_ENV, "spawn")
    prints_it = "import json, os\nprint(json.dumps(os.environ.get('COURSE_TEST_VARIABLE')))"
    first, _ = look(build, code=prints_it)  # and a spare spawned ahead, without the variable
    assert first is None
    monkeypatch.setenv("COURSE_TEST_VARIABLE", "2")
    second, _ = look(build, code=prints_it)
    assert second == "2"
