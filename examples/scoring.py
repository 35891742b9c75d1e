"""Two ways to score a batch with the same weights.

- ``score_one_by_one``: the CPU-like sequential path, one multiply-add at a time in plain Python.
- ``score_batch``: the GPU-like parallel path, ``jax.jit(jax.vmap(...))`` over the rows,
  run on whatever backend JAX finds (CPU here, GPU where there is one).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .float_range import for_jax
from .validation import check_batch_and_weights

# On a GPU, float32 matmul may run at reduced (TF32) precision by default; the course
# compares the batched scores with the one-by-one scores, so ask for full float32.
_PRECISION = jax.lax.Precision.HIGHEST


def score_one_by_one(batch: Any, weights: Any) -> list[float]:
    """Score each row with a Python loop of scalar multiply-adds (the sequential path).

    Checked like ``score_batch``, with the same errors (``examples/validation.py`` says what
    each kind of input becomes); the sums are Python floats (float64).
    """
    batch_array, weights_array = check_batch_and_weights(batch, weights)
    rows = batch_array.tolist()
    weight_values = weights_array.tolist()
    scores = []
    for row in rows:
        score = 0.0
        for x, w in zip(row, weight_values, strict=True):
            score += x * w
        scores.append(score)
    return scores


SHORT_ROW = 6
"""Rows with at most this many features are scored as a chain of multiply-adds (see below)."""


def score_row(row: jax.Array, weights: jax.Array) -> jax.Array:
    """One row's score, ``sum(row * weights)``: what ``score_batch`` and ``score_settings`` map."""
    features = row.shape[0]  # static under jit: the branch is chosen once per shape
    if features <= SHORT_ROW:
        # A dot over a few features compiles to a matrix-vector product that is slow on such
        # narrow rows (on this project's 2-core CPU, often half the speed or less at 3 to 6
        # features); the same multiply-adds written out fuse into one pass over the batch.
        # `make bench` compares score_batch with numpy at these sizes.
        score = row[0] * weights[0]
        for i in range(1, features):
            score = score + row[i] * weights[i]
        return score
    return jnp.dot(row, weights, precision=_PRECISION)


@jax.jit
def score_rows_unchecked(batch: jax.Array, weights: jax.Array) -> jax.Array:
    """The jitted ``vmap`` that ``score_batch`` runs, without its input checks."""
    # vmap maps the one-row score over axis 0 of the batch; the weights are shared (None).
    float_type = jnp.result_type(float)
    return jax.vmap(score_row, in_axes=(0, None))(
        batch.astype(float_type), weights.astype(float_type)
    )


def score_batch(batch: Any, weights: Any) -> jax.Array:
    """Score every row at once with ``jax.jit(jax.vmap(row score))`` (the batched path).

    Accepts nested lists, numpy arrays and jax arrays. A jax array stays on its device (its
    largest value is read once, on the host, for the range check);
    the result is a jax array of shape ``(rows,)`` on the same backend. Integers of any size
    are turned into floats on the host, never wrapped; bool is refused; a value or a score past
    the range of JAX's float type (float32; float64 where JAX's x64 mode is on) is refused
    with a ``ValueError`` naming its row; NaN and infinity flow into the scores they touch.
    """
    batch_array, weights_array = check_batch_and_weights(batch, weights)
    return score_rows_unchecked(for_jax(batch_array), for_jax(weights_array))
