"""What JAX's float type can hold: float32, or float64 where JAX's x64 mode is on.

Every scoring path computes in that type. A value or a score past its range is refused here,
naming its row and column, rather than becoming infinity; host input is converted to it here,
on the host (``for_jax``), so that no integer is ever wrapped to int32 on its way to JAX.
``validation.py`` calls these after its checks of shape and type.
"""

from __future__ import annotations

import functools
import math
import weakref
from typing import Any

import jax
import numpy as np


def float_type() -> np.dtype:
    """The float type JAX computes in here: float32, or float64 where JAX's x64 mode is on."""
    return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))


def position(name: str, index: tuple[int, ...]) -> str:
    """``batch row 2, column 0``, ``weights[1]``: where a value sits, in the reader's words."""
    if len(index) == 2:
        return f"{name} row {index[0]}, column {index[1]}"
    return f"{name}[{', '.join(str(i) for i in index)}]"


def short_number(value: Any) -> str:
    """A number in a few characters, even an int too large for any float."""
    try:
        return f"{float(value):.3g}"
    except OverflowError:
        return f"an integer of about 10**{int(int(value).bit_length() * math.log10(2))}"


def past_range_error(name: str, index: tuple[int, ...], value: Any, dtype: np.dtype) -> ValueError:
    """The refusal of a value too large for ``dtype``, naming where it sits."""
    return ValueError(
        f"{position(name, index)} is {short_number(value)}, past the range of {dtype} "
        f"(±{np.finfo(dtype).max:.2g}), the float type JAX computes in here: "
        f"{_larger_numbers(dtype)}"
    )


def _larger_numbers(dtype: np.dtype) -> str:
    """What a reader can do about a number too large for ``dtype``."""
    advice = "scale the values down"
    if dtype == np.float32:
        advice += ", or turn on JAX's 64-bit mode (JAX_ENABLE_X64=1) to score in float64"
    return advice


def _finite_magnitudes(array: Any) -> np.ndarray:
    """``|array|`` on the host in float64, with NaN and infinity counted as 0."""
    magnitudes = np.abs(np.asarray(array, dtype=np.float64))
    return np.where(np.isfinite(magnitudes), magnitudes, 0.0)


@functools.cache
def _range_of(dtype: np.dtype) -> tuple[float, float]:
    """The largest finite value and the epsilon of ``dtype``, as Python floats (comparing a
    Python float with float32's own max would cast it, and overflow)."""
    return float(np.finfo(dtype).max), float(np.finfo(dtype).eps)


# The largest finite magnitude of each jax array read, while the array lives. Reading it on the
# device would compile a reduction for every new shape (more than doubling score_batch's first
# call); it is read on the host instead (a copy from a GPU), once per array: an array never
# changes, and a small score_batch call costs less than the read.
_JAX_ARRAY_MAGNITUDES: dict[int, tuple[weakref.ref, float]] = {}


def _jax_array_magnitude(array: jax.Array, dtype: np.dtype) -> float | None:
    """The largest finite ``|value|`` of a jax array, remembered; None where it cannot be read:
    inside ``jax.jit`` or ``jax.vmap`` (no values while they trace), or one array across
    processes (each process checked its own input)."""
    key = id(array)
    known = _JAX_ARRAY_MAGNITUDES.get(key)
    if known is not None and known[0]() is array:
        return known[1]
    if isinstance(array, jax.core.Tracer) or not array.is_fully_addressable:
        return None
    largest = _host_magnitude("array", np.asarray(array), dtype)
    forget = weakref.ref(array, lambda _, key=key: _JAX_ARRAY_MAGNITUDES.pop(key, None))
    _JAX_ARRAY_MAGNITUDES[key] = (forget, largest)
    return largest


def _host_magnitude(name: str, array: np.ndarray, dtype: np.dtype) -> float:
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
        raise past_range_error(name, index, array[index], dtype)
    return float(_finite_magnitudes(array).max())


def largest_magnitude(name: str, array: Any, dtype: np.dtype) -> float | None:
    """The largest finite ``|value|`` of ``array`` (0 when none is finite; None: unreadable).

    A finite value past the range of ``dtype`` is refused here, naming where it is.
    """
    if isinstance(array, jax.Array):
        return _jax_array_magnitude(array, dtype)
    return _host_magnitude(name, array, dtype)


def check_scores_in_range(batch: Any, settings_name: str, settings: Any) -> None:
    """Every value within the range of JAX's float type, and no score (rows x settings; 1-D
    weights are one setting) past it, in whatever order its products are added.

    A bound from the largest magnitudes settles almost every call at once; only a batch near
    the range is checked row by row.
    """
    dtype = float_type()
    largest_value = largest_magnitude("batch", batch, dtype)
    largest_weight = largest_magnitude(settings_name, settings, dtype)
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
            f"add up to {short_number(sizes[row, setting])} in size; {_larger_numbers(dtype)}"
        )


def for_jax(array: Any) -> Any:
    """A checked host array in JAX's float type, converted here, on the host (so no integer is
    ever wrapped to int32 on its way to the device); a jax array is left where it is."""
    if isinstance(array, jax.Array):
        return array
    return np.asarray(array, dtype=float_type())
