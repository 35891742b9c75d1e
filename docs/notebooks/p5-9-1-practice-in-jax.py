# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # P5-9.1 practice in JAX: loop, vmap, jit(vmap)
#
# The practice of section P5-9.1, step by step in JAX: score the 4 factory lines one row at a
# time in a Python loop, then let `jax.vmap` map the same row score over the whole batch, then
# compile that batched function with `jax.jit`. Every step must give the same 4 scores; what
# changes is how the computation is organized. The last step tries several weight settings,
# first in a loop, then with one more `vmap`, over the settings. Run the cells in order: each
# one uses the names the cells above it defined.
#
# The first code cell sets up what the others need. Where this version's package is missing, as
# in a fresh Colab runtime, it installs it from the site, as this line does in a terminal:
# `{{ install.command }}`, and where an NVIDIA GPU is present, with the GPU extra:
# `{{ install.gpu_command }}`. Where the package is installed, it only says where JAX runs.

# %%
# Set-up: installs this version's package where it is missing, then says where JAX runs.
import importlib
import importlib.metadata
import shutil
import subprocess
import sys

PACKAGE = "{{ install.requirement }}"  # this version's wheel, on the site; pip checks its hash
GPU_PACKAGE = "{{ install.gpu_requirement }}"  # the same, with JAX's CUDA plugin


def nvidia_gpu_present():
    if shutil.which("nvidia-smi") is None:
        return False
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    return any(line.startswith("GPU ") for line in listed.splitlines())


try:  # the course's package, where it is installed
    import examples  # noqa: F401

    missing = False
except ImportError:
    missing = True

if missing:  # the GPU extra where an NVIDIA GPU is present
    package = GPU_PACKAGE if nvidia_gpu_present() else PACKAGE
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", package], check=True)
    importlib.invalidate_caches()
    # An import from before the install is kept as it was: numpy first (jax imports it).
    import numpy

    stale = "numpy" if numpy.__version__ != importlib.metadata.version("numpy") else None
    if stale is None:
        import jax

        stale = "jax" if jax.__version__ != importlib.metadata.version("jax") else None
    if stale:  # never run on a mix of two versions
        raise RuntimeError(
            f"This runtime had already imported {stale} at another version. Restart it (in "
            "Colab: Runtime > Restart session), then run this notebook again from the top."
        )

import jax

print("JAX runs on:", jax.default_backend(), jax.devices())

# %%
import jax
import jax.numpy as jnp

from examples import (
    BATCH,
    PROBE_BATCH_SIZES,
    PROBE_FEATURE_SIZES,
    WEIGHTS,
    backend_report,
    rounded,
    scaling_table,
    score_batch,
    score_one_by_one,
    score_settings,
)

batch = jnp.array(BATCH)  # 4 lines x 3 features
weights = jnp.array(WEIGHTS)  # one weight per feature, shared by every line
print("batch shape =", batch.shape)
print("weights shape =", weights.shape)


# %% [markdown]
# ## 1. One row at a time: a Python loop
#
# The score of one line is a dot product of its 3 features with the 3 weights. A Python loop
# calls it once per line, one after another.


# %%
def score_row(row, weights):
    # Full float32 on every backend (a GPU may otherwise round matmuls to TF32).
    return jnp.dot(row, weights, precision=jax.lax.Precision.HIGHEST)


scores_loop = [score_row(row, weights) for row in batch]
print("scores_loop =", rounded(scores_loop))
print("score_one_by_one =", rounded(score_one_by_one(BATCH, WEIGHTS)))

# %% [markdown]
# ## 2. The whole batch at once: vmap
#
# `jax.vmap` turns the one-row function into a batched one. `in_axes=(0, None)` says: map
# over axis 0 of the first argument (one row after another), and give every row the same
# second argument (the weights are shared, not mapped).

# %%
score_rows = jax.vmap(score_row, in_axes=(0, None))
scores_vmap = score_rows(batch, weights)
print("scores_vmap shape =", scores_vmap.shape)
print("scores_vmap =", rounded(scores_vmap))

# %% [markdown]
# ## 3. Compiled: jit(vmap)
#
# `jax.jit` compiles the batched function for the backend JAX found (CPU, or a GPU where there
# is one). The first call compiles; later calls with the same shapes reuse the compiled code.
# The course package's `score_batch` is this same `jit(vmap)` over the rows.

# %%
fast_score_rows = jax.jit(score_rows)
scores_jit = fast_score_rows(batch, weights)
print("scores_jit =", rounded(scores_jit))
print("score_batch =", rounded(score_batch(batch, weights)))
print("same result =", rounded(scores_loop) == rounded(scores_vmap) == rounded(scores_jit))

# %% [markdown]
# ## 4. How the multiply count grows
#
# Each score costs one multiplication per feature, so a batch costs `batch size x feature
# count` scalar multiplications. The table grows with both: that repeated, identical work is
# what a GPU spreads across its many cores.

# %%
table = scaling_table(PROBE_BATCH_SIZES, PROBE_FEATURE_SIZES)
print("probe batch sizes =", list(PROBE_BATCH_SIZES))
for feature_count, counts in table.items():
    print(f"estimated scalar multiplies when feature count = {feature_count} =", counts)

# %% [markdown]
# ## 5. Many weight settings: a loop, then vmap over the settings
#
# An experiment tries weight settings. Trying them one by one is a loop: one batched call per
# setting. `vmap` can map over the settings too: `in_axes=(None, 0)` shares the batch (`None`)
# and maps over axis 0 of the settings, one setting after another. `out_axes=1` puts the
# settings axis last, so the result is lines x settings. The course package's
# `score_settings` is this same map, compiled with `jit`.

# %%
settings = jnp.array(
    [WEIGHTS, [0.5, 0.5, 0.5], [0.4, 0.8, 0.0], [1.0, 0.0, -1.0]]
)  # 4 settings x 3 weights
scores_per_setting = [rounded(fast_score_rows(batch, w)) for w in settings]

score_settings_vmap = jax.vmap(score_rows, in_axes=(None, 0), out_axes=1)
scores_all = score_settings_vmap(batch, settings)  # lines x settings
print("scores_all shape =", scores_all.shape)
for k, scores in enumerate(scores_per_setting):
    print(f"setting {k}: loop = {scores}, vmap = {rounded(scores_all[:, k])}")
columns = [rounded(column) for column in scores_all.T]
print("same scores =", columns == scores_per_setting)
from_package = score_settings(batch, settings)  # the same map, jitted
print("score_settings, same =", [rounded(c) for c in from_package.T] == columns)

# %% [markdown]
# ## Where this ran

# %%
print(backend_report().label())
