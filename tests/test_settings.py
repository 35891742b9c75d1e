"""score_settings: K settings at once equal K calls of score_batch; bad input is refused."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from examples import BATCH, WEIGHTS, score_batch, score_settings
from examples.settings import settings_program

from .scoring_cases import MALFORMED, float32_tolerance

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8]


@st.composite
def batches_and_settings(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rows = draw(st.integers(1, 32))
    features = draw(st.integers(1, 12))  # both paths of the row score: <= 6 and wider
    count = draw(st.integers(1, 8))
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        elements = st.integers(max(info.min, -100), min(info.max, 100))
    else:
        elements = st.floats(-100, 100, allow_nan=False, width=32)
    batch = draw(hnp.arrays(dtype, (rows, features), elements=elements))
    weights = draw(hnp.arrays(dtype, (count, features), elements=elements))
    return batch, weights


@settings(max_examples=40, deadline=None)
@given(batches_and_settings())
def test_at_once_equals_a_stack_of_score_batch_calls(data):
    batch, weights = data
    at_once = np.asarray(score_settings(batch, weights))
    stacked = np.stack([np.asarray(score_batch(batch, w)) for w in weights], axis=1)
    assert at_once.shape == stacked.shape == (batch.shape[0], weights.shape[0])
    assert at_once.dtype == stacked.dtype
    exact = batch.astype(np.float64) @ weights.astype(np.float64).T
    for k, w in enumerate(weights.astype(np.float64)):
        tolerance = float32_tolerance(batch.astype(np.float64), w)
        assert np.all(np.abs(at_once[:, k] - stacked[:, k]) <= 2 * tolerance)
        assert np.all(np.abs(at_once[:, k] - exact[:, k]) <= tolerance)


def test_manuscript_weights_give_the_manuscript_scores_in_column_0():
    scores = score_settings(BATCH, [WEIGHTS, [1.0, 0.0, 0.0]])
    assert [round(float(s), 3) for s in scores[:, 0]] == [0.2, 1.19, 0.35, 1.3]
    assert [round(float(s), 3) for s in scores[:, 1]] == [row[0] for row in BATCH]


def test_jax_input_stays_on_its_device():
    device = jax.devices()[0]
    batch = jax.device_put(jnp.array(BATCH), device)
    scores = score_settings(batch, jax.device_put(jnp.array([WEIGHTS]), device))
    assert isinstance(scores, jax.Array)
    assert scores.devices() == {device}


def test_non_finite_values_flow_into_the_scores_as_in_score_batch():
    # No refusal, no cleaning: the same policy as score_batch, column by column.
    batch = np.array([[1.0, np.nan, 2.0], [0.0, 1.0, np.inf], [1.0, 2.0, 3.0]])
    weights = np.array([[0.5, 0.0, 1.0], [1.0, 1.0, -np.inf], [1.0, 1.0, 1.0]])
    at_once = np.asarray(score_settings(batch, weights))
    stacked = np.stack([np.asarray(score_batch(batch, w)) for w in weights], axis=1)
    np.testing.assert_array_equal(at_once, stacked)  # NaN where NaN, inf where inf
    assert np.isnan(at_once[0]).all() and np.isfinite(at_once[2, 0])


# Every batch case score_batch refuses, refused here too with the same message.
BATCH_CASES = [
    case for case in MALFORMED if case[3].startswith("batch") and "weights" not in case[3]
]

SETTINGS_CASES = [
    (BATCH, np.ones((0, 3)), ValueError, r"settings must hold at least one setting .* \(0, 3\)"),
    (
        BATCH,
        [[0.4, 0.8]],
        ValueError,
        r"batch has shape \(4, 3\), so settings of shape \(settings, 3\) were expected, "
        r"got shape \(1, 2\)",
    ),
    (
        BATCH,
        WEIGHTS,
        ValueError,
        r"settings must be 2-D \(one row of weights per setting: settings x features\), "
        r"got 1-D with shape \(3,\)",
    ),
    (BATCH, np.ones((2, 2, 3)), ValueError, r"got 3-D with shape \(2, 2, 3\)"),
    (BATCH, [[1.0, 2.0, 3.0], [1.0]], ValueError, r"settings must be rectangular"),
    (BATCH, [["a", "b", "c"]], TypeError, r"settings must hold real numbers .* dtype <U1"),
    (BATCH, [[True, False, True]], TypeError, r"settings must hold real numbers .* dtype bool"),
    (BATCH, [[1j, 0, 0]], TypeError, r"settings must hold real numbers .* complex128"),
    (BATCH, [[1.0, None, 2.0]], TypeError, r"settings must be rectangular and hold only numbers"),
    (BATCH, "abc", TypeError, r"settings must be an array or nested list of numbers, got str"),
]


@pytest.mark.parametrize(("batch", "weights", "error", "message"), BATCH_CASES)
def test_a_malformed_batch_is_refused_as_score_batch_refuses_it(batch, weights, error, message):
    assert BATCH_CASES, "no batch case found in MALFORMED"
    with pytest.raises(error, match=message):
        score_settings(batch, [np.ones(3)])


@pytest.mark.parametrize(("batch", "settings_", "error", "message"), SETTINGS_CASES)
def test_malformed_settings_are_refused_with_their_shape(batch, settings_, error, message):
    with pytest.raises(error, match=message):
        score_settings(batch, settings_)


def test_xla_is_given_one_matrix_product_and_a_transpose_for_settings_first():
    assert settings_program(4_000, 16, 1_000) == [
        "dot_general float32[4000,16] float32[1000,16] -> float32[4000,1000]"
    ]
    first = settings_program(4_000, 16, 1_000, settings_axis=0)
    assert [line.split()[0] for line in first] == ["dot_general", "transpose"]
    assert first[-1].endswith("-> float32[1000,4000]")
