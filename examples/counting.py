"""How many scalar multiplications a batch of scores costs, as exact Python ints."""

from __future__ import annotations

from collections.abc import Iterable

from .arguments import as_count


def scalar_multiply_count(batch_size: int, feature_count: int) -> int:
    """One multiplication per feature per row: ``batch_size * feature_count``, exact at any size."""
    return as_count("batch_size", batch_size) * as_count("feature_count", feature_count)


def scaling_table(batch_sizes: Iterable[int], feature_sizes: Iterable[int]) -> dict[int, list[int]]:
    """Multiply counts for every feature size (key) over every batch size (list, in order)."""
    batch_sizes = _counts("batch_sizes", batch_sizes)
    return {
        features: [scalar_multiply_count(size, features) for size in batch_sizes]
        for features in _counts("feature_sizes", feature_sizes)
    }


def _counts(name: str, sizes: Iterable[int]) -> list[int]:
    """Each of ``sizes`` a non-negative int, named by its place (``feature_sizes[1]``)."""
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise TypeError(f"{name} must be a list of sizes, got {type(sizes).__name__} {sizes!r}")
    return [as_count(f"{name}[{i}]", size) for i, size in enumerate(sizes)]
