"""Every scoring path against numpy in float64, over every dtype a learner can pass, up to its
extremes: each path gives the oracle's scores within the rounding of JAX's float type, or
refuses the input with a ValueError that says it is past that type's range (never a wrapped
integer, a silent inf or a warning). Run here and, with JAX's x64 mode on, in a subprocess.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from examples import score_batch, score_one_by_one, score_settings, score_sharded

from .scoring_cases import passes_in_a_process_with

FLOAT = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))  # float32; float64 with x64 on
X64 = FLOAT.itemsize == 8
FINFO = np.finfo(FLOAT)

NUMPY_DTYPES = [
    *(np.dtype(f"int{bits}") for bits in (8, 16, 32, 64)),
    *(np.dtype(f"uint{bits}") for bits in (8, 16, 32, 64)),
    *(np.dtype(f"float{bits}") for bits in (16, 32, 64)),
]

PATHS = {
    "score_one_by_one": lambda batch, weights: np.array(score_one_by_one(batch, weights)),
    "score_batch": lambda batch, weights: np.asarray(score_batch(batch, weights)),
    "score_settings": lambda batch, weights: np.asarray(score_settings(batch, [weights]))[:, 0],
    "score_sharded": lambda batch, weights: np.asarray(score_sharded(batch, weights)),
}


def python_ints(bits: int):
    return st.integers(min_value=-(2**bits), max_value=2**bits)


@st.composite
def operands(draw, features: int, rows: int | None):
    """A numpy array of any dtype at its full range, or nested Python lists of ints or floats."""
    shape = (features,) if rows is None else (rows, features)
    kind = draw(st.sampled_from(["numpy", "python int", "python float"]))
    if kind == "numpy":
        return draw(hnp.arrays(draw(st.sampled_from(NUMPY_DTYPES)), shape))
    if kind == "python int":
        elements = python_ints(draw(st.sampled_from([8, 31, 40, 64, 100, 128, 1100])))
    else:
        elements = st.floats(width=64)
    return draw(hnp.arrays(object, shape, elements=elements)).tolist()


@st.composite
def batches_and_weights(draw):
    rows, features = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    return draw(operands(features, rows)), draw(operands(features, None))


def as_float64(values) -> np.ndarray | None:
    """Exactly what numpy computes with in float64; None for an int past float64's range."""
    try:
        return np.array(values, dtype=np.float64)
    except OverflowError:
        return None


def oracle(batch: np.ndarray, weights: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):  # inf - inf, inf * 0: NaN, as in every path
        return (batch * weights).sum(axis=1)


def finite_sizes(batch: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row, the sum of |x * w| over finite entries: how large a partial sum can get."""
    with np.errstate(all="ignore"):
        magnitudes = [np.where(np.isfinite(a), np.abs(a), 0.0) for a in (batch, weights)]
        return magnitudes[0] @ magnitudes[1]


def tolerance(batch: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The rounding of FLOAT: each input and product rounded (numbers nearer zero than its
    smallest normal number may be flushed to zero), and F additions."""
    features = batch.shape[1]
    x, w = (np.where(np.isfinite(a), np.abs(a), 0.0) for a in (batch, weights))
    with np.errstate(over="ignore"):  # past float64's range: any answer is within it
        rounding = 4 * (features + 2) * FINFO.eps * (x @ w)
        # an input flushed to 0 loses up to smallest_normal times its partner; a product, as much
        flushing = 2 * FINFO.smallest_normal * (x.sum(axis=1) + w.sum() + features)
    return rounding + flushing


def rounded(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to FLOAT, what is nearer zero than its smallest normal number as 0."""
    with np.errstate(all="ignore"):
        values = values.astype(FLOAT).astype(np.float64)
    return np.where(np.abs(values) < FINFO.smallest_normal, 0.0, values)


def past_range(batch, weights) -> bool | None:
    """True: past FLOAT's range, must be refused; False: well within it, must be scored;
    None: within the rounding of the boundary, either will do."""
    if batch is None or weights is None:
        return True
    finite = [a[np.isfinite(a)] for a in (batch, weights)]
    if any(np.abs(values).max(initial=0.0) > FINFO.max for values in finite):
        return True
    sizes = finite_sizes(batch, weights)
    if not np.all(sizes <= FINFO.max):  # NaN: the float64 sum itself overflowed
        return True
    if np.all(sizes <= FINFO.max * (1 - 64 * FINFO.eps)):
        return False
    return None


def check_path(path: str, batch, weights) -> None:
    batch64, weights64 = as_float64(batch), as_float64(weights)
    expected_refusal = past_range(batch64, weights64)
    try:
        scores = PATHS[path](batch, weights)
    except ValueError as error:
        assert expected_refusal is not False, f"{path} refused input within range: {error}"
        assert f"past the range of {FLOAT}" in str(error), str(error)
        return
    assert expected_refusal is not True, f"{path} scored input past {FLOAT}'s range: {scores}"
    expected = oracle(batch64, weights64)
    assert scores.shape == expected.shape
    special = ~np.isfinite(expected)
    # NaN and infinity flow through. A value that FLOAT rounds to 0 (1e-226 in float32) times
    # infinity is NaN there (0 * inf), as it is for numpy on the rounded inputs.
    as_rounded = oracle(rounded(batch64), rounded(weights64))
    for allowed in (expected, as_rounded):
        same = (scores == allowed) | (np.isnan(scores) & np.isnan(allowed))
        special &= ~same
    assert not special.any(), (path, scores, expected, as_rounded)
    finite = np.isfinite(expected)
    error = np.abs(scores[finite] - expected[finite])
    allowed = tolerance(batch64, weights64)[finite]
    assert np.all(error <= allowed), (path, scores, expected, error, allowed)


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=40, deadline=None)
@given(data=batches_and_weights())
def test_every_path_gives_numpys_float64_scores_or_refuses_past_the_range(path, data):
    check_path(path, *data)


# The cases found by hand (issue 33), each on every path.
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    ("batch", "weights"),
    [
        ([[3_000_000_000, 1, 1], [1, 2, 3]], [0.4, 0.8, -0.3]),  # wrapped to int32 before
        (np.array([[2**31, 0, 0]]), [1.0, 1.0, 1.0]),
        (np.array([[2**62, 0, 0]]), [0.5, 1.0, 1.0]),
        (np.array([[2**64 - 1, 1]], dtype=np.uint64), np.array([3, 2], dtype=np.uint64)),
        ([[10**30, 1, 1]], [0.4, 0.8, -0.3]),  # refused as non-numeric before
        ([[1e39, 1, 1]], [0.4, 0.8, -0.3]),  # inf and a RuntimeWarning from jax before
        ([[10**400, 1, 1]], [0.4, 0.8, -0.3]),
        ([[1e30, 1e30, 1]], [1e9, 1, 1]),  # every value in range, the score past it
        ([[np.nan, 1, np.inf]], [1, 2, 3]),
        (np.array([[-128, 127]], dtype=np.int8), np.array([-128, 127], dtype=np.int8)),
        (np.array([[65504, -65504]], dtype=np.float16), [65504.0, 65504.0]),
    ],
)
def test_the_cases_of_issue_33(path, batch, weights):
    check_path(path, batch, weights)


def test_a_jax_array_whose_scores_pass_float32_is_refused_every_time():
    if X64:
        pytest.skip("with x64 on, float64 holds these scores")
    batch, weights = jnp.array([[1e30, 1e30]]), jnp.array([1e30, 1.0])
    for _ in range(2):  # the second time from what was remembered of the array
        with pytest.raises(ValueError, match="batch row 0 would be past the range of float32"):
            score_batch(batch, weights)
    np.testing.assert_allclose(np.asarray(score_batch(batch / 1e30, weights)), [1e30], rtol=1e-6)


def test_the_x64_mode_gives_the_same_scores_or_refusals():
    if X64:
        pytest.skip("this is the x64 run")
    # Two CPU devices, so that score_sharded also splits (and pads) the rows there.
    passes_in_a_process_with(
        {
            "JAX_ENABLE_X64": "1",
            "JAX_PLATFORMS": "cpu",
            "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        },
        __file__,
        "-k",
        "not x64_mode and not jax_array_whose_scores_pass_float32",
    )


def test_a_scoring_function_can_still_be_traced_by_jit_and_vmap():
    batch, weights = jnp.ones((4, 3)), jnp.arange(3.0)
    np.testing.assert_array_equal(np.asarray(jax.jit(score_batch)(batch, weights)), [3.0] * 4)
    stacked = jax.vmap(score_batch, in_axes=(0, None))(jnp.ones((2, 4, 3)), weights)
    np.testing.assert_array_equal(np.asarray(stacked), [[3.0] * 4] * 2)
