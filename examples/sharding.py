"""The batch split across every device JAX sees: the same score, the rows divided.

``score_sharded`` lays the batch's rows over a one-axis mesh of all ``jax.devices()`` and runs
the very function ``score_batch`` runs; XLA compiles it once for the whole mesh and each device
scores its own rows. One CPU, eight GPUs or, after ``jax.distributed.initialize()``, the devices
of several processes (one per host, or several on one machine): the program does not change,
only the mesh it is given. Across processes, every process calls ``score_sharded`` with the same
batch, and ``gather_scores`` gives each of them the whole result.
"""

from __future__ import annotations

import zlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .float_range import for_jax
from .scoring import score_rows_unchecked  # the jitted function score_batch runs
from .validation import batch_for_jax, check_batch_and_weights

ROWS = "rows"
"""The mesh's one axis: the batch's rows are split along it."""


def row_mesh(devices: list[jax.Device] | None = None) -> Mesh:
    """A one-axis mesh over ``devices`` (default: every device JAX sees, in every process)."""
    if devices is None:
        devices = jax.devices()
    if isinstance(devices, (str, bytes)) or not hasattr(devices, "__iter__"):
        raise TypeError(
            f"devices must be a list of jax devices (e.g. jax.devices()), "
            f"got {type(devices).__name__}"
        )
    devices = list(devices)
    if not devices:
        raise ValueError("devices must name at least one jax device, got an empty list")
    for device in devices:
        if not isinstance(device, jax.Device):
            raise TypeError(
                f"devices must be a list of jax devices (e.g. jax.devices()), "
                f"got a list holding {type(device).__name__}"
            )
    if len(set(devices)) != len(devices):
        raise ValueError("devices must name each device once: a device cannot hold two shares")
    return Mesh(np.array(devices), (ROWS,))


def _check_mesh(mesh: Any) -> None:
    if not isinstance(mesh, Mesh) or mesh.axis_names != (ROWS,):
        given = f"a mesh with axes {mesh.axis_names}" if isinstance(mesh, Mesh) else None
        raise TypeError(
            f"mesh must be a one-axis jax Mesh named {ROWS!r}, as row_mesh() makes, "
            f"got {given or type(mesh).__name__}"
        )


def _is_global(array: Any) -> bool:
    """A jax array that spans other processes' devices (one array across processes)."""
    return isinstance(array, jax.Array) and not array.is_fully_addressable


def _as_jax_sees_it(array: Any) -> np.ndarray:
    """``array`` on the host, in the dtype JAX itself would give it (float64 becomes float32
    unless ``jax_enable_x64`` is set, int64 int32): what ``score_batch``'s jit would receive."""
    host = np.asarray(array)
    return host.astype(jax.dtypes.canonicalize_dtype(host.dtype), copy=False)


def _from_each_process(host: np.ndarray, sharding: NamedSharding) -> jax.Array:
    """One global array from ``host``, which every process holds whole: each process puts only
    the slices its own devices hold, and nothing is sent between processes."""
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def _pad_rows(batch: jax.Array, padding: int) -> jax.Array:
    return jnp.pad(batch, ((0, padding), (0, 0)))


def shard_rows(batch: Any, mesh: Mesh) -> jax.Array:
    """Put ``batch`` on ``mesh``, its rows split evenly over the devices.

    A jax array must split evenly, so a row count that does not divide by the number of
    devices is padded with zero rows at the end (``score_sharded`` slices their scores off).
    When the mesh spans several processes, each process passes the same batch and puts only
    its own devices' rows; a batch that is already one array across processes is resharded.
    The batch is checked like ``score_batch``'s, and a host batch is put in JAX's float type
    (integers are never wrapped); ``mesh`` must be one ``row_mesh()`` makes.
    """
    _check_mesh(mesh)
    return _put_rows(batch_for_jax(batch), mesh)


def _put_rows(batch: Any, mesh: Mesh) -> jax.Array:
    """``shard_rows`` without its checks, for a batch already checked and in JAX's float type."""
    sharding = NamedSharding(mesh, PartitionSpec(ROWS, None))
    padding = -batch.shape[0] % mesh.devices.size
    if _is_global(batch):
        return jax.jit(_pad_rows, static_argnums=1, out_shardings=sharding)(batch, padding)
    if not sharding.is_fully_addressable:
        # Not jax.device_put: across processes it first asserts that every process passed the
        # same host data (multihost_utils.assert_equal), comparing this process's batch with a
        # gathered copy that JAX has already turned into float32, so a float64 batch such as
        # np.array(BATCH) never compares equal. Instead each process puts its own devices'
        # slices; score_sharded has checked that the batches agree (_check_every_process_agrees).
        host = _as_jax_sees_it(batch)
        if padding:
            host = np.pad(host, ((0, padding), (0, 0)))
        return _from_each_process(host, sharding)
    if padding:
        pad = ((0, padding), (0, 0))
        batch = np.pad(batch, pad) if isinstance(batch, np.ndarray) else jnp.pad(batch, pad)
    return jax.device_put(batch, sharding)


def _replicate(weights: Any, mesh: Mesh) -> jax.Array:
    """The weights, whole, on every device of ``mesh``."""
    sharding = NamedSharding(mesh, PartitionSpec())
    if sharding.is_fully_addressable or _is_global(weights):
        return jax.device_put(weights, sharding)
    return _from_each_process(_as_jax_sees_it(weights), sharding)


def _fingerprint(array: Any) -> list[int]:
    """Shape, dtype and a checksum of ``array`` as JAX sees it: equal in every process when
    every process passed the same values. A global array is one array by construction."""
    if _is_global(array):
        dtype, checksum = np.dtype(array.dtype), 0
    else:
        host = _as_jax_sees_it(array)
        dtype, checksum = host.dtype, zlib.crc32(np.ascontiguousarray(host).data)
    shape = list(array.shape) + [0] * (2 - array.ndim)
    return [*shape, ord(dtype.char), checksum]


def _describe(fingerprint: np.ndarray) -> str:
    rows, features, dtype, checksum = (int(value) for value in fingerprint)
    shape = (rows, features) if features else (rows,)
    return f"shape {shape}, {np.dtype(chr(dtype))}, checksum {checksum:08x}"


def _check_every_process_agrees(batch: Any, weights: Any) -> tuple[Any, Any]:
    """``check_batch_and_weights`` in every process, then the same batch and weights in all.

    Every process takes part even when its own input is refused, so that none is left waiting
    for the others: each then raises, its own error or one that names the process that refused.
    """
    try:
        batch_array, weights_array = check_batch_and_weights(batch, weights)
        refusal, mine = None, [1, *_fingerprint(batch_array), *_fingerprint(weights_array)]
    except (TypeError, ValueError) as error:
        refusal, mine = error, [0] * 9
    everyone = multihost_utils.process_allgather(np.array(mine, dtype=np.uint32))
    if refusal is not None:
        raise refusal
    refused = [process for process, row in enumerate(everyone) if not row[0]]
    if refused:
        raise ValueError(
            f"process {refused[0]} refused its batch or weights (its error says why): "
            "score_sharded must be given the same batch and weights in every process"
        )
    for name, columns in (("batch", slice(1, 5)), ("weights", slice(5, 9))):
        differ = [
            p for p, row in enumerate(everyone) if (row[columns] != everyone[0][columns]).any()
        ]
        if differ:
            raise ValueError(
                f"score_sharded must be given the same {name} in every process, but the "
                f"processes passed different {name}: process 0 passed "
                f"{_describe(everyone[0][columns])}, process {differ[0]} passed "
                f"{_describe(everyone[differ[0]][columns])}"
            )
    return batch_array, weights_array


def score_sharded(batch: Any, weights: Any) -> jax.Array:
    """Score every row like ``score_batch``, with the rows split across all ``jax.devices()``.

    Same checks, same errors, same values and shape ``(rows,)``. When the rows divide evenly
    by the number of devices the scores stay split the same way; otherwise the padded scores
    are sliced off and the result is gathered, whole, onto every device.

    After ``jax.distributed.initialize()`` the devices are those of every process, and every
    process must call ``score_sharded`` with the same batch and weights (nested lists, numpy
    arrays, jax arrays, or one jax array across processes). Each process then holds the scores
    of its own devices' rows; ``gather_scores(scores)`` gives every process all of them. Bad
    input is refused in every process: with ``score_batch``'s error where it was given, and a
    ``ValueError`` naming the process that refused in the others; a batch that differs between
    processes with a ``ValueError`` that says so.
    """
    if jax.process_count() > 1:
        batch_array, weights_array = _check_every_process_agrees(batch, weights)
    else:
        batch_array, weights_array = check_batch_and_weights(batch, weights)
    mesh = row_mesh()
    rows = batch_array.shape[0]
    scores = score_rows_unchecked(
        _put_rows(for_jax(batch_array), mesh), _replicate(for_jax(weights_array), mesh)
    )
    return scores if scores.shape[0] == rows else scores[:rows]


def _described(value: Any) -> str:
    if isinstance(value, jax.Array):
        return "a 0-D jax array"
    return type(value).__name__


def gather_scores(scores: jax.Array) -> np.ndarray:
    """All of ``scores`` as a numpy array, in every process (with one process: ``np.asarray``).

    Across processes, each holds only its own devices' scores; this gathers the rest from
    the others (``jax.experimental.multihost_utils.process_allgather``), so every process
    must call it.
    """
    if not isinstance(scores, jax.Array):
        raise TypeError(
            f"scores must be the jax array score_sharded returns, got {_described(scores)}"
        )
    if not _is_global(scores):
        return np.asarray(scores)
    return np.asarray(multihost_utils.process_allgather(scores, tiled=True))


def layout_lines(array: jax.Array) -> list[str]:
    """One line per device: which rows of ``array`` it holds, e.g. ``cpu:0 holds rows 0 to 3``.

    Every device of the array is listed, this process's and the others'; across processes
    each line starts with the process that owns the device, e.g. ``process 1, cpu:4 holds ...``.
    """
    if not isinstance(array, jax.Array) or array.ndim == 0:
        raise TypeError(
            "layout_lines needs a jax array of rows placed on devices (what shard_rows or "
            f"score_sharded gives), got {_described(array)}"
        )
    several = jax.process_count() > 1
    lines = []
    placement = array.sharding.devices_indices_map(array.shape)
    for device, index in sorted(placement.items(), key=lambda item: item[0].id):
        start, stop, _ = index[0].indices(array.shape[0])
        owner = f"process {device.process_index}, " if several else ""
        name = f"{device.platform}:{device.id}"
        lines.append(f"{owner}{name} holds rows {start} to {stop - 1} ({stop - start} rows)")
    return lines
