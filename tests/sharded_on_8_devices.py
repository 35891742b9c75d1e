"""score_sharded on 8 devices. Run by test_sharding.py in a process started with
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (the flag must be set before jax is
imported, so these checks cannot run in the main test process, which has 1 device)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from examples import score_batch, score_sharded
from examples.sharding import layout_lines, row_mesh, shard_rows

from .scoring_cases import MALFORMED, float32_tolerance

DEVICES = 8


def test_the_process_has_8_devices():
    assert jax.device_count() == DEVICES


def batch_of(rows: int, features: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(rows * 1000 + features)
    return rng.normal(size=(rows, features)), rng.normal(size=features)


@pytest.mark.parametrize("rows", [1, 3, 7, 8, 10, 13, 64, 1001])
@pytest.mark.parametrize("features", [3, 64])
def test_same_scores_as_score_batch(rows, features):
    batch, weights = batch_of(rows, features)
    scores = score_sharded(batch, weights)
    assert isinstance(scores, jax.Array)
    assert scores.shape == (rows,)
    # Both round to float32; summing 64 products in another order may differ in the last bits.
    difference = np.abs(np.asarray(scores) - np.asarray(score_batch(batch, weights)))
    assert np.all(difference <= float32_tolerance(batch, weights))


@pytest.mark.parametrize("rows", [8, 64, 4096])
def test_even_rows_stay_split_over_all_8_devices(rows):
    batch, weights = batch_of(rows, 3)
    scores = score_sharded(batch, weights)
    assert len(scores.sharding.device_set) == DEVICES
    assert (
        sorted(shard.data.shape for shard in scores.addressable_shards)
        == [(rows // DEVICES,)] * DEVICES
    )
    assert len(layout_lines(scores)) == DEVICES


@pytest.mark.parametrize("rows", [1, 10, 13, 1001])
def test_uneven_rows_are_padded_and_split_over_all_8_devices(rows):
    batch, _ = batch_of(rows, 3)
    sharded = shard_rows(batch, row_mesh())
    per_device = -(-rows // DEVICES)  # ceiling division
    assert len(sharded.sharding.device_set) == DEVICES
    assert [shard.data.shape for shard in sharded.addressable_shards] == [(per_device, 3)] * DEVICES
    np.testing.assert_array_equal(np.asarray(sharded)[:rows], batch.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(sharded)[rows:], 0)


def test_layout_lines_name_each_devices_rows():
    sharded = shard_rows(np.ones((16, 3), np.float32), row_mesh())
    assert layout_lines(sharded)[0] == "cpu:0 holds rows 0 to 1 (2 rows)"
    assert layout_lines(sharded)[-1] == "cpu:7 holds rows 14 to 15 (2 rows)"


@pytest.mark.parametrize(
    "convert",
    [lambda a: a.tolist(), np.asarray, jnp.asarray],
    ids=["nested-lists", "numpy", "jax-on-one-device"],
)
def test_accepts_lists_numpy_and_jax(convert):
    batch, weights = batch_of(11, 3)
    scores = score_sharded(convert(batch), convert(weights))
    np.testing.assert_allclose(np.asarray(scores), batch @ weights, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("batch", "weights", "error", "message"), MALFORMED)
def test_malformed_input_is_refused_like_score_batch(batch, weights, error, message):
    with pytest.raises(error, match=message):
        score_sharded(batch, weights)
