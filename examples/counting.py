"""How many scalar multiplications a batch of scores costs, as exact Python ints."""

from __future__ import annotations

import operator
from collections.abc import Iterable


def _as_count(name: str, value: object) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a non-negative integer, got bool {value!r}")
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(
            f"{name} must be a non-negative integer, got {type(value).__name__} {value!r}"
        ) from None
    if count < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {count}")
    return int(count)


def scalar_multiply_count(batch_size: int, feature_count: int) -> int:
    """One multiplication per feature per row: ``batch_size * feature_count``, exact at any size."""
    return _as_count("batch_size", batch_size) * _as_count("feature_count", feature_count)


def scaling_table(batch_sizes: Iterable[int], feature_sizes: Iterable[int]) -> dict[int, list[int]]:
    """Multiply counts for every feature size (key) over every batch size (list, in order)."""
    batch_sizes = list(batch_sizes)
    return {
        _as_count("feature_count", features): [
            scalar_multiply_count(size, features) for size in batch_sizes
        ]
        for features in feature_sizes
    }
