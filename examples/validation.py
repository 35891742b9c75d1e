"""Checks shared by every scoring path: a 2-D numeric batch and one weight per feature.

Every check runs before any computation and names what was expected and what was given,
so that nothing is ever silently broadcast.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np


def _check_numeric_dtype(name: str, dtype: np.dtype, given: Any) -> None:
    # dtype.kind: "i" signed, "u" unsigned, "f" floating; bool is "b", complex "c", str "U".
    # (The same test as np.issubdtype against integer and floating, at a fraction of its cost
    # per call, which small batches pay on every score.)
    if dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold real numbers (int or float), "
            f"got {type(given).__name__} holding dtype {dtype}"
        )


def as_array(name: str, value: Any) -> np.ndarray | jax.Array:
    """Return ``value`` as an array without copying a jax array off its device.

    Nested lists must be rectangular; strings, booleans, complex numbers and
    objects are refused with a message that says what was given.
    """
    if isinstance(value, (jax.Array, np.ndarray)):
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
            raise TypeError(
                f"{name} must be rectangular and hold only numbers, got {type(value).__name__} "
                "with mixed or non-numeric entries"
            )
    _check_numeric_dtype(name, np.dtype(array.dtype), value)
    return array


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
    return batch_array, settings_array
