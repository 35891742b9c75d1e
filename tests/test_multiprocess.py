"""score_sharded across processes: 2 local processes of 4 forced CPU devices each, joined by
jax.distributed (coordinator on 127.0.0.1, gloo collectives), each running
tests/multiprocess_worker.py. Each process prints what it saw; the checks are made here, and a
failure shows every process's output. Every run is bounded in time and leaves no process."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from examples import BATCH, WEIGHTS, rounded, score_batch
from examples.multiprocess import (
    latest_multiprocess_recording,
    load_multiprocess_recording,
    main,
)
from examples.processes import Finished, results_of, run_processes
from testkit.project import ROOT
from testkit.supervised import run_supervised

from .scoring_cases import MALFORMED

PROCESSES = 2
DEVICES_PER_PROCESS = 4
WORKER = [sys.executable, "-m", "tests.multiprocess_worker"]


def outputs(finished: list[Finished]) -> str:
    return "\n".join(process.report() for process in finished)


def assert_none_left(finished: list[Finished]) -> None:
    for process in finished:
        with pytest.raises(ProcessLookupError):
            os.killpg(process.pid, 0)  # its whole process group is gone


@pytest.fixture(scope="module")
def results() -> list[dict]:
    finished = run_supervised(
        WORKER,
        processes=PROCESSES,
        devices_per_process=DEVICES_PER_PROCESS,
        timeout_s=240,
        cwd=ROOT,
    )
    assert_none_left(finished)
    assert [process.returncode for process in finished] == [0] * PROCESSES, outputs(finished)
    seen = results_of(finished)
    assert None not in seen, outputs(finished)
    return seen


def each_process(results: list[dict], key: str) -> list:
    return [result[key] for result in results]


def test_every_process_sees_every_device(results):
    assert each_process(results, "devices") == [PROCESSES * DEVICES_PER_PROCESS] * PROCESSES
    assert [len(local) for local in each_process(results, "local_devices")] == [
        DEVICES_PER_PROCESS
    ] * PROCESSES


def test_practice_batch_as_nested_lists_and_float64_gives_score_batchs_scores(results):
    for result in results:
        expected = result["practice_as_score_batch"]  # in the same process, on the same CPU
        assert rounded(expected) == rounded(score_batch(BATCH, WEIGHTS))
        assert result["practice_scores"] == expected
        assert result["practice_float64_numpy"] == expected  # the AssertionError
        assert result["after_errors"] == expected


def test_uneven_float32_batch_jax_arrays_and_every_dtype(results):
    for result in results:
        assert result["uneven_float32"] == {
            "shape": [1001],
            "replicated": True,
            "within_float32": True,
        }
        assert result["jax_array"] is True
        assert result["global_jax_array"] is True
        assert all(result["dtypes"].values()), result["dtypes"]


def layout(results: list[dict], rows_per_device: int) -> list[str]:
    """Process 0's devices first, then process 1's, each holding the next rows in turn."""
    owners = [(result["process"], name) for result in results for name in result["local_devices"]]
    return [
        f"process {process}, {name} holds rows {device * rows_per_device} to "
        f"{(device + 1) * rows_per_device - 1} ({rows_per_device} rows)"
        for device, (process, name) in enumerate(owners)
    ]


def test_layout_lines_name_each_process_and_device_and_its_rows(results):
    for result in results:
        assert result["even_layout"] == layout(results, 2)  # 16 rows over 8 devices
        assert result["uneven_layout"] == layout(results, 2)  # 13 rows, padded to 16
        assert result["even_local_shards"] == [[2]] * DEVICES_PER_PROCESS  # the scores stay split


@pytest.mark.parametrize("case", range(len(MALFORMED)))
def test_malformed_input_is_refused_in_every_process_like_score_batch(results, case):
    batch, weights, error, message = MALFORMED[case]
    with pytest.raises(error) as raised:
        score_batch(batch, weights)
    for result in results:
        assert result["malformed"][case] == [error.__name__, str(raised.value)]
        assert re.search(message, result["malformed"][case][1])


def test_a_batch_that_differs_between_processes_is_refused_in_words(results):
    for result in results:
        name, message = result["differing_batch"]
        assert name == "ValueError"
        assert "must be given the same batch in every process" in message
        assert "process 0 passed shape (4, 3), float32" in message
        assert "process 1 passed shape (4, 3), float32" in message
        name, message = result["differing_weights"]
        assert (name, "the same weights in every process" in message) == ("ValueError", True)


def test_input_refused_in_one_process_is_refused_in_the_others_too(results):
    own, other = results[-1]["refused_in_one_process"], results[0]["refused_in_one_process"]
    assert own[0] == "ValueError" and own[1].startswith("batch must be rectangular")
    assert other == [
        "ValueError",
        f"process {PROCESSES - 1} refused its batch or weights (its error says why): "
        "score_sharded must be given the same batch and weights in every process",
    ]


@pytest.mark.parametrize(
    ("started", "failing"), [([1], "coordinator"), ([0], "other process")], ids=["no", "late"]
)
def test_a_missing_coordinator_or_process_fails_at_the_join_timeout(started, failing):
    finished = run_supervised(
        WORKER, processes=2, devices_per_process=1, timeout_s=120, join_timeout_s=2,
        started=started, cwd=ROOT,
    )  # fmt: skip
    assert_none_left(finished)
    (process,) = finished
    assert process.returncode not in (0, None), process.report()  # it failed; it was not killed
    assert "DEADLINE_EXCEEDED" in process.output, process.report()
    assert "RESULT" not in process.output


def test_a_process_that_dies_gets_the_others_stopped():
    finished = run_supervised(
        WORKER, processes=2, devices_per_process=1, timeout_s=120, after_failure_s=1,
        extra_env={"EXAMPLES_WORKER_EXIT_EARLY": "1"}, cwd=ROOT,
    )  # fmt: skip
    assert_none_left(finished)
    assert finished[1].returncode == 3, outputs(finished)
    # Process 0 finished its work, then waited for process 1 at shutdown: stopped, or failed.
    assert finished[0].returncode != 0, outputs(finished)


def test_recording_command_and_the_recording_it_saves(tmp_path, capsys):
    out = tmp_path / "multiprocess-test.json"
    assert main(["--processes", "2", "--devices-per-process", "2", "--out", str(out)]) == 0
    recording = load_multiprocess_recording(out)
    assert (recording.processes, recording.devices_per_process) == (2, 2)
    assert (
        recording.command == "python -m examples.multiprocess --processes 2 --devices-per-process 2"
    )
    expected = rounded(score_batch(BATCH, WEIGHTS))
    assert [result["practice_scores"] for result in recording.results] == [expected] * 2
    lines = recording.lines()
    assert lines[0] == f"process 0 (cpu:0, cpu:1): gather_scores = {expected}, as score_batch"
    last_device = recording.results[1]["local_devices"][-1]
    assert lines[-1] == f"process 1, {last_device} holds rows 750 to 999 (250 rows)"
    printed = capsys.readouterr().out
    assert printed.startswith(recording.caption())
    assert "2 processes with 2 CPU devices each (4 in all), started by\n" in printed
    assert recording.command in printed


def test_the_readers_runner_kills_what_still_runs_at_its_timeout():
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    finished = run_processes(sleeper, processes=2, devices_per_process=1, timeout_s=1)
    assert [process.returncode for process in finished] == [None, None], outputs(finished)
    assert all(gone(process.pid) for process in finished)


def test_the_shipped_recording_is_shown():
    recording = latest_multiprocess_recording()
    assert all(result["same_as_score_batch"] for result in recording.results)
    assert len(recording.results) == recording.processes
    devices = recording.processes * recording.devices_per_process
    assert sum(" holds rows " in line for line in recording.lines()) == devices


def test_no_recording_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"run python -m examples\.multiprocess"):
        latest_multiprocess_recording(tmp_path)


def gone(pid: int) -> bool:
    """No such process, or only its exit status left (a zombie nobody has reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(sys.platform != "linux", reason="die_with_parent uses Linux's prctl")
def test_the_processes_die_with_the_process_that_started_them(tmp_path):
    child = (
        "import os, pathlib, time\n"
        "from testkit.supervised import die_with_parent\n"
        "die_with_parent()\n"
        "pathlib.Path(os.environ['PIDS'], str(os.getpid())).touch()\n"
        "time.sleep(300)\n"
    )
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\nfrom testkit.supervised import run_supervised\n"
            f"run_supervised([sys.executable, '-c', {child!r}], processes=2, "
            "devices_per_process=1, timeout_s=300)",
        ],
        env={**os.environ, "PIDS": str(tmp_path)},
    )
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(pids) < 2 and time.monotonic() < deadline and parent.poll() is None:
            pids = [int(path.name) for path in tmp_path.iterdir()]
            time.sleep(0.1)
        assert len(pids) == 2, "the started processes never ran"
        parent.kill()  # SIGKILL: run_supervised gets no chance to clean up
        parent.wait()
        deadline = time.monotonic() + 10
        while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(gone(pid) for pid in pids)
    finally:
        parent.kill()
        for pid in pids:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)
