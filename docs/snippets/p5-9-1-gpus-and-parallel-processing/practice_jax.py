# The practice through the course's `examples` package: the same batch, scored one by one in a
# Python loop and all at once with jax.jit(jax.vmap(...)) on whatever backend JAX finds.
import numpy as np

from examples import (
    BATCH,
    PROBE_BATCH_SIZES,
    PROBE_FEATURE_SIZES,
    WEIGHTS,
    rounded,
    scalar_multiply_count,
    scaling_table,
    score_batch,
    score_one_by_one,
)

batch = np.array(BATCH)  # 4 lines, 3 features each
weights = np.array(WEIGHTS)

scores_one_by_one = rounded(score_one_by_one(batch, weights))  # a Python loop, row by row
scores_batch = rounded(score_batch(batch, weights))  # jit(vmap(row score)) over the 4 lines
scaling = scaling_table(PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES)

print("batch shape =", batch.shape)
print("weights shape =", weights.shape)
print("scores_one_by_one =", scores_one_by_one)
print("scores_batch =", scores_batch)
print("scalar multiply count =", scalar_multiply_count(*batch.shape))
print("same result =", np.allclose(scores_one_by_one, scores_batch))
print("probe batch sizes =", list(PROBE_BATCH_SIZES))
for feature_count, counts in scaling.items():
    print(f"estimated scalar multiplies when feature count = {feature_count} =", counts)
