"""Checks shared by every scoring path: a 2-D numeric batch, one weight per feature, and numbers
that JAX's float type can hold.

Every check runs before any computation and names what was expected and what was given,
so that nothing is ever silently broadcast, wrapped or turned into infinity. What each input
becomes (the same on every path):

- Python ints of any size and every numpy integer dtype are turned into floats on the host
  (``for_jax``), never into JAX's int32, so no value is wrapped; above 2**24 float32 holds
  them to within its rounding.
- bool is refused (a bool array is a mask, not a feature); so are complex numbers and strings.
- A finite value or a score past the range of the float type JAX computes in (float32, or
  float64 where JAX's x64 mode is on) is refused with a ValueError that names the row and
  column. Values closer to zero than float32's smallest normal number (about 1.2e-38) may
  count as zero, as float32 arithmetic on a CPU flushes them.
- NaN and infinity are not refused: they flow into the scores they touch, on every path.

Two inputs are taken without reading their values: one jax array spread over several
processes, and the abstract values ``jax.jit`` or ``jax.vmap`` pass while they trace a
scoring function (there are no values to read then).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from .float_range import (
    check_scores_in_range,
    float_type,
    for_jax,
    largest_magnitude,
    past_range_error,
    position,
)


def _check_numeric_dtype(name: str, dtype: np.dtype, given: Any) -> None:
    # dtype.kind: "i" signed, "u" unsigned, "f" floating; bool is "b", complex "c", str "U".
    # (The same test as np.issubdtype against integer and floating, at a fraction of its cost
    # per call, which small batches pay on every score.)
    if dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold real numbers (int or float), "
            f"got {type(given).__name__} holding dtype {dtype}"
        )


_REAL = (int, float, np.integer, np.floating)


def _numbers_from_objects(name: str, array: np.ndarray, given: Any) -> np.ndarray:
    """A float64 array from an object array of numbers (what numpy makes of ints past 64 bits)."""
    values = np.empty(array.shape, dtype=np.float64)
    for index, entry in np.ndenumerate(array):
        if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, _REAL):
            raise TypeError(
                f"{name} must be rectangular and hold only numbers, got {type(given).__name__} "
                f"with mixed or non-numeric entries: {position(name, index)} is {entry!r}"
            )
        try:
            values[index] = float(entry)
        except OverflowError:
            raise past_range_error(name, index, entry, float_type()) from None
    return values


def as_array(name: str, value: Any) -> np.ndarray | jax.Array:
    """Return ``value`` as an array without copying a jax array off its device.

    Nested lists must be rectangular; strings, booleans, complex numbers and
    objects are refused with a message that says what was given. Python ints too large for
    numpy's integers come back as float64.
    """
    if isinstance(value, jax.Array):
        array = value
    else:
        if isinstance(value, (str, bytes)):
            raise TypeError(
                f"{name} must be an array or nested list of numbers, got {type(value).__name__}"
            )
        try:
            array = np.asarray(value)
        except ValueError as error:  # numpy refuses ragged nesting
            raise ValueError(
                f"{name} must be rectangular (every row the same length), "
                f"got a ragged {type(value).__name__}: {error}"
            ) from None
        if array.dtype == object:
            array = _numbers_from_objects(name, array, value)
    _check_numeric_dtype(name, np.dtype(array.dtype), value)
    return array


def batch_for_jax(batch: Any) -> np.ndarray | jax.Array:
    """A checked batch, every value within range, in JAX's float type (for ``shard_rows``)."""
    batch_array = check_batch(batch)
    largest_magnitude("batch", batch_array, float_type())  # refuses a value past the range
    return for_jax(batch_array)


def check_batch(batch: Any) -> np.ndarray | jax.Array:
    """Validate a (rows x features) batch with at least one of each; return it as an array."""
    batch_array = as_array("batch", batch)
    if batch_array.ndim != 2:
        raise ValueError(
            "batch must be 2-D (rows x features), "
            f"got {batch_array.ndim}-D with shape {tuple(batch_array.shape)}"
        )
    rows, features = batch_array.shape
    if rows == 0 or features == 0:
        raise ValueError(
            f"batch must have at least one row and one feature, got shape {(rows, features)}"
        )
    return batch_array


def check_batch_and_weights(batch: Any, weights: Any) -> tuple[Any, Any]:
    """Validate a (rows x features) batch and its (features,) weights; return both as arrays."""
    batch_array = check_batch(batch)
    weights_array = as_array("weights", weights)
    rows, features = batch_array.shape
    if weights_array.ndim != 1:
        raise ValueError(
            f"weights must be 1-D (one weight per feature), "
            f"got {weights_array.ndim}-D with shape {tuple(weights_array.shape)}"
        )
    if weights_array.shape[0] != features:
        raise ValueError(
            f"weights must have one weight per feature: batch has shape {(rows, features)}, "
            f"so {features} weights were expected, got shape {tuple(weights_array.shape)}"
        )
    check_scores_in_range(batch_array, "weights", weights_array)
    return batch_array, weights_array


def check_batch_and_settings(batch: Any, settings: Any) -> tuple[Any, Any]:
    """Validate a (rows x features) batch and (settings x features) weight settings.

    Each row of ``settings`` is one weight vector, i.e. one experiment. A 1-D weight vector is
    refused rather than taken as one setting: nothing is silently reshaped.
    """
    batch_array = check_batch(batch)
    settings_array = as_array("settings", settings)
    rows, features = batch_array.shape
    if settings_array.ndim != 2:
        raise ValueError(
            "settings must be 2-D (one row of weights per setting: settings x features), "
            f"got {settings_array.ndim}-D with shape {tuple(settings_array.shape)}"
        )
    count, setting_features = settings_array.shape
    if count == 0:
        raise ValueError(
            f"settings must hold at least one setting (row of weights), "
            f"got shape {(count, setting_features)}"
        )
    if setting_features != features:
        raise ValueError(
            f"settings must have one weight per feature: batch has shape {(rows, features)}, "
            f"so settings of shape (settings, {features}) were expected, "
            f"got shape {(count, setting_features)}"
        )
    check_scores_in_range(batch_array, "settings", settings_array)
    return batch_array, settings_array
