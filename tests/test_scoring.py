"""The sequential loop, numpy float64 and score_batch agree; malformed input is refused."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from examples import BATCH, WEIGHTS, score_batch, score_one_by_one

from .scoring_cases import MALFORMED, float32_tolerance

values = st.floats(min_value=-100, max_value=100, allow_nan=False, width=32)


@st.composite
def batches_and_weights(draw):
    rows = draw(st.integers(1, 64))
    features = draw(st.integers(1, 16))
    batch = draw(hnp.arrays(np.float64, (rows, features), elements=values))
    weights = draw(hnp.arrays(np.float64, (features,), elements=values))
    return batch, weights


@settings(max_examples=60, deadline=None)
@given(batches_and_weights())
def test_three_paths_agree(data):
    batch, weights = data
    expected = batch @ weights
    one_by_one = np.array(score_one_by_one(batch, weights))
    batched = np.asarray(score_batch(batch, weights))
    np.testing.assert_allclose(one_by_one, expected, rtol=1e-12, atol=1e-9)
    assert batched.shape == expected.shape
    assert np.all(np.abs(batched - expected) <= float32_tolerance(batch, weights))


def test_manuscript_scores():
    expected = [0.2, 1.19, 0.35, 1.3]
    assert [round(s, 3) for s in score_one_by_one(BATCH, WEIGHTS)] == expected
    assert [round(float(s), 3) for s in score_batch(BATCH, WEIGHTS)] == expected


@pytest.mark.parametrize(
    "batch",
    [BATCH, np.array(BATCH), jnp.array(BATCH), [[1, 0, 2], [0, 1, 0]]],
    ids=["nested-tuples", "numpy", "jax", "int-lists"],
)
def test_accepts_lists_numpy_and_jax(batch):
    weights = WEIGHTS
    scores = score_batch(batch, weights)
    assert isinstance(scores, jax.Array)
    assert scores.shape == (len(batch),)
    np.testing.assert_allclose(np.asarray(scores), np.asarray(batch) @ np.asarray(weights), 1e-6)


def test_jax_input_stays_on_its_device():
    device = jax.devices()[0]
    batch = jax.device_put(jnp.array(BATCH), device)
    scores = score_batch(batch, jnp.array(WEIGHTS))
    assert scores.devices() == {device}


@pytest.mark.parametrize(("batch", "weights", "error", "message"), MALFORMED)
@pytest.mark.parametrize("score", [score_one_by_one, score_batch])
def test_malformed_input_is_refused_with_its_shape(score, batch, weights, error, message):
    with pytest.raises(error, match=message):
        score(batch, weights)
