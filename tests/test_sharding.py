"""score_sharded: on this process's devices here, and on 8 forced CPU devices in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from examples import BATCH, WEIGHTS, score_batch, score_sharded
from testkit.project import ROOT

from .scoring_cases import MALFORMED


def test_same_scores_as_score_batch_on_this_process_devices():
    scores = score_sharded(BATCH, WEIGHTS)
    assert isinstance(scores, jax.Array)
    assert scores.shape == (len(BATCH),)
    np.testing.assert_array_equal(np.asarray(scores), np.asarray(score_batch(BATCH, WEIGHTS)))


@pytest.mark.parametrize(("batch", "weights", "error", "message"), MALFORMED)
def test_malformed_input_is_refused_like_score_batch(batch, weights, error, message):
    with pytest.raises(error, match=message):
        score_sharded(batch, weights)


def test_on_8_forced_cpu_devices():
    env = {
        **os.environ,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
        "JAX_PLATFORMS": "cpu",
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/sharded_on_8_devices.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "skipped" not in result.stdout, result.stdout
