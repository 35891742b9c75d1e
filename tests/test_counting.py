"""Multiply counts are exact Python ints at any size; bad sizes are refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from examples import PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES, scalar_multiply_count, scaling_table


@given(st.integers(0, 2**70), st.integers(0, 2**40))
def test_count_is_exact_python_int(batch_size, feature_count):
    count = scalar_multiply_count(batch_size, feature_count)
    assert type(count) is int
    assert count == batch_size * feature_count


def test_count_past_int32_with_numpy_sizes():
    count = scalar_multiply_count(np.int32(2**31 - 1), np.int32(6))
    assert count == (2**31 - 1) * 6
    assert type(count) is int


def test_manuscript_scaling_table():
    assert scaling_table(PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES) == {
        3: [12, 24, 48, 96],
        6: [24, 48, 96, 192],
    }


@pytest.mark.parametrize(
    ("batch_size", "feature_count", "error", "message"),
    [
        (-1, 3, ValueError, "batch_size must be a non-negative integer, got -1"),
        (4, -3, ValueError, "feature_count must be a non-negative integer, got -3"),
        (4.0, 3, TypeError, "batch_size must be a non-negative integer, got float 4.0"),
        (4, "3", TypeError, "feature_count must be a non-negative integer, got str '3'"),
        (True, 3, TypeError, "batch_size must be a non-negative integer, got bool True"),
    ],
)
def test_bad_sizes_are_refused(batch_size, feature_count, error, message):
    with pytest.raises(error, match=message):
        scalar_multiply_count(batch_size, feature_count)
