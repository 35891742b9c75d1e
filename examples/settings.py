"""Many weight settings against one batch in one call: the turnaround question, batched.

Trying K weight settings one by one is K calls of ``score_batch``, each paying the fixed cost
of a call. ``score_settings`` scores all of them in one jitted call: the same row score as
``score_batch``, mapped with ``jax.vmap`` over the rows and then over the settings, which XLA
turns into one matrix product, ``batch @ settings.T``.

The settings axis is the output's last axis (``out_axes=1``): scores come out rows x settings,
the layout of that product, so XLA writes them as they are computed. With the settings axis
first the same product must be written transposed, which ``make bench`` measures
(``benchmarks/settings_throughput.py``) and the page's sweep reports live.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .float_range import for_jax
from .scoring import score_row
from .validation import check_batch_and_settings

SETTINGS_AXIS = 1
"""Where the settings axis sits in ``score_settings``' output: last, so rows x settings."""


def _scorer(settings_axis: int):
    """The jitted double ``vmap``; ``settings_axis`` places the settings in the output."""

    def score(batch: jax.Array, settings: jax.Array) -> jax.Array:
        float_type = jnp.result_type(float)
        # Inner vmap: every row against one setting (score_batch's map, weights shared).
        # Outer vmap: every setting against the whole batch (the batch shared, None).
        by_rows = jax.vmap(score_row, in_axes=(0, None))
        by_settings = jax.vmap(by_rows, in_axes=(None, 0), out_axes=settings_axis)
        return by_settings(batch.astype(float_type), settings.astype(float_type))

    return jax.jit(score)


score_settings_unchecked = _scorer(SETTINGS_AXIS)
"""The jitted call ``score_settings`` runs, without its input checks (rows x settings)."""

score_settings_first_unchecked = _scorer(0)
"""The same map with the settings axis first (settings x rows): kept to measure the layout."""


def score_settings(batch: Any, settings: Any) -> jax.Array:
    """Score every row under every weight setting at once: a (rows x settings) jax array.

    ``settings`` holds one weight vector per row (settings x features); column ``k`` of the
    result equals ``score_batch(batch, settings[k])``. Accepts nested lists, numpy arrays and
    jax arrays, checked like ``score_batch``'s input and with the same errors: integers of any
    size become floats on the host, bool is refused, a value or score past the range of JAX's
    float type is refused naming its row and setting; NaN and infinity are not refused, they
    flow into the scores they touch, exactly as in ``score_batch``.
    """
    batch_array, settings_array = check_batch_and_settings(batch, settings)
    return score_settings_unchecked(for_jax(batch_array), for_jax(settings_array))


def settings_program(
    rows: int, features: int, settings: int, settings_axis: int = SETTINGS_AXIS
) -> list[str]:
    """The operations JAX hands to XLA for ``score_settings`` at these sizes, one a line.

    Read from the jaxpr of the jitted call (backend-independent), e.g. one
    ``dot_general f32[4000,16] f32[1000,16] -> f32[4000,1000]``: both vmaps became one product.
    ``settings_axis=0`` reads the settings-first variant instead.
    """
    scorer = score_settings_unchecked if settings_axis == SETTINGS_AXIS else _scorer(settings_axis)
    float_type = jnp.result_type(float)
    batch = jax.ShapeDtypeStruct((rows, features), float_type)
    weights = jax.ShapeDtypeStruct((settings, features), float_type)
    (jitted,) = jax.make_jaxpr(scorer)(batch, weights).eqns  # the one jitted call
    body = jitted.params["jaxpr"].jaxpr
    return [
        " ".join(
            [
                equation.primitive.name,
                *(str(var.aval.str_short()) for var in equation.invars),
                "->",
                *(str(var.aval.str_short()) for var in equation.outvars),
            ]
        )
        for equation in body.eqns
    ]
