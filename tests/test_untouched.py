"""Where a block ran, said without starting JAX for it (build_support/execution/worker.py):
a worker its block left untouched replies with what the first untouched worker of its template
computed, starting no backend; a touched worker, or a timed block, computes its own; and the
answer is the one computing gives."""

from __future__ import annotations

import pytest

from build_support.execution import executor, state
from testkit.build import with_own_workers

NO_JAX = "from examples import BATCH\nprint(len(BATCH))"
BACKENDS = "from jax._src import xla_bridge\nprint(len(xla_bridge._backends))"


@pytest.fixture
def build(tmp_path, monkeypatch):
    yield from with_own_workers(tmp_path, monkeypatch)


def session(build, *codes: str, timed: bool = False) -> list[dict]:
    """The replies of one session's blocks, in order."""
    worker = executor.LazyWorker(build.take_worker, timed)
    try:
        return [worker.run(code, f"b{i}", timed, 60) for i, code in enumerate(codes)]
    finally:
        worker.close()


def test_an_untouched_worker_says_where_it_ran_as_computed_without_starting_jax(build):
    computed, started = session(build, NO_JAX, BACKENDS)  # the first computes it
    assert started["output"].strip() != "0"
    template = state.PROCESS.executor.package_template
    assert template is not None and len(template.untouched_answers) == 1
    handed, backends = session(build, NO_JAX, BACKENDS)  # the next is handed it
    assert backends["output"].strip() == "0"  # no backend was started for the label
    assert handed["ran_on"] == computed["ran_on"].strip() != ""
    assert handed["ran_on"].startswith("computed on cpu ·")
    assert handed["environment"] == computed["environment"] is not None


@pytest.mark.parametrize(
    "touch",
    [
        "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = ''",
        "import jax\njax.config.update('jax_platforms', 'cpu')",
        "import examples\nexamples.backend_report = lambda: examples.backend.backend_report()",
    ],
)
def test_a_worker_its_block_touched_computes_its_own(build, touch):
    session(build, NO_JAX)  # the template keeps the answer
    touched = f"{NO_JAX}\n{touch}"
    _, backends = session(build, touched, BACKENDS)
    assert backends["output"].strip() != "0"  # it started JAX to say where it ran


def test_a_timed_block_computes_its_own(build):
    session(build, NO_JAX)
    timed, backends = session(build, NO_JAX, BACKENDS, timed=True)
    assert backends["output"].strip() != "0" and timed["machine"]
