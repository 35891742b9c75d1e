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

import functools
import math
import numbers
import operator
import weakref
from typing import Any

import jax
import numpy as np


def float_type() -> np.dtype:
    """The float type JAX computes in here: float32, or float64 where JAX's x64 mode is on."""
    return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))


def _check_numeric_dtype(name: str, dtype: np.dtype, given: Any) -> None:
    # dtype.kind: "i" signed, "u" unsigned, "f" floating; bool is "b", complex "c", str "U".
    # (The same test as np.issubdtype against integer and floating, at a fraction of its cost
    # per call, which small batches pay on every score.)
    if dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold real numbers (int or float), "
            f"got {type(given).__name__} holding dtype {dtype}"
        )


def _where(name: str, index: tuple[int, ...]) -> str:
    """``batch row 2, column 0``, ``weights[1]``: where a value sits, in the reader's words."""
    if len(index) == 2:
        return f"{name} row {index[0]}, column {index[1]}"
    return f"{name}[{', '.join(str(i) for i in index)}]"


def _short(value: Any) -> str:
    """A number in a few characters, even an int too large for any float."""
    try:
        return f"{float(value):.3g}"
    except OverflowError:
        return f"an integer of about 10**{int(int(value).bit_length() * math.log10(2))}"


_REAL = (int, float, np.integer, np.floating)


def _numbers_from_objects(name: str, array: np.ndarray, given: Any) -> np.ndarray:
    """A float64 array from an object array of numbers (what numpy makes of ints past 64 bits)."""
    values = np.empty(array.shape, dtype=np.float64)
    for index, entry in np.ndenumerate(array):
        if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, _REAL):
            raise TypeError(
                f"{name} must be rectangular and hold only numbers, got {type(given).__name__} "
                f"with mixed or non-numeric entries: {_where(name, index)} is {entry!r}"
            )
        try:
            values[index] = float(entry)
        except OverflowError:
            raise _past_range(name, index, entry, float_type()) from None
    return values


def _past_range(name: str, index: tuple[int, ...], value: Any, dtype: np.dtype) -> ValueError:
    return ValueError(
        f"{_where(name, index)} is {_short(value)}, past the range of {dtype} "
        f"(±{np.finfo(dtype).max:.2g}), the float type JAX computes in here: "
        f"{_larger_numbers(dtype)}"
    )


def _larger_numbers(dtype: np.dtype) -> str:
    """What a reader can do about a number too large for ``dtype``."""
    advice = "scale the values down"
    if dtype == np.float32:
        advice += ", or turn on JAX's 64-bit mode (JAX_ENABLE_X64=1) to score in float64"
    return advice


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


# The largest finite magnitude of each jax array checked, while it lives: reading it needs a
# reduction on the array's device and a wait for it, which would cost more than a small
# score_batch call itself; a jax array never changes, so once per array is enough.
_DEVICE_MAGNITUDES: dict[int, tuple[weakref.ref, float]] = {}


@jax.jit
def _device_magnitude(array: jax.Array) -> jax.Array:
    magnitudes = jax.numpy.abs(array.astype(jax.numpy.result_type(float)))  # |int32 min| wraps
    return jax.numpy.max(magnitudes, where=jax.numpy.isfinite(magnitudes), initial=0)


def _finite_magnitudes(array: Any) -> np.ndarray:
    """``|array|`` on the host in float64, with NaN and infinity counted as 0."""
    magnitudes = np.abs(np.asarray(array, dtype=np.float64))
    return np.where(np.isfinite(magnitudes), magnitudes, 0.0)


@functools.cache
def _range_of(dtype: np.dtype) -> tuple[float, float]:
    """The largest finite value and the epsilon of ``dtype``, as Python floats (comparing a
    Python float with float32's own max would cast it, and overflow)."""
    return float(np.finfo(dtype).max), float(np.finfo(dtype).eps)


def _on_device_magnitude(array: jax.Array) -> float | None:
    """The largest finite ``|value|`` of a jax array, remembered; None where it cannot be read:
    inside ``jax.jit`` or ``jax.vmap`` (no values while they trace), or one array across
    processes (each process checked its own input)."""
    key = id(array)
    known = _DEVICE_MAGNITUDES.get(key)
    if known is not None and known[0]() is array:
        return known[1]
    if isinstance(array, jax.core.Tracer) or not array.is_fully_addressable:
        return None
    largest = float(_device_magnitude(array))
    forget = weakref.ref(array, lambda _, key=key: _DEVICE_MAGNITUDES.pop(key, None))
    _DEVICE_MAGNITUDES[key] = (forget, largest)
    return largest


def _largest_magnitude(name: str, array: Any, dtype: np.dtype) -> float | None:
    """The largest finite ``|value|`` of ``array`` (0 when none is finite; None: unreadable).

    A finite value of a host array past the range of ``dtype`` is refused here, naming where
    it is (a jax array holds JAX's own types, and numpy's integers all fit in float32).
    """
    if isinstance(array, jax.Array):
        return _on_device_magnitude(array)
    if array.dtype.kind != "f":  # integers: |int64 min| does not fit int64, so in float
        return max(abs(float(array.max())), abs(float(array.min())))
    top, _ = _range_of(dtype)
    largest = float(np.abs(array).max())  # NaN if any is NaN
    if largest <= top:
        return largest
    magnitudes = np.abs(np.asarray(array, dtype=np.float64))  # float16 cannot hold top
    past = (magnitudes > top) & np.isfinite(magnitudes)  # infinity flows on
    if past.any():
        index = tuple(int(i) for i in np.argwhere(past)[0])
        raise _past_range(name, index, array[index], dtype)
    return float(_finite_magnitudes(array).max())


def _check_scores_in_range(batch: Any, settings_name: str, settings: Any) -> None:
    """Every value within the range of JAX's float type, and no score (rows x settings; 1-D
    weights are one setting) past it, in whatever order its products are added.

    A bound from the largest magnitudes settles almost every call at once; only a batch near
    the range is checked row by row.
    """
    dtype = float_type()
    largest_value = _largest_magnitude("batch", batch, dtype)
    largest_weight = _largest_magnitude(settings_name, settings, dtype)
    if largest_value is None or largest_weight is None:
        return
    features = batch.shape[1]
    # Adding F float terms may round each partial sum up by a relative eps: keep that margin.
    top, eps = _range_of(dtype)
    limit = top / (1 + features * eps)
    if largest_value * largest_weight * features <= limit:
        return
    weights = _finite_magnitudes(settings).reshape(-1, features)  # one weight vector: 1 x F
    with np.errstate(over="ignore"):  # a sum past float64's range is inf: refused below
        sizes = _finite_magnitudes(batch) @ weights.T  # rows x settings
    past = ~(sizes <= limit)
    if past.any():
        row, setting = (int(i) for i in np.argwhere(past)[0])
        under = f" under setting {setting}" if settings_name == "settings" else ""
        raise ValueError(
            f"the score of batch row {row}{under} would be past the range of {dtype} "
            f"(±{np.finfo(dtype).max:.2g}), the float type JAX computes in here: its products "
            f"add up to {_short(sizes[row, setting])} in size; {_larger_numbers(dtype)}"
        )


def for_jax(array: Any) -> Any:
    """A checked host array in JAX's float type, converted here, on the host (so no integer is
    ever wrapped to int32 on its way to the device); a jax array is left where it is."""
    if isinstance(array, jax.Array):
        return array
    return np.asarray(array, dtype=float_type())


def batch_for_jax(batch: Any) -> np.ndarray | jax.Array:
    """A checked batch, every value within range, in JAX's float type (for ``shard_rows``)."""
    batch_array = check_batch(batch)
    _largest_magnitude("batch", batch_array, float_type())  # refuses a value past the range
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
    _check_scores_in_range(batch_array, "weights", weights_array)
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
    _check_scores_in_range(batch_array, "settings", settings_array)
    return batch_array, settings_array


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
