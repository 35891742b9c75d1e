"""The argument checks of the exported functions that take sizes, counts, durations or a
measurement (``measure_turnaround``, ``measure_settings_sweep``, the counts, the findings, the
tables and the charts): each refusal names the argument and what was given.
"""

from __future__ import annotations

import numbers
import operator
from typing import Any


def as_count(name: str, value: object, minimum: int = 0) -> int:
    """``value`` as a Python int of at least ``minimum`` (a size, a count), or a refusal that
    names it: bool, floats and strings are not counts."""
    wanted = "a non-negative integer" if minimum == 0 else f"an integer >= {minimum}"
    if isinstance(value, bool):
        raise TypeError(f"{name} must be {wanted}, got bool {value!r}")
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be {wanted}, got {type(value).__name__} {value!r}") from None
    if count < minimum:
        raise ValueError(f"{name} must be {wanted}, got {count}")
    return int(count)


def as_counts(name: str, values: object) -> tuple[int, ...]:
    """A non-empty sequence of sizes, each an integer >= 1 (rows, features, settings)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, range)):
        raise TypeError(
            f"{name} must be a tuple or list of sizes (integers >= 1), "
            f"got {type(values).__name__} {values!r}"
        )
    if not values:
        raise ValueError(
            f"{name} must hold at least one size, got an empty {type(values).__name__}"
        )
    return tuple(as_count(f"{name}[{i}]", value, minimum=1) for i, value in enumerate(values))


def as_seconds(name: str, value: object) -> float:
    """A positive number of seconds (infinity allowed: no limit)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of seconds, got {type(value).__name__} {value!r}")
    if not value > 0:
        raise ValueError(f"{name} must be a number of seconds > 0, got {value!r}")
    return float(value)


def check_measured(name: str, value: Any, expected: type, made_by: str) -> None:
    """``value`` is an ``expected`` (what ``made_by`` returns) holding at least one measurement."""
    if not isinstance(value, expected):
        raise TypeError(
            f"{name} must be a {expected.__name__}, as {made_by} returns, "
            f"got {type(value).__name__}"
        )
    if not value.rows:
        raise ValueError(f"{name} holds no measurements (no rows): there is nothing to show")
