"""One of the processes started by test_multiprocess.py (``python -m tests.multiprocess_worker``).

Started by testkit.supervised.run_supervised, it dies with the test (die_with_parent), joins the
others (examples.processes.join_from_environment), runs score_sharded on the
same inputs as every other process, and prints one ``RESULT {json}`` line with what it saw;
the test compares those lines, so that a failure shows every process's output.
"""

from __future__ import annotations

import json
import os

import jax
import jax.numpy as jnp
import numpy as np

from examples import BATCH, WEIGHTS, score_batch, score_sharded
from examples.processes import join_from_environment
from examples.sharding import gather_scores, layout_lines, row_mesh, shard_rows
from testkit.supervised import die_with_parent

from .scoring_cases import MALFORMED, float32_tolerance


def within_float32(scores: np.ndarray, batch: np.ndarray, weights: np.ndarray) -> bool:
    expected = np.asarray(score_batch(batch, weights))
    return bool(np.all(np.abs(scores - expected) <= float32_tolerance(batch, weights)))


def error_of(call) -> list[str] | None:
    try:
        call()
    except (TypeError, ValueError) as error:
        return [type(error).__name__, str(error)]
    return None


def uneven_float32() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1001)  # the same seed, so the same batch, in every process
    return rng.normal(size=(1001, 16)).astype(np.float32), rng.normal(size=16).astype(np.float32)


def main() -> None:
    die_with_parent()
    process_id, processes = join_from_environment()
    result: dict = {"process": process_id, "devices": jax.device_count()}
    result["local_devices"] = [f"{device.platform}:{device.id}" for device in jax.local_devices()]

    # The practice batch exactly as the page passes it: nested lists, and float64 numpy.
    practice = gather_scores(score_sharded(BATCH, WEIGHTS))
    result["practice_scores"] = practice.tolist()
    result["practice_as_score_batch"] = np.asarray(score_batch(BATCH, WEIGHTS)).tolist()
    result["practice_float64_numpy"] = gather_scores(
        score_sharded(np.array(BATCH), np.array(WEIGHTS))
    ).tolist()

    batch, weights = uneven_float32()
    scores = score_sharded(batch, weights)
    result["uneven_float32"] = {
        "shape": list(scores.shape),
        "replicated": scores.is_fully_replicated,  # padding sliced off: whole on every device
        "within_float32": within_float32(gather_scores(scores), batch, weights),
    }

    # A jax array on this process's first device, the same in every process.
    small = np.arange(39, dtype=np.float32).reshape(13, 3) / 7
    result["jax_array"] = within_float32(
        gather_scores(score_sharded(jnp.asarray(small), jnp.asarray(WEIGHTS))), small, WEIGHTS
    )
    # One jax array across processes, each process holding only its own rows.
    global_batch = jax.make_array_from_process_local_data(
        jax.sharding.NamedSharding(row_mesh(), jax.sharding.PartitionSpec("rows", None)),
        np.array_split(batch[:1000], processes)[process_id],
    )
    result["global_jax_array"] = within_float32(
        gather_scores(score_sharded(global_batch, weights)), batch[:1000], weights
    )
    result["dtypes"] = {
        dtype: within_float32(
            gather_scores(score_sharded((small * 5).astype(dtype), WEIGHTS)),
            (small * 5).astype(dtype).astype(np.float64),
            WEIGHTS,
        )
        for dtype in ["float16", "float32", "float64", "int8", "int64", "uint8"]
    }

    even = score_sharded(np.ones((16, 3)), WEIGHTS)
    result["even_layout"] = layout_lines(even)
    result["even_local_shards"] = [list(shard.data.shape) for shard in even.addressable_shards]
    result["uneven_layout"] = layout_lines(shard_rows(np.ones((13, 3)), row_mesh()))

    result["malformed"] = [
        error_of(lambda batch=batch, weights=weights: score_sharded(batch, weights))
        for batch, weights, _, _ in MALFORMED
    ]
    result["differing_batch"] = error_of(
        lambda: score_sharded(np.array(BATCH) + process_id, WEIGHTS)
    )
    result["differing_weights"] = error_of(
        lambda: score_sharded(BATCH, np.array(WEIGHTS) * (1 + process_id))
    )
    refused_here = process_id == processes - 1
    result["refused_in_one_process"] = error_of(
        lambda: score_sharded([[1.0, 2.0], [3.0]] if refused_here else BATCH, WEIGHTS)
    )
    # After every refusal, the processes still score together (none was left waiting).
    result["after_errors"] = gather_scores(score_sharded(BATCH, WEIGHTS)).tolist()

    print("RESULT " + json.dumps(result), flush=True)
    if os.environ.get("EXAMPLES_WORKER_EXIT_EARLY") == str(process_id):
        os._exit(3)  # a process that dies (the test of a crash): no clean shutdown
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
