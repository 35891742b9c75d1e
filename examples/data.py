"""The manuscript's data: 4 factory lines x 3 sensor features, one shared weight vector.

Kept as tuples so that no caller can change the course's data by accident.
"""

BATCH: tuple[tuple[float, ...], ...] = (
    (1.0, 0.5, 2.0),
    (0.2, 1.5, 0.3),
    (1.2, 0.1, 0.7),
    (0.0, 2.0, 1.0),
)
"""4 lines, 3 features each (rows x features)."""

WEIGHTS: tuple[float, ...] = (0.4, 0.8, -0.3)
"""One weight per feature, applied in common to every line."""

PROBE_BATCH_SIZES: tuple[int, ...] = (4, 8, 16, 32)
"""Batch sizes the practice probes when it estimates the multiply count."""

PROBE_FEATURE_SIZES: tuple[int, ...] = (3, 6)
"""Feature counts the practice probes when it estimates the multiply count."""
