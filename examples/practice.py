"""The section's practice, computed through this package: the manuscript's 9 output lines."""

from __future__ import annotations

import numpy as np

from .counting import scalar_multiply_count, scaling_table
from .data import BATCH, PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES, WEIGHTS
from .scoring import score_batch, score_one_by_one
from .validation import as_array


def rounded(scores) -> list[float]:
    """Scores rounded to 3 places as plain Python floats (prints ``0.35``, not ``0.35000002``).

    ``scores`` is one score per row: a list, or a 1-D numpy or jax array (what the scoring
    functions return).
    """
    values = as_array("scores", scores)
    if values.ndim != 1:
        raise ValueError(
            f"scores must be 1-D (one score per row), got {values.ndim}-D with shape "
            f"{tuple(values.shape)}: round each column on its own, e.g. [rounded(c) for c in s.T]"
        )
    return [round(float(score), 3) for score in np.asarray(values).tolist()]


def practice_lines() -> list[str]:
    """Score the manuscript batch one by one and as a batch; report both and the counts."""
    batch = np.array(BATCH)
    weights = np.array(WEIGHTS)
    scores_one_by_one = rounded(score_one_by_one(batch, weights))
    scores_batch = rounded(score_batch(batch, weights))
    table = scaling_table(PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES)
    return [
        f"batch shape = {batch.shape}",
        f"weights shape = {weights.shape}",
        f"scores_one_by_one = {scores_one_by_one}",
        f"scores_batch = {scores_batch}",
        f"scalar multiply count = {scalar_multiply_count(*batch.shape)}",
        f"same result = {bool(np.allclose(scores_one_by_one, scores_batch))}",
        f"probe batch sizes = {list(PROBE_BATCH_SIZES)}",
        *(
            f"estimated scalar multiplies when feature count = {features} = {counts}"
            for features, counts in table.items()
        ),
    ]


def prose_numbers() -> dict[str, int]:
    """The numbers the section's prose quotes about the practice, computed from its data."""
    lines, features = len(BATCH), len(BATCH[0])
    return {
        "lines": lines,
        "features": features,
        "weights": len(WEIGHTS),
        "multiply_count": scalar_multiply_count(lines, features),
    }
