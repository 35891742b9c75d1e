"""The batch split across every device JAX sees: the same score, the rows divided.

``score_sharded`` lays the batch's rows over a one-axis mesh of all ``jax.devices()`` and runs
the very function ``score_batch`` runs; XLA compiles it once for the whole mesh and each device
scores its own rows. One CPU, eight GPUs or, after ``jax.distributed.initialize()``, the GPUs of
several hosts: the program does not change, only the mesh it is given.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .scoring import score_rows_unchecked  # the jitted function score_batch runs
from .validation import check_batch_and_weights

ROWS = "rows"
"""The mesh's one axis: the batch's rows are split along it."""


def row_mesh(devices: list[jax.Device] | None = None) -> Mesh:
    """A one-axis mesh over ``devices`` (default: every device JAX sees)."""
    return Mesh(np.array(devices if devices is not None else jax.devices()), (ROWS,))


def shard_rows(batch: Any, mesh: Mesh) -> jax.Array:
    """Put ``batch`` on ``mesh``, its rows split evenly over the devices.

    A jax array must split evenly, so a row count that does not divide by the number of
    devices is padded with zero rows at the end (``score_sharded`` slices their scores off).
    """
    devices = mesh.devices.size
    padding = -batch.shape[0] % devices
    if padding:
        pad = ((0, padding), (0, 0))
        batch = np.pad(batch, pad) if isinstance(batch, np.ndarray) else jnp.pad(batch, pad)
    return jax.device_put(batch, NamedSharding(mesh, PartitionSpec(ROWS, None)))


def score_sharded(batch: Any, weights: Any) -> jax.Array:
    """Score every row like ``score_batch``, with the rows split across all ``jax.devices()``.

    Same checks, same errors, same values and shape ``(rows,)``. When the rows divide evenly
    by the number of devices the scores stay split the same way; otherwise the padded scores
    are sliced off and the result is gathered, whole, onto every device.
    """
    batch_array, weights_array = check_batch_and_weights(batch, weights)
    mesh = row_mesh()
    rows = batch_array.shape[0]
    sharded = shard_rows(batch_array, mesh)
    shared = jax.device_put(weights_array, NamedSharding(mesh, PartitionSpec()))
    scores = score_rows_unchecked(sharded, shared)
    return scores if scores.shape[0] == rows else scores[:rows]


def layout_lines(array: jax.Array) -> list[str]:
    """One line per device: which rows of ``array`` it holds, e.g. ``cpu:0 holds rows 0 to 3``."""
    lines = []
    for shard in sorted(array.addressable_shards, key=lambda shard: shard.device.id):
        start, stop, _ = shard.index[0].indices(array.shape[0])
        device = f"{shard.device.platform}:{shard.device.id}"
        lines.append(f"{device} holds rows {start} to {stop - 1} ({stop - start} rows)")
    return lines
