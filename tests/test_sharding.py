"""score_sharded: on this process's devices here, and on 8 forced CPU devices in a subprocess."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from examples import BATCH, WEIGHTS, score_batch, score_sharded

from .scoring_cases import MALFORMED, passes_in_a_process_with


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
    passes_in_a_process_with(
        {"XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"},
        "tests/sharded_on_8_devices.py",
    )
